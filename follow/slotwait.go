package follow

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
)

// SlotWait says that creating a logical slot waits on transactions. The server
// builds the slot's snapshot only once every transaction that had written when
// the creation began has ended, in any database of the server: one left open
// (idle in transaction, a long batch, a forgotten prepared transaction) holds
// the creation, and with it the follow's start, until it ends.
// https://www.postgresql.org/docs/current/logicaldecoding-explanation.html#LOGICALDECODING-REPLICATION-SLOTS
type SlotWait struct {
	Slot     string
	Waited   time.Duration
	Blockers []Blocker
}

// Blocker is one session a slot's creation waits on, as pg_stat_activity
// shows it; what a role without pg_read_all_stats may not see of another
// role's session is empty.
type Blocker struct {
	// PID is the backend's process ID; 0 stands for prepared transactions
	// (pg_prepared_xacts lists them), of which nothing else is known.
	PID                   int32
	Database, User, State string
	// Since is when the transaction began (zero: not shown); Query its
	// session's latest statement, cut to 200 characters.
	Since time.Time
	Query string
}

// Slot-wait reports: the first after slotWaitFirst of waiting, then when
// the transactions waited on change, or slotWaitEvery after the last.
const (
	slotWaitFirst = 2 * time.Second
	slotWaitPoll  = time.Second
	slotWaitEvery = 30 * time.Second
)

// createSlot runs CREATE_REPLICATION_SLOT for name with an exported snapshot,
// reporting to onWait while it waits on other transactions (nil: no report).
func (s *Stream) createSlot(ctx context.Context, name string, temporary bool, onWait func(SlotWait)) (Slot, error) {
	what := "create replication slot "
	if temporary {
		what = "create temporary replication slot "
	}
	stop := s.reportSlotWait(ctx, name, onWait)
	res, err := pglogrepl.CreateReplicationSlot(ctx, s.conn, quoteSlot(name), "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Temporary: temporary, SnapshotAction: "EXPORT_SNAPSHOT", Mode: pglogrepl.LogicalReplication})
	stop()
	if err != nil {
		return Slot{}, fmt.Errorf("%s%s: %w", what, name, err)
	}
	lsn, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return Slot{}, fmt.Errorf("%s%s: consistent point: %w", what, name, err)
	}
	return Slot{Name: name, Consistent: lsn, Snapshot: res.SnapshotName}, nil
}

// reportSlotWait watches, on a connection of its own, what the replication
// connection's backend waits on (pg_blocking_pids) until the returned stop is
// called. A failure to watch is no failure of the creation: it stops watching.
func (s *Stream) reportSlotWait(ctx context.Context, slot string, onWait func(SlotWait)) (stop func()) {
	if onWait == nil {
		return func() {}
	}
	began, backend := time.Now(), s.conn.PID()
	stop, _ = background(ctx, func(ctx context.Context) {
		var conn *pgconn.PgConn
		defer func() {
			if conn != nil {
				conn.Close(context.Background())
			}
		}()
		var last []int32 // the PIDs last reported
		var lastAt time.Time
		wait := slotWaitFirst
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = slotWaitPoll
			if conn == nil {
				cfg := s.cfg.Copy()
				delete(cfg.RuntimeParams, "replication")
				cfg.RuntimeParams["application_name"] = "pg2dynamo follow (slot creation)"
				var err error
				if conn, err = pgconn.ConnectConfig(ctx, cfg); err != nil {
					return
				}
			}
			blockers, err := slotBlockers(ctx, conn, backend)
			if err != nil {
				return
			}
			if len(blockers) == 0 {
				continue
			}
			pids := make([]int32, len(blockers))
			for i, b := range blockers {
				pids[i] = b.PID
			}
			if slices.Equal(pids, last) && time.Since(lastAt) < slotWaitEvery {
				continue
			}
			last, lastAt = pids, time.Now()
			onWait(SlotWait{Slot: slot, Waited: time.Since(began), Blockers: blockers})
		}
	})
	return stop
}

// slotBlockersQuery lists the sessions backend waits on, each once in PID order
// (a report compares them with the last); prepared transactions are a zero PID
// (pg_blocking_pids), which pg_stat_activity lacks.
// https://www.postgresql.org/docs/current/functions-info.html#FUNCTIONS-INFO-SESSION
const slotBlockersQuery = `
SELECT b.pid::text, coalesce(a.datname, ''), coalesce(a.usename, ''), coalesce(a.state, ''),
       coalesce(to_char(a.xact_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), ''), coalesce(left(a.query, 200), '')
  FROM (SELECT DISTINCT unnest(pg_blocking_pids(%d)) AS pid) b LEFT JOIN pg_stat_activity a ON a.pid = b.pid AND b.pid <> 0
 ORDER BY b.pid`

func slotBlockers(ctx context.Context, conn *pgconn.PgConn, backend uint32) ([]Blocker, error) {
	res, err := conn.Exec(ctx, fmt.Sprintf(slotBlockersQuery, backend)).ReadAll()
	if err != nil || len(res) == 0 {
		return nil, err
	}
	var out []Blocker
	for _, row := range res[0].Rows {
		pid, err := strconv.ParseInt(string(row[0]), 10, 32)
		if err != nil {
			return nil, err
		}
		b := Blocker{PID: int32(pid), Database: string(row[1]), User: string(row[2]), State: string(row[3]), Query: string(row[5])}
		if len(row[4]) > 0 {
			if b.Since, err = time.Parse(time.RFC3339Nano, string(row[4])); err != nil {
				return nil, err
			}
		}
		out = append(out, b)
	}
	return out, nil
}
