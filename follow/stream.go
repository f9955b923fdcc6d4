// Package follow keeps a DynamoDB table in step with PostgreSQL after the
// full load: it reads the source's changes through logical replication
// (PostgreSQL's pgoutput plugin, over a publication of the mapping's
// tables, from a replication slot), finds for each changed row the items
// it affects through the mapping (the entity's own items and mirrors, the
// parents that embed or aggregate it, the children that duplicate from
// it), derives those items again from the source, and puts them, or
// deletes the items whose source rows are gone.
//
// The handoff from the full load is gap-free: the slot is created with an
// exported snapshot (CREATE_REPLICATION_SLOT … EXPORT_SNAPSHOT), the full
// load reads that snapshot, and streaming starts at the slot's consistent
// point, so every change committed after the snapshot arrives and none
// before it is needed.
// https://www.postgresql.org/docs/current/protocol-replication.html
package follow

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pg2dynamo/pg2dynamo/extract"
)

// Change is one row change of a transaction, its values in PostgreSQL's
// text form (the type's output function, under extract.SessionSettings).
type Change struct {
	// Rel is the changed table's OID, which a rename keeps; Schema and
	// Table name it as the stream last described it.
	Rel           uint32
	Schema, Table string
	// Kind is 'I' (insert), 'U' (update) or 'D' (delete).
	Kind byte
	// Old is the old row image (update, delete) as the table's replica
	// identity gives it: the identity's columns, or all with REPLICA
	// IDENTITY FULL; nil when PostgreSQL sent none (an update that did not
	// change the identity). New is the new row (insert, update). A column
	// absent from a map was not sent (an unchanged TOASTed value); a nil
	// value is NULL.
	Old, New map[string]*string
}

// Tx is one committed transaction's changes, in commit order, or a part
// of them: a transaction of more than Stream.MaxChanges changes comes in
// parts of that many, so that memory holds a part, not the transaction.
// Every part is committed (pgoutput's protocol 1 sends a transaction once
// it commits), so each can be applied as it comes; only the last one
// ends the transaction.
type Tx struct {
	// Commit is the LSN of the commit record; End the LSN just after the
	// transaction, which the slot is told once the transaction is
	// applied (0 in a part that is not the last: Partial).
	Commit, End pglogrepl.LSN
	// Xid is the transaction's ID (32 bits, as pgoutput sends it).
	Xid     uint32
	Partial bool
	Time    time.Time
	Changes []Change
	// Relations are the descriptions of tables pgoutput sent before this
	// part's changes: at a table's first change in the session and after
	// its definition changed (ALTER TABLE: columns, replica identity,
	// name). Truncated are the OIDs of the tables a TRUNCATE emptied.
	Relations []*pglogrepl.RelationMessage
	Truncated []uint32
	// DDL are the DDL commands the transaction ran, as DDL capture
	// recorded them (in the order run), when the follow streams them
	// (Stream.DDL).
	DDL []DDLEvent
}

// Stream is a logical replication connection to the source: it creates
// and drops slots, and streams a slot's committed transactions.
type Stream struct {
	// mu serializes the connection's use: Receive (the run's goroutine)
	// and the status updates KeepAlive sends while a window is applied.
	// It also guards flushed and nextStatus.
	mu   sync.Mutex
	conn *pgconn.PgConn
	cfg  *pgconn.Config
	slot string
	// relations are the tables pgoutput described, by relation ID.
	relations map[uint32]*pglogrepl.RelationMessage
	cur       *Tx
	// flushed is the position acknowledged (Ack), reported to the server
	// in standby status updates; serverEnd the server's WAL end as last
	// reported.
	flushed, serverEnd pglogrepl.LSN
	// sent is the WAL position up to which the walsender reported, in a
	// keepalive, having decoded and sent.
	sent       pglogrepl.LSN
	nextStatus time.Time
	// interval is the time between status updates (StatusInterval, or
	// less under a short wal_sender_timeout).
	interval time.Duration
	// MaxChanges is the most changes of a transaction Receive holds
	// before it returns them as a part (Tx.Partial); 0: no limit.
	MaxChanges int
	// DDL makes Start stream DDLPublication too, whose rows Receive
	// returns as Tx.DDL: set it only when the publication existed before
	// the slot was created (pgoutput fails on a publication its
	// historic catalog does not have).
	DDL bool
}

// StatusInterval is how often the follow reports the position applied to
// the server (and so how often the server hears the client is alive):
// at most this, and at most a quarter of the server's wal_sender_timeout
// (60 s by default), past which the server ends a silent connection.
// https://www.postgresql.org/docs/current/runtime-config-replication.html#GUC-WAL-SENDER-TIMEOUT
const StatusInterval = 5 * time.Second

// Dial opens a replication connection (replication=database) to the
// database of connString, with the session settings every pg2dynamo
// session pins (extract.SessionSettings), given as startup parameters so
// that pgoutput prints values as the full load reads them.
func Dial(ctx context.Context, connString string) (*Stream, error) {
	cfg, err := pgconn.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = extract.DefaultConnectTimeout
	}
	cfg.RuntimeParams["replication"] = "database"
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "pg2dynamo follow"
	}
	for _, s := range extract.SessionSettings {
		cfg.RuntimeParams[s.Name] = s.Value
	}
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("replication connection to %s:%d/%s: %w", cfg.Host, cfg.Port, cfg.Database, err)
	}
	s := &Stream{conn: conn, cfg: cfg, relations: map[uint32]*pglogrepl.RelationMessage{}, interval: StatusInterval}
	timeout, err := senderTimeout(ctx, conn)
	if err != nil {
		conn.Close(ctx)
		return nil, err
	}
	if timeout > 0 {
		s.interval = max(min(StatusInterval, timeout/4), 100*time.Millisecond)
	}
	return s, nil
}

// senderTimeout reads the session's wal_sender_timeout (0: none), which
// SHOW prints with its unit: 0, 500ms, 10s, 1min, 2h, 1d.
func senderTimeout(ctx context.Context, conn *pgconn.PgConn) (time.Duration, error) {
	res, err := conn.Exec(ctx, "SHOW wal_sender_timeout").ReadAll()
	if err != nil {
		return 0, fmt.Errorf("wal_sender_timeout: %w", err)
	}
	if len(res) == 0 || len(res[0].Rows) == 0 {
		return 0, nil
	}
	return parseSetting(string(res[0].Rows[0][0]))
}

// parseSetting parses a time setting as SHOW prints it (a number and a
// unit, milliseconds when none).
func parseSetting(v string) (time.Duration, error) {
	i := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	num, unit := v, "ms"
	if i >= 0 {
		num, unit = v[:i], v[i:]
	}
	n, err := strconv.ParseInt(num, 10, 64)
	units := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour}
	u, ok := units[unit]
	if err != nil || !ok {
		return 0, fmt.Errorf("wal_sender_timeout %q: expected a number and one of us, ms, s, min, h, d", v)
	}
	return time.Duration(n) * u, nil
}

// Interval is the time between two status updates (see StatusInterval).
func (s *Stream) Interval() time.Duration { return s.interval }

// KeepAlive sends the server a status update every Interval from its own
// goroutine, until stop is called: while a window is applied (read from
// the source, written to the table) for longer than wal_sender_timeout,
// the walsender still hears from the client and does not end the
// connection. The updates report the position acknowledged, never a
// window in flight. When one fails (the connection is lost: the
// walsender ended, the server restarted), KeepAlive calls lost with the
// error and sends no more, so that a window being applied then stops at
// once rather than when it is written.
func (s *Stream) KeepAlive(ctx context.Context, lost func(error)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(s.interval / 2)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := s.status(ctx, false); err != nil && ctx.Err() == nil {
					lost(fmt.Errorf("the replication connection is lost: %w", err))
					return
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// Close closes the connection; the slot stays.
func (s *Stream) Close(ctx context.Context) error { return s.conn.Close(ctx) }

// Slot is a replication slot just created: its consistent point, and the
// snapshot exported at it, valid until the Stream runs another command.
type Slot struct {
	Name       string
	Consistent pglogrepl.LSN
	Snapshot   string
}

// CreateSlot creates the logical replication slot name with the pgoutput
// plugin and exports a snapshot at its consistent point. The snapshot is
// importable (extract.Source.BeginAt) until s runs another command: begin
// every reader of the full load before StartReplication.
func (s *Stream) CreateSlot(ctx context.Context, name string) (Slot, error) {
	res, err := pglogrepl.CreateReplicationSlot(ctx, s.conn, quoteSlot(name), "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{SnapshotAction: "EXPORT_SNAPSHOT", Mode: pglogrepl.LogicalReplication})
	if err != nil {
		return Slot{}, fmt.Errorf("create replication slot %s: %w", name, err)
	}
	lsn, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return Slot{}, fmt.Errorf("create replication slot %s: consistent point: %w", name, err)
	}
	return Slot{Name: name, Consistent: lsn, Snapshot: res.SnapshotName}, nil
}

// quoteSlot quotes a slot name for the replication protocol's commands.
// Slot names are lower-case letters, digits and underscores (CheckSlot).
func quoteSlot(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// SlotBusyWait is how long Start waits for a slot another connection
// still holds: after a crash, the server lets the dead client's walsender
// go once it notices the connection is gone.
const SlotBusyWait = 30 * time.Second

// Start starts streaming slot's changes of publication from position
// from (0: where the slot's confirmed position is). pgoutput protocol
// version 1: whole transactions, sent at commit. A slot still active for
// another connection (SQLSTATE 55006) is waited for, up to SlotBusyWait,
// on a new connection each try.
func (s *Stream) Start(ctx context.Context, slot, publication string, from pglogrepl.LSN) error {
	deadline := time.Now().Add(SlotBusyWait)
	for {
		err := pglogrepl.StartReplication(ctx, s.conn, quoteSlot(slot), from, pglogrepl.StartReplicationOptions{
			Mode:       pglogrepl.LogicalReplication,
			PluginArgs: []string{"proto_version '1'", "publication_names " + publicationNames(publication, s.DDL)},
		})
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "55006" && time.Now().Before(deadline) {
			s.conn.Close(ctx)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
			if s.conn, err = pgconn.ConnectConfig(ctx, s.cfg); err != nil {
				return fmt.Errorf("start replication from slot %s: %w", slot, err)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("start replication from slot %s: %w", slot, err)
		}
		break
	}
	s.mu.Lock()
	s.slot, s.flushed = slot, from
	s.mu.Unlock()
	return nil
}

// Ack records that every transaction ending at or before lsn is applied:
// the next status update tells the server, which may then recycle the
// WAL before it. Acknowledge only what the table holds.
func (s *Stream) Ack(lsn pglogrepl.LSN) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if lsn > s.flushed {
		s.flushed = lsn
	}
}

// ServerEnd is the server's WAL end as it last reported it: the lag in
// bytes is ServerEnd − the position applied.
func (s *Stream) ServerEnd() pglogrepl.LSN { return s.serverEnd }

// Receive returns the next committed transaction, or nil when none came
// before wait passed. It answers the server's keepalives and sends the
// acknowledged position at least every StatusInterval.
func (s *Stream) Receive(ctx context.Context, wait time.Duration) (*Tx, error) {
	return s.receive(ctx, wait, math.MaxUint64)
}

// receive is Receive that also returns nil as soon as the server reports
// (in a keepalive) having sent everything before until.
func (s *Stream) receive(ctx context.Context, wait time.Duration, until pglogrepl.LSN) (*Tx, error) {
	deadline := time.Now().Add(wait)
	for {
		if err := s.status(ctx, false); err != nil {
			return nil, err
		}
		s.mu.Lock()
		rctx, cancel := context.WithDeadline(ctx, minTime(deadline, s.nextStatus))
		msg, err := s.conn.ReceiveMessage(rctx)
		cancel()
		s.mu.Unlock()
		if err != nil {
			if pgconn.Timeout(err) && ctx.Err() == nil {
				if time.Now().After(deadline) {
					return nil, nil
				}
				continue
			}
			return nil, fmt.Errorf("replication slot %s: %w", s.slot, err)
		}
		tx, err := s.handle(ctx, msg)
		if tx != nil || err != nil || s.sent >= until {
			return tx, err
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// status sends a standby status update when one is due, or now.
func (s *Stream) status(ctx context.Context, now bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !now && time.Now().Before(s.nextStatus) {
		return nil
	}
	err := pglogrepl.SendStandbyStatusUpdate(ctx, s.conn, pglogrepl.StandbyStatusUpdate{WALWritePosition: s.flushed})
	if err != nil {
		return fmt.Errorf("replication slot %s: status update: %w", s.slot, err)
	}
	s.nextStatus = time.Now().Add(s.interval)
	return nil
}

// requestKeepalive sends a status update asking the walsender to answer
// with a keepalive at once (which reports how far it has sent).
func (s *Stream) requestKeepalive(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := pglogrepl.SendStandbyStatusUpdate(ctx, s.conn, pglogrepl.StandbyStatusUpdate{WALWritePosition: s.flushed, ReplyRequested: true})
	if err != nil {
		return fmt.Errorf("replication slot %s: status update: %w", s.slot, err)
	}
	return nil
}

// handle handles one message of the stream; it returns a transaction
// when msg completes one.
func (s *Stream) handle(ctx context.Context, msg pgproto3.BackendMessage) (*Tx, error) {
	switch msg := msg.(type) {
	case *pgproto3.CopyData:
		switch msg.Data[0] {
		case pglogrepl.PrimaryKeepaliveMessageByteID:
			k, err := pglogrepl.ParsePrimaryKeepaliveMessage(msg.Data[1:])
			if err != nil {
				return nil, err
			}
			s.serverEnd = max(s.serverEnd, k.ServerWALEnd)
			s.sent = max(s.sent, k.ServerWALEnd)
			if k.ReplyRequested {
				return nil, s.status(ctx, true)
			}
		case pglogrepl.XLogDataByteID:
			x, err := pglogrepl.ParseXLogData(msg.Data[1:])
			if err != nil {
				return nil, err
			}
			s.serverEnd = max(s.serverEnd, x.ServerWALEnd)
			return s.decode(x.WALData)
		}
	case *pgproto3.ErrorResponse:
		return nil, fmt.Errorf("replication slot %s: %w", s.slot, pgconn.ErrorResponseToPgError(msg))
	}
	return nil, nil
}

// decode adds one pgoutput message to the transaction being received.
func (s *Stream) decode(data []byte) (*Tx, error) {
	m, err := pglogrepl.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("replication slot %s: %w", s.slot, err)
	}
	switch m := m.(type) {
	case *pglogrepl.RelationMessage:
		s.relations[m.RelationID] = m
		if s.cur != nil {
			s.cur.Relations = append(s.cur.Relations, m)
		}
	case *pglogrepl.BeginMessage:
		s.cur = &Tx{Time: m.CommitTime, Commit: m.FinalLSN, Xid: m.Xid}
	case *pglogrepl.CommitMessage:
		tx := s.cur
		s.cur = nil
		if tx == nil {
			return nil, fmt.Errorf("replication slot %s: commit without begin", s.slot)
		}
		tx.Commit, tx.End = m.CommitLSN, m.TransactionEndLSN
		return tx, nil
	case *pglogrepl.InsertMessage:
		return s.add(m.RelationID, 'I', nil, m.Tuple)
	case *pglogrepl.UpdateMessage:
		return s.add(m.RelationID, 'U', m.OldTuple, m.NewTuple)
	case *pglogrepl.DeleteMessage:
		return s.add(m.RelationID, 'D', m.OldTuple, nil)
	case *pglogrepl.TruncateMessage:
		if s.cur == nil {
			return nil, fmt.Errorf("replication slot %s: a TRUNCATE outside a transaction", s.slot)
		}
		s.cur.Truncated = append(s.cur.Truncated, m.RelationIDs...)
	}
	return nil, nil
}

// add appends a change of relation rel to the transaction; once it holds
// MaxChanges, it returns them as a part and goes on with the next.
func (s *Stream) add(rel uint32, kind byte, old, new *pglogrepl.TupleData) (*Tx, error) {
	r, ok := s.relations[rel]
	if !ok || s.cur == nil {
		return nil, fmt.Errorf("replication slot %s: a change of relation %d outside a transaction or before its description", s.slot, rel)
	}
	if isDDLTable(r.Namespace, r.RelationName) {
		if kind == 'I' {
			d, err := ddlEvent(tuple(r, new))
			if err != nil {
				return nil, fmt.Errorf("replication slot %s: %w", s.slot, err)
			}
			s.cur.DDL = append(s.cur.DDL, d)
		}
		return nil, nil
	}
	s.cur.Changes = append(s.cur.Changes, Change{Rel: rel, Schema: r.Namespace, Table: r.RelationName, Kind: kind,
		Old: tuple(r, old), New: tuple(r, new)})
	if s.MaxChanges <= 0 || len(s.cur.Changes) < s.MaxChanges {
		return nil, nil
	}
	part := s.cur
	part.Partial = true
	s.cur = &Tx{Time: part.Time, Commit: part.Commit, Xid: part.Xid}
	return part, nil
}

// tuple returns a row image as column name → text (nil for NULL), without
// the columns not sent.
func tuple(r *pglogrepl.RelationMessage, t *pglogrepl.TupleData) map[string]*string {
	if t == nil {
		return nil
	}
	out := make(map[string]*string, len(t.Columns))
	for i, c := range t.Columns {
		if i >= len(r.Columns) {
			break
		}
		switch c.DataType {
		case pglogrepl.TupleDataTypeNull:
			out[r.Columns[i].Name] = nil
		case pglogrepl.TupleDataTypeText:
			v := string(c.Data)
			out[r.Columns[i].Name] = &v
		}
	}
	return out
}
