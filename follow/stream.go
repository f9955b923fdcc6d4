// Package follow keeps a DynamoDB table in step with PostgreSQL after the full
// load: it streams the source's changes (pgoutput), derives the items each
// changed row affects again, and puts them or deletes those of rows gone. The
// full load reads the slot's exported snapshot, so the handoff is gap-free.
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

// Change is one row change, its values in PostgreSQL's text form.
type Change struct {
	// Rel is the table's OID (kept by renames); Schema and Table as described.
	Rel           uint32
	Schema, Table string
	// Kind is 'I' (insert), 'U' (update) or 'D' (delete).
	Kind byte
	// Old is the old row image (update, delete) per the replica identity, nil
	// when none was sent; New the new row. A column absent from a map was not
	// sent (an unchanged TOASTed value); a nil value is NULL.
	Old, New map[string]*string
}

// Tx is one committed transaction's changes in commit order, or a part of
// them (past Stream.MaxChanges). Every part is committed, so each is applied
// as it comes; only the last ends the transaction.
type Tx struct {
	// Commit is the commit record's LSN; End the LSN after it (0 when Partial).
	Commit, End pglogrepl.LSN
	// Xid is the transaction's ID (32 bits, as pgoutput sends it).
	Xid     uint32
	Partial bool
	Time    time.Time
	Changes []Change
	// Relations are the table descriptions pgoutput sent before this part;
	// Truncated the OIDs of tables a TRUNCATE emptied.
	Relations []*pglogrepl.RelationMessage
	Truncated []uint32
	// DDL are the DDL commands the transaction ran, with Stream.DDL.
	DDL []DDLEvent
}

// Stream is a logical replication connection: it manages and streams slots.
type Stream struct {
	// mu serializes the connection between Receive and KeepAlive, and guards
	// flushed and nextStatus.
	mu   sync.Mutex
	conn *pgconn.PgConn
	cfg  *pgconn.Config
	slot string
	// relations are the tables pgoutput described, by relation ID.
	relations map[uint32]*pglogrepl.RelationMessage
	cur       *Tx
	// flushed is the position acknowledged; serverEnd the server's WAL end.
	flushed, serverEnd pglogrepl.LSN
	// sent is the WAL position a keepalive last reported sent.
	sent       pglogrepl.LSN
	nextStatus time.Time
	// interval is the time between status updates (StatusInterval or less).
	interval time.Duration
	// MaxChanges is the most changes held before a part is returned; 0: none.
	MaxChanges int
	// DDL makes Start stream DDLPublication too; pgoutput fails unless it
	// predates the slot.
	DDL bool
}

// StatusInterval is the most time between position reports; a short
// wal_sender_timeout, past which the server disconnects, gets a quarter of it.
// https://www.postgresql.org/docs/current/runtime-config-replication.html#GUC-WAL-SENDER-TIMEOUT
const StatusInterval = 5 * time.Second

// Dial opens a replication connection to connString with SessionSettings as
// startup parameters, so pgoutput prints values as the full load reads them.
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

// senderTimeout reads wal_sender_timeout (0: none).
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

// parseSetting parses a time setting as SHOW prints it (no unit: ms).
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

// Interval is the time between two status updates.
func (s *Stream) Interval() time.Duration { return s.interval }

// KeepAlive sends a status update every Interval, from its own goroutine,
// until stop, so a long window keeps the connection; it reports only
// acknowledged positions. A failed update calls lost, stopping the window at
// once.
func (s *Stream) KeepAlive(ctx context.Context, lost func(error)) (stop func()) {
	return every(ctx, s.interval/2, func(ctx context.Context) bool {
		if err := s.status(ctx, false); err != nil && ctx.Err() == nil {
			lost(fmt.Errorf("the replication connection is lost: %w", err))
			return false
		}
		return true
	})
}

// Close closes the connection; the slot stays.
func (s *Stream) Close(ctx context.Context) error { return s.conn.Close(ctx) }

// Slot is a slot just created: its consistent point and exported snapshot.
type Slot struct {
	Name       string
	Consistent pglogrepl.LSN
	Snapshot   string
}

// CreateSlot creates logical slot name and exports a snapshot at its
// consistent point, importable until s runs another command: begin every
// reader of the full load before Start. While the creation waits on other
// transactions to end, onWait hears which (SlotWait; nil: no one).
func (s *Stream) CreateSlot(ctx context.Context, name string, onWait func(SlotWait)) (Slot, error) {
	return s.createSlot(ctx, name, false, onWait)
}

func quoteSlot(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// SlotBusyWait is how long Start waits for a slot a crashed client held.
const SlotBusyWait = 30 * time.Second

// Start streams slot's changes of publication from from (0: confirmed), with
// pgoutput protocol 1, waiting up to SlotBusyWait for a busy slot.
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

// Ack records that every transaction ending by lsn is in the table; the server
// may then recycle the WAL before it.
func (s *Stream) Ack(lsn pglogrepl.LSN) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if lsn > s.flushed {
		s.flushed = lsn
	}
}

// ServerEnd is the server's WAL end as last reported: lag in bytes is
// ServerEnd − the position applied.
func (s *Stream) ServerEnd() pglogrepl.LSN { return s.serverEnd }

// Receive returns the next committed transaction, or nil when none came
// within wait, answering keepalives and reporting progress meanwhile.
func (s *Stream) Receive(ctx context.Context, wait time.Duration) (*Tx, error) {
	return s.receive(ctx, wait, math.MaxUint64)
}

// receive also returns nil once a keepalive reports until sent.
func (s *Stream) receive(ctx context.Context, wait time.Duration, until pglogrepl.LSN) (*Tx, error) {
	deadline := time.Now().Add(wait)
	var rctx deadlineCtx
	defer rctx.stop()
	for {
		if err := s.status(ctx, false); err != nil {
			return nil, err
		}
		s.mu.Lock()
		msg, err := s.conn.ReceiveMessage(rctx.until(ctx, minTime(deadline, s.nextStatus)))
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

// deadlineCtx is one context with a deadline, made again only when the
// deadline moves or passes: a context a message cost microseconds of CPU in a
// backlog of small transactions (three messages each). Call stop when done.
type deadlineCtx struct {
	ctx    context.Context
	cancel context.CancelFunc
	end    time.Time
}

// until returns a context of parent ending at end.
func (d *deadlineCtx) until(parent context.Context, end time.Time) context.Context {
	if d.ctx == nil || !end.Equal(d.end) || d.ctx.Err() != nil {
		d.stop()
		d.ctx, d.cancel = context.WithDeadline(parent, end)
		d.end = end
	}
	return d.ctx
}

func (d *deadlineCtx) stop() {
	if d.cancel != nil {
		d.cancel()
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

// requestKeepalive asks the walsender for a keepalive at once.
func (s *Stream) requestKeepalive(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := pglogrepl.SendStandbyStatusUpdate(ctx, s.conn, pglogrepl.StandbyStatusUpdate{WALWritePosition: s.flushed, ReplyRequested: true})
	if err != nil {
		return fmt.Errorf("replication slot %s: status update: %w", s.slot, err)
	}
	return nil
}

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

// add appends a change of rel; at MaxChanges it returns the changes as a part.
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

// tuple returns a row image as column → text (nil: NULL), sent columns only.
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
