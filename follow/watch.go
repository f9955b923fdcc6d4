package follow

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Watch tells which items the changes committed after a snapshot may have
// changed: what verify, run beside a follow, counts as lag rather than wrong.
// It creates a temporary slot exporting the check's snapshot, then receives
// the changes since and finds the items they affect as the follow would.
type Watch struct {
	g     *Graph
	b     *transform.Builder
	s     *Stream
	plain *pgconn.PgConn // not replication: reads and flushes the WAL position
	pub   string
	slot  Slot
	// from is the slot received from: slot, or a copy of the follow's.
	from Slot
	keys map[[2]string]bool
	asOf time.Time // the keys cover every change committed before it
}

// NewWatch creates the watch's temporary slot on connString, streaming pub.
// Import its Snapshot (extract.Source.BeginAt) before the first Changed.
// onWait hears what the slot's creation waits on, as CreateSlot's does.
func NewWatch(ctx context.Context, connString string, g *Graph, pub string, onWait func(SlotWait)) (*Watch, error) {
	s, err := Dial(ctx, connString)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("pg2dynamo_verify_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	slot, err := s.createSlot(ctx, name, true, onWait)
	if err != nil {
		s.Close(ctx)
		return nil, err
	}
	plain, err := pgconn.Connect(ctx, connString)
	if err != nil {
		s.Close(ctx)
		return nil, fmt.Errorf("source: %w", err)
	}
	return &Watch{g: g, b: transform.NewBuilder(), s: s, plain: plain, pub: pub, keys: map[[2]string]bool{}, slot: slot, from: slot}, nil
}

// FromFollow makes the watch also receive the changes before the snapshot that
// the follow on slot has not applied: they explain differences too. It copies
// the follow's slot (keeping its confirmed position) and receives from the
// copy. Call it after the snapshot is imported and before the table is read.
// It returns the follow's position, and false, dropping the copy, when the
// follow has applied everything before the snapshot.
func (w *Watch) FromFollow(ctx context.Context, slot string) (pglogrepl.LSN, bool, error) {
	if w.s.slot != "" {
		return 0, false, errors.New("watch: FromFollow after the first Changed")
	}
	name := w.slot.Name + "_f"
	res, err := w.s.conn.Exec(ctx, fmt.Sprintf("SELECT lsn::text FROM pg_copy_logical_replication_slot(%s, %s, true)",
		quoteLiteral(slot), quoteLiteral(name))).ReadAll()
	if err != nil {
		return 0, false, fmt.Errorf("copy replication slot %s: %w", slot, err)
	}
	if len(res) != 1 || len(res[0].Rows) != 1 || res[0].Rows[0][0] == nil {
		return 0, false, fmt.Errorf("copy replication slot %s: no confirmed position", slot)
	}
	lsn, err := pglogrepl.ParseLSN(string(res[0].Rows[0][0]))
	if err != nil {
		return 0, false, fmt.Errorf("copy replication slot %s: %w", slot, err)
	}
	if lsn >= w.slot.Consistent {
		if _, err := w.s.conn.Exec(ctx, "SELECT pg_drop_replication_slot("+quoteLiteral(name)+")").ReadAll(); err != nil {
			return 0, false, fmt.Errorf("drop replication slot %s: %w", name, err)
		}
		return lsn, false, nil
	}
	w.from = Slot{Name: name, Consistent: lsn}
	return lsn, true, nil
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func (w *Watch) flushedLSN(ctx context.Context) (pglogrepl.LSN, error) {
	return FlushedLSN(ctx, w.plain)
}

// FlushedLSN returns the server's WAL insert position now, with the WAL
// flushed up to it, on conn (not in a transaction). A walsender sends only
// flushed WAL, and synchronous_commit = off commits wait for the WAL writer;
// a transaction committed with synchronous_commit on flushes everything
// before it. It writes an empty logical message, as one writing no WAL would
// flush nothing.
func FlushedLSN(ctx context.Context, conn *pgconn.PgConn) (pglogrepl.LSN, error) {
	res, err := conn.Exec(ctx, `SELECT pg_current_wal_insert_lsn()::text; BEGIN; SET LOCAL synchronous_commit = on; `+
		`SELECT pg_logical_emit_message(true, 'pg2dynamo', ''); COMMIT`).ReadAll()
	if err != nil {
		return 0, fmt.Errorf("current WAL position: %w", err)
	}
	if len(res) == 0 || len(res[0].Rows) != 1 {
		return 0, errors.New("current WAL position: no row")
	}
	return pglogrepl.ParseLSN(string(res[0].Rows[0][0]))
}

// Snapshot is the exported snapshot the check reads.
func (w *Watch) Snapshot() string { return w.slot.Snapshot }

// Consistent is the snapshot's WAL position: later commits reach the watch.
func (w *Watch) Consistent() pglogrepl.LSN { return w.slot.Consistent }

// Close closes the watch's connections, dropping the temporary slot.
func (w *Watch) Close(ctx context.Context) error {
	return errors.Join(w.plain.Close(ctx), w.s.Close(ctx))
}

// Changed reports whether a change committed after the snapshot may have
// changed the item of key (pk, sk) as read at readAt or before; src is the
// check's source. It first receives everything up to the server's WAL
// position now when the keys known do not cover readAt. It fails on a
// replication or source error.
func (w *Watch) Changed(ctx context.Context, src *extract.Source, pk, sk string, readAt time.Time) (bool, error) {
	if !w.asOf.After(readAt) {
		if err := w.advance(ctx, src); err != nil {
			return false, err
		}
	}
	return w.keys[[2]string{pk, sk}], nil
}

// advance receives the changes up to the server's WAL position now.
func (w *Watch) advance(ctx context.Context, src *extract.Source) error {
	asOf := time.Now()
	target, err := w.flushedLSN(ctx)
	if err != nil {
		return err
	}
	if w.s.slot == "" {
		if err := w.s.Start(ctx, w.from.Name, w.pub, w.from.Consistent); err != nil {
			return err
		}
	}
	aff := newAffected()
	for w.s.sent < target {
		if err := w.s.requestKeepalive(ctx); err != nil {
			return err
		}
		tx, err := w.s.receive(ctx, 20*time.Millisecond, target)
		if err != nil {
			return err
		}
		if tx == nil {
			continue
		}
		for _, c := range tx.Changes {
			w.g.add(aff, c)
		}
		// Received is not applied, but the watch keeps nothing: its temporary
		// slot need not hold the WAL behind it.
		w.s.Ack(tx.End)
		if tx.End >= target {
			break
		}
	}
	if err := w.resolve(ctx, src, aff); err != nil {
		return err
	}
	w.asOf = asOf
	return nil
}

// resolve adds the table keys of the items aff reaches.
func (w *Watch) resolve(ctx context.Context, src *extract.Source, aff *affected) error {
	add := func(p *transform.Plan) func([]any) error {
		return func(values []any) error {
			keys, err := w.b.TableKeys(p, values)
			if err != nil {
				return nil // a key column NULL or unsendable: the row has no item
			}
			for _, k := range keys {
				w.keys[k] = true
			}
			return nil
		}
	}
	for _, k := range slices.Sorted(maps.Keys(aff.matches)) {
		mt := aff.matches[k]
		p := w.g.plans[mt.entity]
		if err := src.Stream(ctx, p.Entity().Name, w.g.query(mt), add(p)); err != nil {
			return err
		}
	}
	for _, e := range slices.Sorted(maps.Keys(aff.images)) {
		p := w.g.plans[e]
		if err := src.Images(ctx, p.Entity().Name, p.Query(), aff.images[e], add(p)); err != nil {
			return err
		}
	}
	return nil
}
