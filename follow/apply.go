package follow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Applier brings the table in step with a window of changes: it derives the
// affected items again from the source as it is now, puts them, and deletes
// those of rows gone or re-keyed, so applying is idempotent and order-safe.
type Applier struct {
	graph    *Graph
	m        *mapping.Mapping
	src      *extract.Source
	sink     load.Sink
	keyAttrs [2]string
	keyTypes [2]string // mapping.Table.KeyTypes: rejects name B keys in base64
	b        *transform.Builder
	// OnReject is told of unwritable rows (nil: counted only). Writers configures
	// the windows' writers (default pipeline.DefaultConcurrency); set both
	// before the first Start.
	OnReject func(pipeline.Reject) error
	Writers  pipeline.WritesOptions
	// OnCatalog, if set, is told of the catalog changes a window adapts to.
	OnCatalog func(changes, rederived []string)
	// ExactFrom is the WAL position before which the table needs no stream checks.
	ExactFrom pglogrepl.LSN
	// writes is the write stage every window shares.
	writes *pipeline.Writes
	// auto is writes' Autoscale summary, once closed.
	auto *pipeline.AutoscaleSummary
	// pending are entities the next window derives again whole (Rederive).
	pending []int
	// publication is the publication streamed, whose catalog the follow checks.
	publication string
	// Catalog is the Fingerprint the table's items agree with, moved by windows
	// that compare the catalog; nil: the first check records it.
	Catalog *Fingerprint
	// catalogDue makes the next window compare the catalog; catalogAt is when due.
	catalogDue bool
	catalogAt  time.Time
	// catalogMoved is set when a window's check moved Catalog.
	catalogMoved bool
	// CatalogEvery is the longest between catalog comparisons (default
	// CatalogInterval); 0 compares only at start and at DDL commands.
	CatalogEvery time.Duration
	// keys records the keys windows write, for comparisons beside the follow;
	// side carries their writes to Run, which makes them between windows.
	keys *keyLog
	side chan *repairReq
}

// NewApplier returns an applier of g's changes reading src and writing to sink.
func NewApplier(g *Graph, m *mapping.Mapping, src *extract.Source, sink load.Sink) *Applier {
	return &Applier{graph: g, m: m, src: src, sink: sink, keyAttrs: m.Table.Keys(), keyTypes: m.Table.KeyTypes(),
		b: transform.NewBuilder(), Writers: pipeline.WritesOptions{Concurrency: 8}, CatalogEvery: CatalogInterval, keys: &keyLog{}, side: make(chan *repairReq)}
}

// Applied counts what one window did.
type Applied struct {
	// Changes is the number of row changes of followed tables.
	Changes int
	// Puts and Deletes count items written and deleted; Rejected refused rows.
	Puts, Deletes, Rejected int
	// Rederived are the entities derived again whole (their columns changed).
	Rederived []string
}

// Written is the number of items every window put or deleted so far.
func (a *Applier) Written() int64 {
	if a.writes == nil {
		return 0
	}
	return a.writes.Written()
}

// Close stops the writers once handed windows are written; a is unusable after,
// but for Autoscale.
func (a *Applier) Close() {
	if a.writes != nil {
		a.writes.Close()
		a.auto = a.writes.Autoscale()
		a.writes = nil
	}
}

// Autoscale is the writers an Autoscale follow used, once closed; nil with
// fixed writers, or when it wrote nothing.
func (a *Applier) Autoscale() *pipeline.AutoscaleSummary { return a.auto }

func (a *Applier) group(ctx context.Context) *pipeline.Group {
	if a.writes == nil {
		opts := a.Writers
		opts.KeyTypes = a.keyTypes
		a.writes = pipeline.NewWrites(a.sink, a.keyAttrs, opts)
	}
	var plans []*transform.Plan
	if a.graph != nil {
		plans = a.graph.plans
	}
	return a.writes.Group(ctx, plans)
}

// Rederive has the next window derive every item of entities (by name) again.
func (a *Applier) Rederive(entities []string) {
	for i, p := range a.graph.plans {
		if slices.Contains(entities, p.Entity().Name) {
			a.pending = append(a.pending, i)
		}
	}
}

// Pending reports whether the next window derives entities again whole.
func (a *Applier) Pending() bool { return len(a.pending) > 0 }

// Stale returns the entities whose items, derived with a checkpoint's shapes,
// read differently now; a table key that could change is a *ShapeError.
func (a *Applier) Stale(recorded map[string]transform.Shape) ([]string, error) {
	idx, err := a.stale(recorded)
	var out []string
	for _, i := range idx {
		out = append(out, a.graph.plans[i].Entity().Name)
	}
	return out, err
}

// aheadItems is the most items a window derives before the previous one is
// written; past it, Start waits for that window's barrier.
const aheadItems = 10_000

// Flight is a window whose items are all derived and handed to the writers.
type Flight struct {
	a   *Applier
	wr  *pipeline.Group
	w   *work
	out Applied
	// catalog is the Fingerprint the window moved Applier.Catalog to, or nil.
	catalog *Fingerprint
	// seq is the window's number in a.keys (0 without audit); repair, if set, is
	// the audit's repair written instead.
	seq    uint64
	repair *repairReq
	// claims settles a side chunk's keys with later windows (nil: a window).
	claims *sideClaims
}

// Start derives the items txs affect, in one snapshot taken after their
// commits, and hands them row by row to the write stage, deletes last. Items
// of busy keys (the previous window's) wait for barrier, keeping each key's
// writes in commit order. Start calls barrier (if not nil) exactly once, even
// when it fails, unless barrier itself fails.
func (a *Applier) Start(ctx context.Context, txs []*Tx, busy map[[2]string]bool, barrier func() error) (*Flight, error) {
	return a.start(ctx, txs, busy, barrier, beside{})
}

// beside are the side chunks in flight: keys reports whether a key is theirs
// (nil: none), and await waits for their writes. A window's gate claims
// their keys instead (claim, when set), waiting only where a writer has taken
// the key's batch.
type beside struct {
	keys  func(k [2]string) bool
	await func() error
	claim func(k [2]string) []<-chan struct{}
}

// start is Start with the chunks in flight beside the windows (side).
func (a *Applier) start(ctx context.Context, txs []*Tx, busy map[[2]string]bool, barrier func() error, side beside) (*Flight, error) {
	seq := a.keys.window()
	whole, err := a.events(ctx, txs)
	if err != nil {
		a.keys.done(seq)
		if barrier != nil {
			if berr := barrier(); berr != nil {
				return nil, berr
			}
		}
		return nil, err
	}
	whole = append(whole, a.pending...)
	a.pending = nil
	g := &gate{barrier: barrier, busy: busy, start: func() *pipeline.Group { return a.group(ctx) }, keys: a.keys, side: side, claims: true}
	f := &Flight{a: a, seq: seq}
	f.w = &work{seen: map[[2]string]bool{}, owners: map[[2]string]rowID{}, rejectedRows: map[rowID]bool{}, out: g}
	if len(whole) > 0 || hasChanges(txs) || a.catalogDue || hasDDL(txs) {
		if err = awaitVisible(ctx, a.src.Conn(), txs); err == nil {
			if err = a.src.Begin(ctx); err == nil {
				err = a.read(ctx, txs, whole, f)
				a.src.End(ctx)
			}
		}
	}
	if oerr := g.open(); oerr != nil {
		if g.wr != nil {
			g.wr.Cancel()
			g.wr.Wait()
		}
		a.keys.done(seq)
		return nil, oerr
	}
	f.wr = g.wr
	if a.catalogMoved {
		f.catalog, a.catalogMoved = a.Catalog, false
	}
	for _, k := range f.w.deletes {
		if err != nil {
			break
		}
		a.keys.add(k)
		if err = g.passSide(k); err == nil {
			err = f.wr.Add([]transform.Item{a.deleteItem(k)})
		}
	}
	if err != nil {
		f.abort()
		return nil, a.missingTable(ctx, err)
	}
	g.handed()
	return f, nil
}

func hasChanges(txs []*Tx) bool {
	return slices.ContainsFunc(txs, func(tx *Tx) bool { return len(tx.Changes) > 0 })
}

// read derives, in the new snapshot, the items txs and whole affect, into f.
func (a *Applier) read(ctx context.Context, txs []*Tx, whole []int, f *Flight) error {
	more, err := a.settle(ctx, txs)
	if err != nil {
		return err
	}
	whole = append(whole, more...)
	aff := newAffected()
	for _, tx := range txs {
		for _, c := range tx.Changes {
			a.graph.add(aff, c)
		}
	}
	f.out.Changes = aff.changes
	for _, e := range whole {
		aff.whole(e)
		if name := a.graph.plans[e].Entity().Name; !slices.Contains(f.out.Rederived, name) {
			f.out.Rederived = append(f.out.Rederived, name)
		}
	}
	if err := a.derive(ctx, aff, f.w); err != nil {
		return err
	}
	return a.gone(ctx, aff, f.w)
}

// MissingTableError is a followed table gone from the mapping's name: dropped,
// or renamed (to Streamed).
type MissingTableError struct {
	Table, Streamed string
	Err             error
}

func (e *MissingTableError) Error() string {
	if e.Streamed != "" {
		return fmt.Sprintf("table %s is named %s now (ALTER TABLE … RENAME): %v", e.Table, e.Streamed, e.Err)
	}
	return fmt.Sprintf("table %s no longer exists: %v", e.Table, e.Err)
}

func (e *MissingTableError) Unwrap() error { return e.Err }

// missingTable makes err (42P01) a *MissingTableError naming the new name.
func (a *Applier) missingTable(ctx context.Context, err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42P01" {
		return err
	}
	rels, cerr := a.src.Catalog().RelationsByOID(ctx, slices.Collect(maps.Keys(a.graph.byOID)))
	if cerr != nil {
		return errors.Join(err, cerr)
	}
	for oid, t := range a.graph.byOID {
		name := qualified(t.schema, t.name)
		if r, ok := rels[oid]; ok && qualified(r.Schema, r.Name) != name {
			return &MissingTableError{Table: name, Streamed: qualified(r.Schema, r.Name), Err: err}
		}
	}
	for _, t := range a.graph.tables {
		name := qualified(t.schema, t.name)
		if t.streamed != "" && t.streamed != name {
			return &MissingTableError{Table: name, Streamed: t.streamed, Err: err}
		}
	}
	for oid, t := range a.graph.byOID {
		if _, ok := rels[oid]; !ok || strings.Contains(pe.Message, `"`+t.name+`"`) {
			return &MissingTableError{Table: qualified(t.schema, t.name), Err: err}
		}
	}
	return err
}

// dropped returns a *MissingTableError for a dropped table (not streamed).
func (a *Applier) dropped(ctx context.Context) error {
	oids := slices.Sorted(maps.Keys(a.graph.byOID))
	rels, err := a.src.Catalog().RelationsByOID(ctx, oids)
	if err != nil {
		return err
	}
	for _, oid := range oids {
		if _, ok := rels[oid]; !ok {
			t := a.graph.byOID[oid]
			return &MissingTableError{Table: qualified(t.schema, t.name), Err: errors.New("dropped (DROP TABLE)")}
		}
	}
	return nil
}

// Keys are the keys the window writes: the next window's busy keys. Not
// changed once Start has returned.
func (f *Flight) Keys() map[[2]string]bool { return f.w.seen }

// Wait waits for the window's writes and reports what it did.
func (f *Flight) Wait() (Applied, error) {
	return f.settle(f.wr.Wait())
}

func (f *Flight) settle(rejected []pipeline.Reject, err error) (Applied, error) {
	f.a.keys.done(f.seq)
	out := f.out
	out.Puts, out.Deletes = f.w.puts, len(f.w.deletes)
	out.Rejected = f.w.rejected + len(rejected)
	for _, nr := range f.w.newRejects {
		if err != nil {
			break
		}
		err = f.a.reject(nr.reject)
	}
	for _, r := range rejected {
		if err != nil {
			break
		}
		err = f.a.reject(r)
	}
	return out, err
}

func (f *Flight) abort() {
	if f.wr != nil {
		f.wr.Cancel()
		f.wr.Wait()
	}
	f.a.keys.done(f.seq)
}

// gate hands a window's rows to its writes, busy keys' after the barrier.
type gate struct {
	barrier func() error
	busy    map[[2]string]bool
	start   func() *pipeline.Group
	held    [][]transform.Item
	nheld   int
	wr      *pipeline.Group
	opened  bool
	err     error // of open
	// keys records the keys handed over, for the audit (nil: none).
	keys *keyLog
	// side are the side chunks in flight: their keys' items wait for them,
	// or with claims (a window's gate) claim them (sideClaims) and wait for
	// sideWaits, the batches of theirs already taken.
	side      beside
	claims    bool
	needSide  bool
	sideWaits []<-chan struct{}
	// sidePassed is set once side.await is called.
	sidePassed bool
}

func (g *gate) onSide(keys ...[2]string) bool {
	if g.claims && g.side.claim != nil {
		n := len(g.sideWaits)
		for _, k := range keys {
			if g.side.keys(k) {
				g.sideWaits = append(g.sideWaits, g.side.claim(k)...)
			}
		}
		return len(g.sideWaits) > n
	}
	return g.side.keys != nil && !g.sidePassed && slices.ContainsFunc(keys, g.side.keys)
}

func (g *gate) passSide(keys ...[2]string) error {
	if !g.onSide(keys...) {
		return nil
	}
	return g.awaitSide()
}

// awaitSide waits for the side chunks' writes the rows held wait for.
func (g *gate) awaitSide() error {
	if g.claims && g.side.claim != nil {
		for _, ch := range g.sideWaits {
			<-ch
		}
		g.sideWaits = nil
		return nil
	}
	g.sidePassed = true
	return g.side.await()
}

// add hands over one row's items, with their keys; row is not kept.
func (g *gate) add(keys [][2]string, row []transform.Item) error {
	g.keys.add(keys...)
	if g.opened {
		if g.err != nil {
			return g.err
		}
		if err := g.passSide(keys...); err != nil {
			return err
		}
		return g.wr.Add(row)
	}
	onSide := g.onSide(keys...)
	if !onSide && !slices.ContainsFunc(keys, func(k [2]string) bool { return g.busy[k] }) {
		if g.wr == nil {
			g.wr = g.start()
		}
		return g.wr.Add(row)
	}
	g.needSide = g.needSide || onSide
	g.held = append(g.held, slices.Clone(row))
	if g.nheld += len(row); g.nheld < aheadItems {
		return nil
	}
	return g.open()
}

// handed lets go of what the gate's rows waited on, once they are all handed
// to the writers: the previous window's keys and the chunks in flight beside
// it. A Flight outlives its gate's use (a side chunk's stays in the pipe until
// written, and the chunk after it is started meanwhile); without this, each
// chunk's gate would keep the chunks before it, and so every chunk of a
// comparison, live until it ends.
func (g *gate) handed() {
	g.busy, g.side, g.sideWaits, g.barrier = nil, beside{}, nil, nil
}

// open passes the barrier once and hands the held items to the writers.
func (g *gate) open() error {
	if g.opened {
		return g.err
	}
	g.opened = true
	if g.barrier != nil {
		if g.err = g.barrier(); g.err != nil {
			return g.err
		}
	}
	if g.needSide && !g.sidePassed {
		if g.err = g.awaitSide(); g.err != nil {
			return g.err
		}
	}
	if g.wr == nil {
		g.wr = g.start()
	}
	held := g.held
	g.held, g.nheld = nil, 0
	for _, row := range held {
		if g.err = g.wr.Add(row); g.err != nil {
			return g.err
		}
	}
	return nil
}

type work struct {
	seen map[[2]string]bool
	// owners are the rows whose items hold the keys put.
	owners       map[[2]string]rowID
	rejectedRows map[rowID]bool
	keys         [][2]string // scratch: the keys of the row being derived
	row          []transform.Item
	rowKeys      [][2]string // scratch: the keys of row
	out          *gate
	puts         int
	deletes      [][2]string
	rejected     int
	// newRejects are the rows rejected whole: their items are deleted unless a
	// window row renders the key, and they go to OnReject once written.
	newRejects []newReject
}

type newReject struct {
	reject pipeline.Reject
	keys   [][2]string
}

// rowID names a source row: its entity and primary key (Plan.Position).
type rowID struct {
	entity int
	pk     string
}

// derive reads the rows aff names and hands their items to the writers,
// entity by entity, each match in key order. A row is rejected whole, as
// migrate does, when its items share a key with each other or with an earlier
// row. A window keeps the row it derives first and cannot see other windows.
func (a *Applier) derive(ctx context.Context, aff *affected, w *work) error {
	order := slices.SortedFunc(maps.Keys(aff.matches), func(x, y string) int {
		return cmp.Or(cmp.Compare(aff.matches[x].entity, aff.matches[y].entity), strings.Compare(x, y))
	})
	for _, k := range order {
		mt := aff.matches[k]
		p := a.graph.plans[mt.entity]
		var buf []transform.Item
		err := a.src.Stream(ctx, p.Entity().Name, a.graph.query(mt), func(values []any) error {
			var err error
			buf, err = a.b.Items(p, values, buf[:0])
			var re *transform.RowError
			if err != nil && !errors.As(err, &re) {
				return err
			}
			row := rowID{mt.entity, strings.Join(p.Position(values), "\x00")}
			if w.rejectedRows[row] {
				return nil // derived again by another match: rejected once
			}
			if re != nil {
				w.rejected++
				w.rejectedRows[row] = true
				// A full load would not write the row: its old items go.
				nr := newReject{reject: pipeline.RowReject(re)}
				if keys, kerr := a.b.TableKeys(p, values); kerr == nil {
					nr.keys = keys
				}
				w.newRejects = append(w.newRejects, nr)
				return nil
			}
			keys := w.keys[:0]
			for _, it := range buf {
				keys = append(keys, transform.ItemKey(it.Attrs, a.keyAttrs))
			}
			w.keys = keys
			if reason, key := a.duplicateKey(w, row, keys); reason != "" {
				w.rejected++
				w.rejectedRows[row] = true
				return a.reject(pipeline.Reject{Entity: p.Entity().Name, SourceKey: p.SourceKey(values), ItemKey: pipeline.ItemKeyMap(key, a.keyAttrs, a.keyTypes), Reason: reason})
			}
			// The row's new keys' items, written or rejected together.
			w.row, w.rowKeys = w.row[:0], w.rowKeys[:0]
			for i, it := range buf {
				if key := keys[i]; !w.seen[key] {
					w.seen[key] = true
					w.owners[key] = row
					w.puts++
					w.row, w.rowKeys = append(w.row, it), append(w.rowKeys, key)
				}
			}
			if len(w.row) == 0 {
				return nil
			}
			return w.out.add(w.rowKeys, w.row)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// duplicateKey returns why row cannot be written, and the key; "" if it can.
func (a *Applier) duplicateKey(w *work, row rowID, keys [][2]string) (string, [2]string) {
	head := func(key [2]string) string {
		return fmt.Sprintf("duplicate primary key (%s)", transform.DescribeKey(a.keyAttrs, key))
	}
	for i, key := range keys {
		if slices.Contains(keys[:i], key) {
			return head(key) + ": the row's own items (a mirror of itself) have the same key", key
		}
		if o, ok := w.owners[key]; ok && o != row {
			return fmt.Sprintf("%s: an earlier row of entity %s keeps it (in this window of changes)", head(key), a.graph.plans[o.entity].Entity().Name), key
		}
	}
	return "", [2]string{}
}

// gone adds to w the keys the affected rows' images rendered, now unrendered.
func (a *Applier) gone(ctx context.Context, aff *affected, w *work) error {
	for i := range w.newRejects {
		nr := &w.newRejects[i]
		for _, k := range nr.keys {
			if !w.seen[k] {
				w.seen[k] = true
				w.deletes = append(w.deletes, k)
				nr.reject.Deleted = append(nr.reject.Deleted, pipeline.ItemKeyMap(k, a.keyAttrs, a.keyTypes))
			}
		}
	}
	for _, e := range slices.Sorted(maps.Keys(aff.images)) {
		p := a.graph.plans[e]
		err := a.src.Images(ctx, p.Entity().Name, p.Query(), aff.images[e], func(values []any) error {
			keys, err := a.b.TableKeys(p, values)
			if err != nil {
				return nil // a key column NULL or unsendable: the row had no item
			}
			for _, k := range keys {
				if !w.seen[k] {
					w.seen[k] = true
					w.deletes = append(w.deletes, k)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (a *Applier) reject(r pipeline.Reject) error {
	if a.OnReject == nil {
		return nil
	}
	return a.OnReject(r)
}

func (a *Applier) deleteItem(k [2]string) transform.Item {
	attrs := transform.KeyMap(a.keyAttrs, a.keyTypes, k)
	return transform.Item{Entity: -1, Attrs: attrs, Delete: true}
}
