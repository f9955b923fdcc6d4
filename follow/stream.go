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
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pg2dynamo/pg2dynamo/extract"
)

// Change is one row change of a transaction, its values in PostgreSQL's
// text form (the type's output function, under extract.SessionSettings).
type Change struct {
	// Schema and Table name the changed table.
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

// Tx is one committed transaction's changes, in commit order.
type Tx struct {
	// Commit is the LSN of the commit record; End the LSN just after the
	// transaction, which the slot is told once the transaction is
	// applied.
	Commit, End pglogrepl.LSN
	Time        time.Time
	Changes     []Change
}

// Stream is a logical replication connection to the source: it creates
// and drops slots, and streams a slot's committed transactions.
type Stream struct {
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
}

// StatusInterval is how often Receive reports the position applied to
// the server (and so how often the server hears the client is alive,
// within wal_sender_timeout, 60 s by default).
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
	return &Stream{conn: conn, cfg: cfg, relations: map[uint32]*pglogrepl.RelationMessage{}}, nil
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
			PluginArgs: []string{"proto_version '1'", "publication_names '" + strings.ReplaceAll(publication, "'", "''") + "'"},
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
	s.slot, s.flushed = slot, from
	return nil
}

// Ack records that every transaction ending at or before lsn is applied:
// the next status update tells the server, which may then recycle the
// WAL before it. Acknowledge only what the table holds.
func (s *Stream) Ack(lsn pglogrepl.LSN) {
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
		rctx, cancel := context.WithDeadline(ctx, minTime(deadline, s.nextStatus))
		msg, err := s.conn.ReceiveMessage(rctx)
		cancel()
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
	if !now && time.Now().Before(s.nextStatus) {
		return nil
	}
	err := pglogrepl.SendStandbyStatusUpdate(ctx, s.conn, pglogrepl.StandbyStatusUpdate{WALWritePosition: s.flushed})
	if err != nil {
		return fmt.Errorf("replication slot %s: status update: %w", s.slot, err)
	}
	s.nextStatus = time.Now().Add(StatusInterval)
	return nil
}

// requestKeepalive sends a status update asking the walsender to answer
// with a keepalive at once (which reports how far it has sent).
func (s *Stream) requestKeepalive(ctx context.Context) error {
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
	case *pglogrepl.BeginMessage:
		s.cur = &Tx{Time: m.CommitTime}
	case *pglogrepl.CommitMessage:
		tx := s.cur
		s.cur = nil
		if tx == nil {
			return nil, fmt.Errorf("replication slot %s: commit without begin", s.slot)
		}
		tx.Commit, tx.End = m.CommitLSN, m.TransactionEndLSN
		return tx, nil
	case *pglogrepl.InsertMessage:
		return nil, s.add(m.RelationID, 'I', nil, m.Tuple)
	case *pglogrepl.UpdateMessage:
		return nil, s.add(m.RelationID, 'U', m.OldTuple, m.NewTuple)
	case *pglogrepl.DeleteMessage:
		return nil, s.add(m.RelationID, 'D', m.OldTuple, nil)
	case *pglogrepl.TruncateMessage:
		return nil, fmt.Errorf("replication slot %s: TRUNCATE of a followed table: pg2dynamo cannot follow a truncate; run migrate again without --follow", s.slot)
	}
	return nil, nil
}

// add appends a change of relation rel to the transaction.
func (s *Stream) add(rel uint32, kind byte, old, new *pglogrepl.TupleData) error {
	r, ok := s.relations[rel]
	if !ok || s.cur == nil {
		return fmt.Errorf("replication slot %s: a change of relation %d outside a transaction or before its description", s.slot, rel)
	}
	s.cur.Changes = append(s.cur.Changes, Change{Schema: r.Namespace, Table: r.RelationName, Kind: kind,
		Old: tuple(r, old), New: tuple(r, new)})
	return nil
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
