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
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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
	// render the same primary key (about 11 bytes of memory per item of
	// the entities whose keys transform.KeysUnique cannot prove unique).
	// Duplicates within one batch are still caught.
	SkipDuplicateCheck bool
	// Skip marks entities (by index) not to read at all: a resumed run's
	// entities already written.
	Skip []bool
	// Ranges holds, per entity (by index), the ranges a resumed run reads,
	// as OnProgress last reported them: ranges Done are not read, the
	// others from their After. An entity without recorded ranges is split
	// afresh.
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
// columns exist, key columns have usable types) and compiles its Plan. It
// reads no rows. All problems are returned together as mapping.Errors.
func Prepare(ctx context.Context, src *extract.Source, m *mapping.Mapping) ([]*transform.Plan, error) {
	var errs mapping.Errors
	all := make([]*transform.Sources, len(m.Entities))
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
		all[i] = &srcs
	}
	plans, err := transform.CompileAll(m, all)
	if err != nil {
		var mes mapping.Errors
		if !errors.As(err, &mes) {
			return nil, err
		}
		errs = append(errs, mes...)
	}
	for i, p := range plans {
		if p == nil || len(p.Query().Joins) == 0 {
			continue
		}
		if err := src.CheckQuery(ctx, m, m.Entities[i].Name, p.Query()); err != nil {
			var me *mapping.Error
			if !errors.As(err, &me) {
				return nil, err
			}
			errs = append(errs, me)
		}
	}
	if len(errs) > 0 {
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
	id     int // index in the run's parts
	r      Range
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

	// The parts: each entity's ranges as recorded (a resumed run), or
	// split afresh.
	var parts []part
	var toRead []int
	byEntity := make([][]int, len(plans))
	for i, p := range plans {
		if i < len(opts.Skip) && opts.Skip[i] {
			continue
		}
		var rs []Range
		if i < len(opts.Ranges) && len(opts.Ranges[i]) > 0 {
			var err error
			if rs, err = trustedRanges(ctx, src, p, opts.Ranges[i]); err != nil {
				return nil, err
			}
		} else {
			var err error
			if rs, err = split(ctx, src, p, totals[i], readers); err != nil {
				return nil, err
			}
		}
		for _, r := range rs {
			id := len(parts)
			parts = append(parts, part{entity: i, id: id, r: r})
			byEntity[i] = append(byEntity[i], id)
			if !r.Done {
				toRead = append(toRead, id)
			}
		}
	}
	srcs := []*extract.Source{src}
	for len(srcs) < min(readers, len(toRead)) {
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
	seen := newKeySet(!opts.SkipDuplicateCheck)
	unique := transform.KeysUnique(m, plans)

	// readPart reads one part with src. A row's items (two with a mirror)
	// always travel in one batch, so a row is written or rejected as a
	// whole.
	type scratch struct {
		items   *transform.Builder
		inBatch map[[2]string]int
		buf     []transform.Item
		keys    [][2]string
	}
	readPart := func(src *extract.Source, sc *scratch, pt part) error {
		i, p := pt.entity, plans[pt.entity]
		st := &states[i]
		st.started.Do(func() {
			st.start.Store(time.Now().UnixNano())
			if opts.Progress != nil {
				opts.Progress.Start(p.Entity().Name, totals[i])
			}
		})
		cur := newBatch(pt.id, 0)
		clear(sc.inBatch)
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
			clear(sc.inBatch)
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
			// A row is checked whole before any of its keys is
			// remembered, so a rejected row leaves no trace.
			// BatchWriteItem refuses two puts of one key, and writing
			// them in turn would silently keep only the last.
			//
			// Keys proven unique (transform.KeysUnique) cannot meet
			// any other item's: no memory, no lookups.
			sc.keys = sc.keys[:0]
			dup := func(k [2]string) error {
				advance(i, 1)
				reason := "duplicate primary key: an earlier row produced the same item key"
				switch {
				case slices.Contains(sc.keys, k):
					reason = "duplicate primary key: the row's own items (a mirror of itself) have the same key"
				case sc.inBatch[k] > 0:
					prev := cur.items[sc.inBatch[k]-1]
					reason = fmt.Sprintf("duplicate primary key: row %s of entity %s produces the same item key",
						transform.FormatSourceKey(plans[prev.Entity].SourceKey(prev.Row)), plans[prev.Entity].Entity().Name)
				}
				return reject(Reject{Entity: p.Entity().Name, SourceKey: p.SourceKey(values), ItemKey: keyMap(k, keyAttrs), Reason: reason})
			}
			if !unique[i] {
				for _, it := range sc.buf {
					k := itemKey(it.Attrs, keyAttrs)
					if slices.Contains(sc.keys, k) || sc.inBatch[k] > 0 {
						return dup(k)
					}
					sc.keys = append(sc.keys, k)
				}
				if k, ok := seen.addAll(sc.keys); !ok {
					return dup(k)
				}
				for j := range sc.keys {
					sc.inBatch[sc.keys[j]] = len(cur.items) + j + 1 // 0 means absent
				}
			}
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

	// Readers: parts handed out in order; the first error stops them all.
	var rg errgroup.Group
	var nextPart atomic.Int64
	for _, rs := range srcs {
		rg.Go(func() error {
			sc := &scratch{items: transform.NewBuilder(), inBatch: make(map[[2]string]int, load.MaxBatchItems)}
			for {
				k := int(nextPart.Add(1)) - 1
				if k >= len(toRead) {
					return nil
				}
				if err := readPart(rs, sc, parts[toRead[k]]); err != nil {
					if rctx.Err() != nil {
						err = context.Cause(rctx)
					}
					stopReading(err)
					return err
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
						rowErr, rowKey = ferr, keyMap(itemKey(it.Attrs, keyAttrs), keyAttrs)
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
	err := g.Wait()

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

// keySet remembers a 64-bit hash of every primary key written in a run, to
// catch two rows that render one key. It is an open-addressing table of
// hashes (linear probing, at most 3/4 full): 8 to 16 bytes per item, about
// 11 on average. Disabled, it catches only duplicates within one batch.
// Two different keys share a 64-bit hash with probability about n²/2⁶⁵
// (1 in 36 million for 1M items); the later row would then be rejected as
// a duplicate, not lost.
type keySet struct {
	mu    sync.Mutex
	on    bool
	h     maphash.Hash
	slots []uint64 // 0 marks an empty slot
	n     int
}

func newKeySet(on bool) *keySet {
	s := &keySet{on: on}
	s.h.SetSeed(maphash.MakeSeed())
	if on {
		s.slots = make([]uint64, 1<<12)
	}
	return s
}

// sum hashes a key; never 0, the empty mark.
func (s *keySet) sum(k [2]string) uint64 {
	s.h.Reset()
	s.h.WriteString(k[0])
	s.h.WriteByte(0)
	s.h.WriteString(k[1])
	return s.h.Sum64() | 1
}

// addAll records the keys of one row, all or none: it returns the first
// key added before, and false, or true when none was. Always true when
// disabled. Safe for concurrent use.
func (s *keySet) addAll(keys [][2]string) ([2]string, bool) {
	if !s.on {
		return [2]string{}, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if s.has(s.sum(k)) {
			return k, false
		}
	}
	for _, k := range keys {
		if s.insert(s.sum(k)) {
			continue
		}
		s.n++
		if s.n*4 > len(s.slots)*3 {
			old := s.slots
			s.slots = make([]uint64, 2*len(old))
			for _, v := range old {
				if v != 0 {
					s.insert(v)
				}
			}
		}
	}
	return [2]string{}, true
}

// has reports whether hash v is in the table.
func (s *keySet) has(v uint64) bool {
	mask := uint64(len(s.slots) - 1)
	for i := v & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case v:
			return true
		case 0:
			return false
		}
	}
}

// insert puts v in the table and reports whether it was already there.
func (s *keySet) insert(v uint64) bool {
	mask := uint64(len(s.slots) - 1)
	for i := v & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case v:
			return true
		case 0:
			s.slots[i] = v
			return false
		}
	}
}

func itemKey(attrs map[string]types.AttributeValue, keyAttrs [2]string) [2]string {
	var k [2]string
	for i, a := range keyAttrs {
		if s, ok := attrs[a].(*types.AttributeValueMemberS); ok {
			k[i] = s.Value
		}
	}
	return k
}

func keyMap(k [2]string, keyAttrs [2]string) map[string]string {
	return map[string]string{keyAttrs[0]: k[0], keyAttrs[1]: k[1]}
}
