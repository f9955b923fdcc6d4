package follow

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/internal/extsort"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// The rolling audit: while a follow streams, an Auditor compares the table
// with the source once a cycle, finding drift the stream cannot show. A pass
// records the keys the follow writes, reads WAL position L in a snapshot,
// derives every item, ends the snapshot, waits until the follow has applied
// L and Scans the table once; both sides go to temporary files by slice
// (FNV-1a of the partition key), compared one slice at a time in memory;
// keys the follow wrote meanwhile are left out. With AuditRepair the drifted
// items are derived again in a newer snapshot and the follow's write stage
// writes them between windows. See docs/follow.md.

// AuditMode is what the rolling audit does: nothing, report, or repair.
type AuditMode int

const (
	AuditOff AuditMode = iota
	AuditReport
	AuditRepair
)

// AuditModes are the words of --audit, in AuditMode order.
var AuditModes = []string{"off", "report", "repair"}

func (m AuditMode) String() string { return AuditModes[m] }

// ParseAuditMode parses off, report or repair.
func ParseAuditMode(s string) (AuditMode, error) {
	for i, w := range AuditModes {
		if s == w {
			return AuditMode(i), nil
		}
	}
	return AuditOff, fmt.Errorf("--audit %q: expected off, report or repair", s)
}

// DefaultAuditCycle is the default period for comparing every item once: a
// small share of the follow's reads, drift found within the hour.
const DefaultAuditCycle = time.Hour

// AuditSliceItems is the items a slice aims at: the keys and hashes a pass
// holds in memory at a time, and the drift it repairs and reports at a time.
const AuditSliceItems = 100_000

// AuditAPI is what the audit calls on DynamoDB (DescribeTable, Scan).
type AuditAPI interface {
	dynamodb.DescribeTableAPIClient
	dynamodb.ScanAPIClient
}

var _ AuditAPI = (*dynamodb.Client)(nil)

// AuditOptions tune an Auditor.
type AuditOptions struct {
	Mode AuditMode
	// Cycle is the period in which every item is compared once, by one pass at
	// its start (default DefaultAuditCycle); a pass taking longer overruns
	// (AuditStatus.Overran) and the next begins at once.
	Cycle time.Duration
	// SliceItems is the items a slice aims at (default AuditSliceItems).
	SliceItems int
	// Segments is the number of parallel Scan segments (default 2).
	Segments int
	// Reads, if set, paces and counts each pass's Scan (load.ReadLimit).
	Reads *load.ReadLimit
	// OnDrift, if set, is told of each drifted item once it is repaired or
	// found not to be; an error stops the audit and the follow.
	OnDrift func(Drift) error
	// OnCycle, if set, gets the status after each cycle; OnSkip, if set, why a
	// cycle was skipped.
	OnCycle func(AuditStatus)
	OnSkip  func(error)
	// After, if set, holds the first pass until closed (Options.Alongside).
	After <-chan struct{}
}

// DriftKind says how an item differs from the source.
type DriftKind string

const (
	// DriftMissing: the source renders the item, the table lacks it.
	DriftMissing DriftKind = "missing"
	// DriftChanged: both have it, with different content.
	DriftChanged DriftKind = "changed"
	// DriftStale: the table holds a mapped type's item the source lacks.
	DriftStale DriftKind = "stale"
)

// Drift is one item the audit found different from the source.
type Drift struct {
	// Cycle is the audit cycle (from 1) that found it.
	Cycle int       `json:"cycle"`
	Kind  DriftKind `json:"kind"`
	// Entity and Type are the item's entity (stale: its type's first) and type.
	Entity string `json:"entity"`
	Type   string `json:"type"`
	// Key is the item's primary key: attribute name to value.
	Key map[string]string `json:"key"`
	// Repaired says the table no longer holds the drift (never with AuditReport).
	Repaired bool `json:"repaired"`
}

// AuditStatus is the audit's progress, shown on the follow's status line.
type AuditStatus struct {
	Mode AuditMode
	// Cycle is the cycle under way, of Slices, Done compared; Overran: too long.
	Cycle, Slices, Done int
	Overran             bool
	// Progress is the share of the cycle's pass done, 0 to 1: a third for
	// the items derived, a third for those Scanned (each over the source's
	// count(*)), a third for the slices compared.
	Progress float64
	// Item counts of the cycle; Skipped are those the follow wrote meanwhile.
	Compared, Skipped, Drifted, Repaired int64
	// RepairRows counts the source rows the cycle's repairs read again: the
	// rows of the entities with a missing or changed item.
	RepairRows int64
	// PrevDrifted and PrevRepaired are the previous cycle's counts.
	PrevDrifted, PrevRepaired int64
	// LastDriftCycle is the last cycle that found drift (0: none), and its counts.
	LastDriftCycle            int
	LastDrifted, LastRepaired int64
	// Totals since the audit began, once per cycle that finds an item.
	TotalDrifted, TotalRepaired int64
	// Cycles is the number of cycles completed.
	Cycles int
}

// Unrepaired is the drifted items the table may still hold: those the last
// completed cycle found and did not repair, or while a cycle is under way,
// the most of its count so far and the previous cycle's. A clean cycle
// clears it.
func (s AuditStatus) Unrepaired() int64 {
	n := s.Drifted - s.Repaired
	if s.Cycles < s.Cycle {
		n = max(n, s.PrevDrifted-s.PrevRepaired)
	}
	return n
}

// Auditor is the rolling audit of one follow (Options.Audit).
type Auditor struct {
	opts       AuditOptions
	connString string
	m          *mapping.Mapping
	client     AuditAPI
	keyAttrs   [2]string
	types      map[string]bool
	seed       maphash.Seed
	a          *Applier
	// rec is the pass's recording of the keys the follow writes.
	rec    *recording
	mu     sync.Mutex
	st     AuditStatus
	slices int // of the next cycle
	// est is the pass's source count(*), for its progress.
	est int64
}

// NewAuditor returns the audit of the follow a applies, reading the source at
// connString and m's table through client; pass it in Options.Audit.
func NewAuditor(connString string, m *mapping.Mapping, client AuditAPI, a *Applier, opts AuditOptions) *Auditor {
	if opts.Cycle <= 0 {
		opts.Cycle = DefaultAuditCycle
	}
	if opts.SliceItems <= 0 {
		opts.SliceItems = AuditSliceItems
	}
	if opts.Segments <= 0 {
		opts.Segments = 2
	}
	au := &Auditor{opts: opts, connString: connString, m: m, client: client, keyAttrs: m.Table.Keys(),
		types: map[string]bool{}, seed: maphash.MakeSeed(), a: a}
	for _, e := range m.Entities {
		au.types[e.Type] = true
	}
	au.st.Mode = opts.Mode
	return au
}

// Status is the audit's progress; the zero AuditStatus for a nil Auditor.
func (au *Auditor) Status() AuditStatus {
	if au == nil {
		return AuditStatus{}
	}
	au.mu.Lock()
	defer au.mu.Unlock()
	return au.st
}

func (au *Auditor) update(f func(*AuditStatus)) {
	au.mu.Lock()
	defer au.mu.Unlock()
	f(&au.st)
}

// AuditError stops a follow whose audit failed: it never goes on unaudited.
type AuditError struct{ Err error }

func (e *AuditError) Error() string { return "audit: " + e.Err.Error() }
func (e *AuditError) Unwrap() error { return e.Err }

// start runs the audit in a goroutine until stop or ctx's end; a failure goes
// to fail as an *AuditError and ends it.
func (au *Auditor) start(ctx context.Context, applied func() pglogrepl.LSN, fail func(error)) (stop func()) {
	if au == nil {
		return func() {}
	}
	stop, _ = background(ctx, func(ctx context.Context) {
		if err := au.run(ctx, applied); err != nil && ctx.Err() == nil {
			fail(&AuditError{err})
		}
	})
	return stop
}

func (au *Auditor) run(ctx context.Context, applied func() pglogrepl.LSN) error {
	var err error
	if au.slices, err = au.sliceCount(ctx); err != nil {
		return err
	}
	// The first pass waits a slice's share: the load was just checked, or
	// backlog waits.
	begun := time.Now().Add(au.opts.Cycle / time.Duration(au.slices))
	au.update(func(st *AuditStatus) { st.Cycle, st.Slices = 1, au.slices })
	if err := sleepUntil(ctx, begun); err != nil {
		return nil
	}
	if au.opts.After != nil {
		select {
		case <-au.opts.After:
		case <-ctx.Done():
			return nil
		}
	}
	sess, err := au.connect(ctx)
	if err != nil {
		return err
	}
	defer sess.close()
	for cycle := 1; ; cycle++ {
		au.update(func(st *AuditStatus) {
			st.Cycle, st.Slices, st.Done, st.Overran, st.Progress = cycle, au.slices, 0, false, 0
			st.PrevDrifted, st.PrevRepaired = st.Drifted, st.Repaired
			st.Drifted, st.Repaired = 0, 0
			st.Compared, st.Skipped, st.RepairRows = 0, 0, 0
		})
		err := au.pass(ctx, sess, cycle, applied)
		var mes mapping.Errors
		switch {
		case errors.As(err, &mes) && au.opts.OnSkip != nil:
			au.opts.OnSkip(fmt.Errorf("cycle %d not compared: %w", cycle, err))
			au.update(func(st *AuditStatus) { st.Done, st.Progress = st.Slices, 1 })
		case err != nil:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("cycle %d: %w", cycle, err)
		}
		over := time.Since(begun) > au.opts.Cycle
		au.update(func(st *AuditStatus) { st.Cycles, st.Overran = cycle, over })
		if au.opts.OnCycle != nil {
			au.opts.OnCycle(au.Status())
		}
		// The next cycle when this one's time is up, or at once if it overran.
		begun = later(time.Now(), begun.Add(au.opts.Cycle))
		if err := sleepUntil(ctx, begun); err != nil {
			return nil
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// sliceCount sizes the cycle by DynamoDB's (hours-old) item count.
func (au *Auditor) sliceCount(ctx context.Context) (int, error) {
	td, err := load.DescribeTable(ctx, au.client, au.m.Table.Name)
	if err != nil || td == nil {
		return 1, err
	}
	return au.slicesFor(aws.ToInt64(td.ItemCount)), nil
}

func (au *Auditor) slicesFor(items int64) int {
	return int(min(maxAuditSlices, max(1, (items+int64(au.opts.SliceItems)-1)/int64(au.opts.SliceItems))))
}

// sliceOf is the slice of n that partition key pk falls in.
func sliceOf(pk string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(pk))
	return int(h.Sum64() % uint64(n))
}

// auditSession is the audit's snapshot connection and a WAL-flushing one.
type auditSession struct {
	src   *extract.Source
	flush *pgconn.PgConn
}

func (au *Auditor) connect(ctx context.Context) (*auditSession, error) {
	src, err := extract.Connect(ctx, au.connString)
	if err != nil {
		return nil, err
	}
	flush, err := pgconn.Connect(ctx, au.connString)
	if err != nil {
		src.Close(ctx)
		return nil, fmt.Errorf("source: %w", err)
	}
	return &auditSession{src: src, flush: flush}, nil
}

func (s *auditSession) close() {
	ctx := context.Background()
	s.src.Close(ctx)
	s.flush.Close(ctx)
}

// derivedItem is a slice key's item in the snapshot: content hash and entity.
type derivedItem struct {
	hash   uint64
	entity int32
}

// drifted is one key a slice found different.
type drifted struct {
	key    [2]string
	kind   DriftKind
	entity int
	typ    string
}

// maxAuditSlices bounds a pass's slices, and so its open files (two per
// slice); past it slices grow beyond SliceItems.
const maxAuditSlices = 256

// pass compares every item once (see the package's audit comment): one
// snapshot, one derivation of the source and one Scan of the table, each
// spilled by slice to temporary files, then compared a slice at a time.
func (au *Auditor) pass(ctx context.Context, sess *auditSession, cycle int, applied func() pglogrepl.LSN) error {
	// Compiled each pass: the source's columns may have changed.
	plans, err := pipeline.Prepare(ctx, sess.src, au.m)
	if err != nil {
		return err
	}
	rec, seq := au.a.keys.record()
	au.rec = rec
	defer au.a.keys.stop(rec)
	if err := au.a.keys.waitWindows(ctx, seq); err != nil {
		return err
	}
	src := sess.src
	if err := src.Begin(ctx); err != nil {
		return err
	}
	defer src.End(context.WithoutCancel(ctx))
	at, err := snapshotPosition(ctx, sess)
	if err != nil {
		return err
	}
	// DescribeTable's count may be far below the source's, which sizes it too.
	est, err := au.estimate(ctx, src, plans)
	if err != nil {
		return err
	}
	n := max(au.slices, au.slicesFor(est))
	au.update(func(st *AuditStatus) { st.Slices = n })
	au.est = max(est, 1)
	dir, err := extsort.NewGroup("pg2dynamo-audit-", 0)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer dir.Close()
	derived, err := newSpill(dir, "derived", n)
	if err != nil {
		return err
	}
	defer derived.Close()
	if err := au.derive(ctx, src, plans, derived); err != nil {
		return err
	}
	// Repairs read a snapshot of their own: VACUUM's horizon need not wait
	// for the Scan and the comparison.
	if err := src.End(ctx); err != nil {
		return err
	}
	if err := au.waitApplied(ctx, applied, at); err != nil {
		return err
	}
	scanned, err := newSpill(dir, "scanned", n)
	if err != nil {
		return err
	}
	defer scanned.Close()
	if err := au.scan(ctx, scanned); err != nil {
		return err
	}
	// Drift is repaired and reported about SliceItems at a time, bounding
	// the keys held and the passes over the source that repairs make.
	var pending []drifted
	for i := range n {
		found, compared, err := au.compare(derived, scanned, i, plans)
		if err != nil {
			return err
		}
		skipped := int64(0)
		for _, d := range found {
			if au.a.keys.wrote(rec, d.key) {
				skipped++
				continue
			}
			pending = append(pending, d)
		}
		if len(pending) >= au.opts.SliceItems || i == n-1 {
			if err := au.settle(ctx, src, cycle, pending); err != nil {
				return err
			}
			pending = nil
		}
		au.update(func(st *AuditStatus) {
			st.Compared += compared
			st.Skipped += skipped
			st.Done = i + 1
			st.Progress = 2./3 + float64(i+1)/float64(n)/3
		})
	}
	// The next cycle is sized by the items this one counted.
	au.slices = au.slicesFor(max(derived.Records(), scanned.Records()))
	return nil
}

// settle repairs out with AuditRepair, tells OnDrift of each and counts them;
// a key the repair's snapshot no longer derives is the follow's (its change
// came after the pass's snapshot) and counts as left out.
func (au *Auditor) settle(ctx context.Context, src *extract.Source, cycle int, out []drifted) error {
	repaired := make([]bool, len(out))
	if au.opts.Mode == AuditRepair && len(out) > 0 {
		gone := make([]bool, len(out))
		if err := au.repair(ctx, src, out, repaired, gone); err != nil {
			return err
		}
		kept := 0
		for j := range out {
			if !gone[j] {
				out[kept], repaired[kept] = out[j], repaired[j]
				kept++
			}
		}
		if left := int64(len(out) - kept); left > 0 {
			au.update(func(st *AuditStatus) { st.Skipped += left })
		}
		out, repaired = out[:kept], repaired[:kept]
	}
	nRepaired := int64(0)
	for j, d := range out {
		if repaired[j] {
			nRepaired++
		}
		if au.opts.OnDrift == nil {
			continue
		}
		err := au.opts.OnDrift(Drift{Cycle: cycle, Kind: d.kind, Entity: au.m.Entities[d.entity].Name, Type: d.typ,
			Key: pipeline.ItemKeyMap(d.key, au.keyAttrs, au.m.Table.KeyTypes()), Repaired: repaired[j]})
		if err != nil {
			return err
		}
	}
	au.update(func(st *AuditStatus) {
		st.Drifted += int64(len(out))
		st.Repaired += nRepaired
		st.TotalDrifted += int64(len(out))
		st.TotalRepaired += nRepaired
		if len(out) > 0 {
			st.LastDriftCycle, st.LastDrifted, st.LastRepaired = cycle, st.Drifted, st.Repaired
		}
	})
	return nil
}

// snapshotPosition is the WAL position the pass's snapshot's commits precede.
func snapshotPosition(ctx context.Context, sess *auditSession) (pglogrepl.LSN, error) {
	var lsnText string
	if err := sess.src.Conn().QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&lsnText); err != nil {
		return 0, fmt.Errorf("current WAL position: %w", err)
	}
	at, err := pglogrepl.ParseLSN(lsnText)
	if err != nil {
		return 0, err
	}
	return at, flushWAL(ctx, sess.flush)
}

// estimate is the items src's snapshot derives (count(*), mirrors twice).
func (au *Auditor) estimate(ctx context.Context, src *extract.Source, plans []*transform.Plan) (int64, error) {
	var n int64
	for _, p := range plans {
		rows, err := src.Count(ctx, p.Entity())
		if err != nil {
			return 0, err
		}
		if p.KeySlots().Mirrored() {
			rows *= 2
		}
		n += rows
	}
	return n, nil
}

// flushWAL flushes the WAL past the slice's position, as FlushedLSN does.
func flushWAL(ctx context.Context, conn *pgconn.PgConn) error {
	_, err := conn.Exec(ctx, `BEGIN; SET LOCAL synchronous_commit = on; SELECT pg_logical_emit_message(true, 'pg2dynamo', ''); COMMIT`).ReadAll()
	if err != nil {
		return fmt.Errorf("flush the WAL: %w", err)
	}
	return nil
}

// waitApplied waits until the follow has applied every change up to at.
func (au *Auditor) waitApplied(ctx context.Context, applied func() pglogrepl.LSN, at pglogrepl.LSN) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for applied() < at {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// derive spills the content hash and entity of every item derived, by slice.
func (au *Auditor) derive(ctx context.Context, src *extract.Source, plans []*transform.Plan, out spill) error {
	n := out.Len()
	var done atomic.Int64
	sink := load.SinkFunc(func(_ context.Context, batch []transform.Item) error {
		for _, it := range batch {
			k := transform.ItemKey(it.Attrs, au.keyAttrs)
			r := auditRecord{key: k, hash: maphash.Bytes(au.seed, ddbjson.Canonical(it.Attrs)), entity: int32(it.Entity)}
			if err := out.add(sliceOf(k[0], n), r); err != nil {
				return err
			}
		}
		au.progress(0, done.Add(int64(len(batch))))
		return nil
	})
	if _, err := pipeline.Run(ctx, pipeline.Postgres(src), au.m, plans, sink, pipeline.Options{Concurrency: 1}); err != nil {
		return err
	}
	return out.flush()
}

// progress sets the pass's progress to phase (0: deriving, 1: Scanning) with
// items of the source's count done.
func (au *Auditor) progress(phase int, items int64) {
	share := min(1, float64(items)/float64(au.est))
	au.update(func(st *AuditStatus) { st.Progress = max(st.Progress, (float64(phase)+share)/3) })
}

// scan spills the key, content hash and type of every item of the table, by
// slice.
func (au *Auditor) scan(ctx context.Context, out spill) error {
	n := out.Len()
	table := &dynamodb.ScanInput{TableName: aws.String(au.m.Table.Name)}
	var done atomic.Int64
	err := load.ScanSegments(ctx, au.opts.Reads.Scan(au.client), table, au.opts.Segments, func(items []map[string]types.AttributeValue) error {
		for _, it := range items {
			k := transform.ItemKey(it, au.keyAttrs)
			r := auditRecord{key: k, hash: maphash.Bytes(au.seed, ddbjson.Canonical(it)), typ: load.StringAttr(it, au.m.TypeAttribute)}
			if err := out.add(sliceOf(k[0], n), r); err != nil {
				return err
			}
		}
		au.progress(1, done.Add(int64(len(items))))
		return nil
	})
	if err != nil {
		return err
	}
	return out.flush()
}

// compare classifies slice i's keys: the derived ones found changed or not at
// all in the table, and the table's items of a mapped type the source lacks.
// compared counts the keys compared.
func (au *Auditor) compare(derived, scanned spill, i int, plans []*transform.Plan) (found []drifted, compared int64, err error) {
	want := map[[2]string]derivedItem{}
	err = derived.each(i, func(r auditRecord) error {
		want[r.key] = derivedItem{hash: r.hash, entity: r.entity}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	compared = int64(len(want))
	err = scanned.each(i, func(r auditRecord) error {
		d, ok := want[r.key]
		switch {
		case ok:
			delete(want, r.key)
			if d.hash != r.hash {
				found = append(found, drifted{key: r.key, kind: DriftChanged, entity: int(d.entity), typ: r.typ})
			}
		case au.types[r.typ]:
			compared++
			found = append(found, drifted{key: r.key, kind: DriftStale, entity: au.entityOf(r.typ), typ: r.typ})
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	for k, d := range want {
		found = append(found, drifted{key: k, kind: DriftMissing, entity: int(d.entity), typ: plans[d.entity].Entity().Type})
	}
	return found, compared, nil
}

// entityOf is the first entity of item type typ.
func (au *Auditor) entityOf(typ string) int {
	for i, e := range au.m.Entities {
		if e.Type == typ {
			return i
		}
	}
	return 0
}
