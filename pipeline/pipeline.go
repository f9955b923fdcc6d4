// Package pipeline runs a migration: a few readers, each on its own
// connection to one exported PostgreSQL snapshot, read every entity (a large
// table split into primary-key ranges), convert rows to items and hand them
// in batches to a fixed number of writers over a bounded channel, so a slow
// sink slows the readers and memory stays flat. Every source row ends up written or listed
// as rejected with its reason; the Summary reconciles the two.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// DefaultConcurrency is the default number of parallel writers.
const DefaultConcurrency = 8

// Reject is one source row that was not written, as one line of the
// rejects file (JSON Lines).
type Reject struct {
	Entity string `json:"entity"`
	// SourceKey holds the row's values of its table's primary key and of
	// the columns its key templates use (nil for NULL).
	SourceKey map[string]any `json:"source_key"`
	// ItemKey is the item's primary key, when one was rendered.
	ItemKey map[string]string `json:"item_key,omitempty"`
	Column  string            `json:"column,omitempty"`
	Reason  string            `json:"reason"`
}

// Progress receives counts as the run goes. Calls come from several
// goroutines; implementations synchronise.
type Progress interface {
	// Start is called once per entity before its rows are read; total is
	// its row count in the snapshot.
	Start(entity string, total int64)
	// Advance reports n more rows of entity finished (written or rejected).
	Advance(entity string, n int)
}

// Options tune Run. The zero value is usable.
type Options struct {
	// Concurrency is the number of parallel writers (default
	// DefaultConcurrency).
	Concurrency int
	// OnReject is called for every rejected row, one call at a time. An
	// error from it stops the run. Nil discards rejects (they are still
	// counted).
	OnReject func(Reject) error
	// Progress, if not nil, is told of each entity's progress.
	Progress Progress
	// Readers is the number of connections reading and transforming in
	// parallel, all on one snapshot (default 1). See Run.
	Readers int
	// SkipDuplicateCheck turns off the run-wide check that no two rows
	// render the same primary key (11 to 21 bytes of memory per item of
	// the entities whose keys transform.KeysUnique cannot prove unique,
	// which are then read one after another; see Run). Duplicates within
	// one batch are still caught.
	SkipDuplicateCheck bool
	// Skip marks entities (by index) not to read: a resumed run's
	// entities already written. With the duplicate check, the rows of
	// those in a collision group are read again, to claim their keys
	// only (see Run).
	Skip []bool
	// Ranges holds, per entity (by index), the ranges a resumed run reads,
	// as OnProgress last reported them: ranges Done are not read, the
	// others from their After. An entity without recorded ranges is split
	// afresh. With the duplicate check, what a collision group's ranges
	// record as written is read again, to claim its keys only.
	Ranges [][]Range
	// OnProgress, if set, is called, one call at a time, each time the
	// written prefix of one of an entity's ranges advances, with all the
	// entity's ranges: a range's After is then the last row before which
	// every row of the range is written or rejected; the entity is done
	// when every range is. Plans that read in no order report Done only.
	// An error from it stops the run.
	OnProgress func(entity int, ranges []Range) error
}

// WriteGrace is how long writers go on, after the run's context is done,
// to finish the batches already read.
const WriteGrace = 30 * time.Second

// EntityStats is the outcome for one entity.
type EntityStats struct {
	Name string
	// Total is the row count in the snapshot before reading.
	Total int64
	// Rows is the number of rows read.
	Rows int64
	// Written is the number of rows whose items (one, or two with a
	// mirror) were all written.
	Written int64
	// Items is the number of items written.
	Items int64
	// Rejected is the number of rows listed as rejected.
	Rejected int64
	// NotWritten is the number of rows read but neither written nor
	// rejected because the run stopped (an error or an interruption):
	// Rows = Written + Rejected + NotWritten.
	NotWritten int64
	// Elapsed runs from the first row read to the last write acknowledged.
	Elapsed time.Duration
}

// Summary is the outcome of a run, entities in mapping order.
type Summary struct {
	Entities []EntityStats
	Elapsed  time.Duration
}

// Total sums the per-entity counts (Name "total", Elapsed of the run).
func (s *Summary) Total() EntityStats {
	t := EntityStats{Name: "total", Elapsed: s.Elapsed}
	for _, e := range s.Entities {
		t.Total += e.Total
		t.Rows += e.Rows
		t.Written += e.Written
		t.Items += e.Items
		t.Rejected += e.Rejected
		t.NotWritten += e.NotWritten
	}
	return t
}

// Prepare checks every entity of m against the live source (tables and
// columns exist, key columns have usable types) and compiles its Plan, one
// per entity in mapping order. It then checks what a run would otherwise
// meet only while reading or verifying: each query source on its own
// (extract.Source.CheckQuerySource: one complete statement, no parameters,
// no row locks), the statements that read each entity, planned by
// PostgreSQL without running them (extract.Source.CheckRead), and every
// access pattern against the plans (parameters, their widths, one source
// with all of them). It reads no rows; the plans are made in read-only
// transactions of src (its snapshot, under a savepoint, once begun). All
// problems are returned together as mapping.Errors, in file order; other
// errors (the connection) stop it.
func Prepare(ctx context.Context, src *extract.Source, m *mapping.Mapping) ([]*transform.Plan, error) {
	var errs mapping.Errors
	all := make([]*transform.Sources, len(m.Entities))
	described := make([]bool, len(m.Entities))
	for i, e := range m.Entities {
		srcs, err := describe(ctx, src, m, e)
		if err != nil {
			var me *mapping.Error
			if errors.As(err, &me) {
				errs = append(errs, me)
				continue
			}
			return nil, err
		}
		all[i], described[i] = &srcs, true
	}
	qerrs, refused, err := checkQuerySources(ctx, src, m, described)
	if err != nil {
		return nil, err
	}
	errs = append(errs, qerrs...)
	plans, err := transform.CompileAll(m, all)
	if err != nil {
		var mes mapping.Errors
		if !errors.As(err, &mes) {
			return nil, err
		}
		errs = append(errs, mes...)
	}
	for i, p := range plans {
		if p == nil || len(p.Query().Joins) == 0 || refused[i] {
			continue
		}
		if err := src.CheckQuery(ctx, m, m.Entities[i].Name, p.Query()); err != nil {
			var me *mapping.Error
			if !errors.As(err, &me) {
				return nil, err
			}
			errs = append(errs, me)
			refused[i] = true
		}
	}
	if plans != nil {
		rerrs, err := checkReads(ctx, src, m, plans, refused)
		if err != nil {
			return nil, err
		}
		perrs, err := checkPatterns(m, plans)
		if err != nil {
			return nil, err
		}
		errs = append(append(errs, rerrs...), perrs...)
	}
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, errs
	}
	return plans, nil
}

// describe reads the columns of an entity's source and of the sources its
// embed, duplicate and aggregate rules join.
func describe(ctx context.Context, src *extract.Source, m *mapping.Mapping, e *mapping.Entity) (transform.Sources, error) {
	var srcs transform.Sources
	var err error
	ep := mapping.Path(mapping.KeyEntities, e.Name)
	if srcs.Columns, err = src.Describe(ctx, m, e); err != nil {
		return srcs, err
	}
	if srcs.Unique, err = src.UniqueKeys(ctx, e.Source); err != nil {
		return srcs, fmt.Errorf("describe %s: %w", mapping.Path(ep, mapping.KeySource), err)
	}
	srcs.Embed = map[string][]extract.Column{}
	for name, em := range e.Embed {
		if srcs.Embed[name], err = src.DescribeSource(ctx, m, mapping.Path(ep, mapping.KeyEmbed, name, mapping.KeySource), em.Source); err != nil {
			return srcs, err
		}
	}
	for i, d := range e.Duplicate {
		path := fmt.Sprintf("%s.%s[%d].%s", ep, mapping.KeyDuplicate, i, mapping.KeySource)
		cols, err := src.DescribeSource(ctx, m, path, d.Source)
		if err != nil {
			return srcs, err
		}
		keys, err := src.UniqueKeys(ctx, d.Source)
		if err != nil {
			return srcs, fmt.Errorf("describe %s: %w", path, err)
		}
		srcs.Duplicate = append(srcs.Duplicate, cols)
		srcs.DuplicateKeys = append(srcs.DuplicateKeys, keys)
	}
	srcs.Aggregate = map[string][]extract.Column{}
	for name, a := range e.Aggregates {
		if srcs.Aggregate[name], err = src.DescribeSource(ctx, m, mapping.Path(ep, mapping.KeyAggregates, name, mapping.KeySource), a.Source); err != nil {
			return srcs, err
		}
	}
	return srcs, nil
}

type entityState struct {
	rows, written, rejected, items atomic.Int64
	start, lastAck                 atomic.Int64 // unix nanoseconds
	started                        sync.Once
}

// Range is one part of an entity's read, in primary-key order: the rows
// after After (from the first row when nil) up to and including Until (to
// the last row when nil). After and Until are positions (position.go:
// PostgreSQL's output text of each primary key column's value). Done
// means every row of the range is written or rejected. An entity that
// reads in no order (no primary key) has one range, without positions.
type Range struct {
	After []string `json:"after,omitempty"`
	Until []string `json:"until,omitempty"`
	Done  bool     `json:"done,omitempty"`
}

// MinRangeRows is the fewest rows per range when an entity's read is split
// for parallel readers: a smaller table is read by one reader.
const MinRangeRows = 20_000

// part is one range of one entity, read by one reader.
type part struct {
	entity int // index in plans
	id     int // index in the run's parts; -1 for a replay
	r      Range
	// replay: the range was written by an earlier run; its rows are read
	// only to claim their keys in the group's key set, as that run did.
	replay bool
}

// batch is what one Write gets: up to 25 items, whole rows only; rowEnd
// marks the last item of each row.
type batch struct {
	items  []transform.Item
	rowEnd []bool
	// part and seq place the batch in its part's read: batches hold the
	// rows of one part, numbered from 0; position is that of the batch's
	// last row.
	part, seq int
	position  []string
}

func newBatch(part, seq int) batch {
	return batch{items: make([]transform.Item, 0, load.MaxBatchItems), rowEnd: make([]bool, 0, load.MaxBatchItems), part: part, seq: seq}
}

// progress finds, per part, the prefix of batches all acknowledged, and
// reports each entity's ranges to OnProgress. Safe for concurrent use.
type progress struct {
	mu       sync.Mutex
	fn       func(entity int, ranges []Range) error
	parts    []part  // their ranges' After and Done move as batches are acknowledged
	byEntity [][]int // ids of each entity's parts, in range order
	next     []int   // per part, the next batch not yet acknowledged
	acked    []map[int][]string
	total    []int // batches of a part once its read is over, else -1
}

func newProgress(parts []part, byEntity [][]int, fn func(int, []Range) error) *progress {
	p := &progress{fn: fn, parts: parts, byEntity: byEntity, next: make([]int, len(parts)),
		acked: make([]map[int][]string, len(parts)), total: make([]int, len(parts))}
	for i := range parts {
		p.acked[i] = map[int][]string{}
		p.total[i] = -1
	}
	return p
}

// ack records batch seq of part id as handled.
func (p *progress) ack(id, seq int, position []string) error {
	if p.fn == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.acked[id][seq] = position
	moved := false
	for {
		pos, ok := p.acked[id][p.next[id]]
		if !ok {
			break
		}
		delete(p.acked[id], p.next[id])
		p.next[id]++
		if pos != nil {
			p.parts[id].r.After = pos
		}
		moved = true
	}
	if !moved {
		return nil
	}
	p.parts[id].r.Done = p.next[id] == p.total[id]
	return p.report(p.parts[id].entity)
}

// readDone records that part id's read ended after batches batches.
func (p *progress) readDone(id, batches int) error {
	if p.fn == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total[id] = batches
	if p.next[id] == batches {
		p.parts[id].r.Done = true
		return p.report(p.parts[id].entity)
	}
	return nil
}

func (p *progress) report(entity int) error {
	rs := make([]Range, len(p.byEntity[entity]))
	for i, id := range p.byEntity[entity] {
		rs[i] = p.parts[id].r
		rs[i].After = slices.Clone(rs[i].After)
	}
	return p.fn(entity, rs)
}

// Run migrates the entities of plans from src, which must have begun its
// snapshot (extract.Source.Begin), into sink.
//
// Reading: opts.Readers goroutines read and transform. Reader 0 uses src;
// the others open their own connections on src's snapshot
// (extract.Source.Fork), so all read one consistent point in time. An
// entity that reads in primary-key order (transform.Plan.WithPosition) and
// holds at least 2×MinRangeRows rows is split into key ranges, one per
// reader (extract.Source.Split); the parts of all entities are handed out
// in mapping order. Writing: opts.Concurrency writers call sink.Write.
//
// Duplicate keys: no batch holds two items of one primary key, and unless
// opts.SkipDuplicateCheck, no two items of the run do. Entities whose keys
// transform.KeysUnique proves unique are read in parallel parts and only
// their batches checked. The others form collision groups (entities whose
// keys may meet, transform.KeysMayMeet); a group is read by one reader, in
// one range per entity, its entities in mapping order and each in
// primary-key order (Run makes a plan of a group that reads in no order
// read in primary-key order, with WithPosition(nil), when its source has a
// primary key), while it claims each row's keys in the group's key set. So
// of two rows with one key the earlier in that order keeps it, whatever
// opts.Readers, in every run over the same data; the later is
// rejected, its reason naming the key and the row that keeps it. A
// resumed run (opts.Skip, opts.Ranges) first reads again what the group's
// recorded ranges say was written, claiming keys without writing, counting
// or rejecting, so that it reaches the decisions of an uninterrupted run.
// A source without a primary key (a query) is claimed in the order it
// returns its rows.
//
// Rows that cannot become items, and items the sink reports as failed, go
// to opts.OnReject. Run returns the summary together with the first fatal
// error (from PostgreSQL, the sink, or ctx's cause). When the reading stops
// early (ctx done, a PostgreSQL error), the rows already read are still
// written, so that the summary describes the table.
func Run(ctx context.Context, src *extract.Source, m *mapping.Mapping, plans []*transform.Plan, sink load.Sink, opts Options) (*Summary, error) {
	started := time.Now()
	conc := opts.Concurrency
	if conc <= 0 {
		conc = DefaultConcurrency
	}
	readers := max(opts.Readers, 1)
	states := make([]entityState, len(plans))
	totals := make([]int64, len(plans))
	for i, p := range plans {
		n, err := src.Count(ctx, p.Entity())
		if err != nil {
			return nil, err
		}
		totals[i] = n
	}

	// The run-wide duplicate check: collision groups, each read by one
	// reader at a time in primary-key order (see task).
	var groups [][]int
	groupOf := make([]int, len(plans))
	for i := range groupOf {
		groupOf[i] = -1
	}
	if !opts.SkipDuplicateCheck {
		groups, groupOf = collisionGroups(plans, keysUnique(m, plans))
		for i, p := range plans {
			if groupOf[i] >= 0 && len(p.Query().OrderBy) == 0 {
				p.WithPosition(nil)
			}
		}
	}
	// Recorded positions PostgreSQL does not give back unchanged restart
	// their range (trustedRanges).
	if len(opts.Ranges) > 0 {
		trusted := make([][]Range, len(opts.Ranges))
		for i, rs := range opts.Ranges {
			if len(rs) == 0 || i >= len(plans) {
				continue
			}
			var err error
			if trusted[i], err = trustedRanges(ctx, src, plans[i], rs); err != nil {
				return nil, err
			}
		}
		opts.Ranges = trusted
	}
	parts, byEntity, tasks, err := schedule(ctx, src, plans, totals, opts, readers, groups, groupOf)
	if err != nil {
		return nil, err
	}
	srcs := []*extract.Source{src}
	for len(srcs) < min(readers, len(tasks)) {
		f, err := src.Fork(ctx)
		if err != nil {
			for _, f := range srcs[1:] {
				f.Close(context.WithoutCancel(ctx))
			}
			return nil, fmt.Errorf("parallel reader %d of %d: %w (a server that cannot export snapshots, such as some poolers in transaction mode, needs a single reader: Options.Readers 1, --readers 1)", len(srcs)+1, readers, err)
		}
		srcs = append(srcs, f)
	}
	defer func() {
		for _, f := range srcs[1:] {
			f.Close(context.WithoutCancel(ctx))
		}
	}()

	var rejectMu sync.Mutex
	reject := func(r Reject) error {
		rejectMu.Lock()
		defer rejectMu.Unlock()
		st := &states[m.EntityIndex(r.Entity)]
		st.rejected.Add(1)
		st.lastAck.Store(time.Now().UnixNano())
		if opts.OnReject == nil {
			return nil
		}
		return opts.OnReject(r)
	}
	advance := func(entity int, n int) {
		if opts.Progress != nil && n > 0 {
			opts.Progress.Advance(plans[entity].Entity().Name, n)
		}
	}

	// Stopping. The readers stop when ctx is done, a reader fails or a
	// writer fails; the writers then finish the batches already read (so
	// that the summary matches the table), unless a writer failed or
	// WriteGrace has passed since ctx was done.
	rctx, stopReading := context.WithCancelCause(ctx)
	defer stopReading(nil)
	wctx, stopWriting := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopWriting(nil)
	defer context.AfterFunc(ctx, func() {
		time.AfterFunc(WriteGrace, func() { stopWriting(context.Cause(ctx)) })
	})()
	fail := func(err error) error {
		stopWriting(err)
		stopReading(err)
		return err
	}

	var g errgroup.Group
	batches := make(chan batch, conc)
	prog := newProgress(parts, byEntity, opts.OnProgress)
	keyAttrs := [2]string{m.Table.PartitionKey, m.Table.SortKey}

	// readPart reads one part of task t with src. A row's items (two with
	// a mirror) always travel in one batch, so a row is written or
	// rejected as a whole.
	readPart := func(src *extract.Source, sc *scratch, t *task, pt part) error {
		i, p := pt.entity, plans[pt.entity]
		st := &states[i]
		st.started.Do(func() {
			st.start.Store(time.Now().UnixNano())
			if opts.Progress != nil {
				opts.Progress.Start(p.Entity().Name, totals[i])
			}
		})
		cur := newBatch(pt.id, 0)
		sc.check.newBatch()
		owner := t.owner[i] // in its collision group, if it has one
		// Rows read are counted here and added to the entity's count a
		// batch at a time: readers of one entity would otherwise contend
		// for one counter on every row.
		var read int64
		defer func() { st.rows.Add(read) }()
		flush := func() error {
			st.rows.Add(read)
			read = 0
			if len(cur.items) == 0 {
				return nil
			}
			// The batch's position is its last row's, worked out once a batch.
			last := cur.items[len(cur.items)-1]
			cur.position = p.Position(last.Row)
			select {
			case batches <- cur:
			case <-wctx.Done():
				return context.Cause(wctx)
			}
			cur = newBatch(pt.id, cur.seq+1)
			sc.check.newBatch()
			return nil
		}
		q := p.Query()
		if len(q.OrderBy) > 0 {
			q.After, q.Until = pt.r.After, pt.r.Until
		}
		err := src.Stream(rctx, p.Entity().Name, q, func(values []any) error {
			read++
			var err error
			sc.buf, err = sc.items.Items(p, values, sc.buf[:0])
			if err != nil {
				var re *transform.RowError
				if !errors.As(err, &re) {
					return err
				}
				advance(i, 1)
				return reject(Reject{Entity: re.Entity, SourceKey: re.SourceKey, Column: re.Column, Reason: re.Reason})
			}
			if len(cur.items)+len(sc.buf) > load.MaxBatchItems {
				if err := flush(); err != nil {
					return err
				}
			}
			// BatchWriteItem refuses two puts of one key, and writing
			// them in turn would silently keep only the last: the batch
			// is always checked, and a collision group's run-wide set
			// too (keys proven unique by transform.KeysUnique cannot
			// meet any other item's, so they are not remembered).
			if d, dup := sc.check.check(sc.buf, t.seen, owner); dup {
				advance(i, 1)
				return reject(Reject{Entity: p.Entity().Name, SourceKey: p.SourceKey(values), ItemKey: keyMap(d.key, keyAttrs),
					Reason: d.reason(plans, cur.items, keyAttrs)})
			}
			sc.check.accept()
			for j, it := range sc.buf {
				cur.items = append(cur.items, it)
				cur.rowEnd = append(cur.rowEnd, j == len(sc.buf)-1)
			}
			if len(cur.items) == load.MaxBatchItems {
				return flush()
			}
			return nil
		})
		// Whatever stopped the reading, the rows read go to the writers
		// if they still run.
		if ferr := flush(); err == nil {
			err = ferr
		}
		if err == nil {
			err = prog.readDone(pt.id, cur.seq)
		}
		return err
	}

	// Readers: tasks handed out in order, each read whole by one reader;
	// the first error stops them all.
	var rg errgroup.Group
	var nextTask atomic.Int64
	for _, rs := range srcs {
		rg.Go(func() error {
			sc := &scratch{items: transform.NewBuilder(), check: newKeyCheck(keyAttrs)}
			for {
				k := int(nextTask.Add(1)) - 1
				if k >= len(tasks) {
					return nil
				}
				t := &tasks[k]
				for _, pt := range t.parts {
					var err error
					if pt.replay {
						err = replay(rctx, rs, plans[pt.entity], pt, sc, t)
					} else {
						err = readPart(rs, sc, t, pt)
					}
					if err != nil {
						if rctx.Err() != nil {
							err = context.Cause(rctx)
						}
						stopReading(err)
						return err
					}
				}
			}
		})
	}
	g.Go(func() error {
		defer close(batches)
		return rg.Wait()
	})

	// Writers: exactly conc of them on one channel.
	for range conc {
		g.Go(func() error {
			for b := range batches {
				err := sink.Write(wctx, b.items)
				failed := map[int]error{}
				var be *load.BatchError
				switch {
				case err == nil:
				case errors.As(err, &be):
					for _, f := range be.Failed {
						failed[f.Index] = f.Err
					}
				case wctx.Err() != nil:
					return context.Cause(wctx)
				default:
					return fail(err)
				}
				now := time.Now().UnixNano()
				var rowErr error
				var rowKey map[string]string
				for idx, it := range b.items {
					if ferr, bad := failed[idx]; !bad {
						states[it.Entity].items.Add(1)
					} else if rowErr == nil {
						rowErr, rowKey = ferr, keyMap(transform.ItemKey(it.Attrs, keyAttrs), keyAttrs)
					}
					if !b.rowEnd[idx] {
						continue
					}
					st := &states[it.Entity]
					if rowErr != nil {
						p := plans[it.Entity]
						if err := reject(Reject{Entity: p.Entity().Name, SourceKey: p.SourceKey(it.Row),
							ItemKey: rowKey, Reason: rowErr.Error()}); err != nil {
							return fail(err)
						}
						rowErr = nil
					} else {
						st.written.Add(1)
					}
					st.lastAck.Store(now)
					advance(it.Entity, 1)
				}
				if err := prog.ack(b.part, b.seq, b.position); err != nil {
					return fail(err)
				}
			}
			return nil
		})
	}
	err = g.Wait()

	sum := &Summary{Elapsed: time.Since(started)}
	for i, p := range plans {
		st := &states[i]
		es := EntityStats{Name: p.Entity().Name, Total: totals[i], Rows: st.rows.Load(),
			Written: st.written.Load(), Rejected: st.rejected.Load(), Items: st.items.Load()}
		es.NotWritten = es.Rows - es.Written - es.Rejected
		if s, l := st.start.Load(), st.lastAck.Load(); s > 0 && l > s {
			es.Elapsed = time.Duration(l - s)
		}
		sum.Entities = append(sum.Entities, es)
	}
	return sum, err
}

// scratch is one reader's: its Builder, the items of the row being
// converted, and its key check.
type scratch struct {
	items *transform.Builder
	buf   []transform.Item
	check *keyCheck
}

// keysUnique is transform.KeysUnique; tests replace it to check what Run
// does if a proof is wrong.
var keysUnique = transform.KeysUnique

// replay reads part pt of task t (a range of p's entity that an earlier
// run wrote) with src, converts its rows and claims their keys in t's key
// set in the order that run did (primary-key order), so the rows that run
// rejected as duplicates are rejected again and the others hold their
// keys. Nothing is written, counted or listed.
func replay(ctx context.Context, src *extract.Source, p *transform.Plan, pt part, sc *scratch, t *task) error {
	q := p.Query()
	if len(q.OrderBy) > 0 {
		q.After, q.Until = pt.r.After, pt.r.Until
	}
	owner := t.owner[pt.entity]
	// No batch: the set alone holds every claim, those of rows that
	// shared a batch too, so it rejects what the batch check rejected.
	sc.check.newBatch()
	return src.Stream(ctx, p.Entity().Name, q, func(values []any) error {
		var err error
		sc.buf, err = sc.items.Items(p, values, sc.buf[:0])
		var re *transform.RowError
		if errors.As(err, &re) {
			return nil
		}
		if err != nil {
			return err
		}
		sc.check.check(sc.buf, t.seen, owner)
		return nil
	})
}

// split returns the ranges of p's read: one per reader when p reads in
// primary-key order and holds enough rows, else one.
func split(ctx context.Context, src *extract.Source, p *transform.Plan, rows int64, readers int) ([]Range, error) {
	q := p.Query()
	n := int(min(int64(readers), rows/MinRangeRows))
	if len(q.OrderBy) == 0 || n < 2 {
		return []Range{{After: q.After}}, nil
	}
	bounds, err := src.Split(ctx, q, n, rows)
	if err != nil {
		return nil, err
	}
	rs := make([]Range, 0, len(bounds)+1)
	after := q.After
	for _, b := range bounds {
		rs = append(rs, Range{After: after, Until: b})
		after = b
	}
	return append(rs, Range{After: after}), nil
}
