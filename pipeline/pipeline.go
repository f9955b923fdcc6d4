// Package pipeline runs a migration: it reads every entity from one
// PostgreSQL snapshot, converts rows to items and hands them in batches to
// a fixed number of writers over bounded channels, so a slow sink slows the
// reader and memory stays flat. Every source row ends up written or listed
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
	// SkipDuplicateCheck turns off the run-wide check that no two rows
	// render the same primary key (about 11 bytes of memory per item).
	// Duplicates within one batch are still caught.
	SkipDuplicateCheck bool
	// Skip marks entities (by index) not to read at all: a resumed run's
	// entities already written.
	Skip []bool
	// OnProgress, if set, is called, one call at a time, each time the
	// written prefix of an entity's read advances: position is the last
	// row (transform.Plan.Position) before which every row is written or
	// rejected, done that the whole entity is. Plans that read in no order
	// report done only. An error from it stops the run.
	OnProgress func(entity int, position []string, done bool) error
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
	plans := make([]*transform.Plan, len(m.Entities))
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
		p, err := transform.Compile(m, i, srcs)
		if err == nil && len(p.Query().Joins) > 0 {
			err = src.CheckQuery(ctx, m, e.Name, p.Query())
		}
		if err != nil {
			var mes mapping.Errors
			var me *mapping.Error
			switch {
			case errors.As(err, &mes):
				errs = append(errs, mes...)
				continue
			case errors.As(err, &me):
				errs = append(errs, me)
				continue
			}
			return nil, err
		}
		plans[i] = p
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
}

// batch is what one Write gets: up to 25 items, whole rows only; rowEnd
// marks the last item of each row.
type batch struct {
	items  []transform.Item
	rowEnd []bool
	// entity, seq and position place the batch in its entity's read:
	// batches hold the rows of one entity, numbered from 0; position is
	// that of the batch's last row.
	entity, seq int
	position    []string
}

func newBatch() batch {
	return batch{items: make([]transform.Item, 0, load.MaxBatchItems), rowEnd: make([]bool, 0, load.MaxBatchItems)}
}

// progress finds, per entity, the prefix of batches all acknowledged, for
// OnProgress. Safe for concurrent use.
type progress struct {
	mu      sync.Mutex
	fn      func(entity int, position []string, done bool) error
	next    []int
	acked   []map[int][]string
	total   []int // batches of an entity once its read is over, else -1
	lastPos [][]string
}

func newProgress(n int, fn func(int, []string, bool) error) *progress {
	p := &progress{fn: fn, next: make([]int, n), acked: make([]map[int][]string, n), total: make([]int, n), lastPos: make([][]string, n)}
	for i := range p.acked {
		p.acked[i] = map[int][]string{}
		p.total[i] = -1
	}
	return p
}

// ack records batch seq of entity as handled.
func (p *progress) ack(entity, seq int, position []string) error {
	if p.fn == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.acked[entity][seq] = position
	moved := false
	for {
		pos, ok := p.acked[entity][p.next[entity]]
		if !ok {
			break
		}
		delete(p.acked[entity], p.next[entity])
		p.next[entity]++
		p.lastPos[entity] = pos
		moved = true
	}
	if !moved {
		return nil
	}
	return p.fn(entity, p.lastPos[entity], p.next[entity] == p.total[entity])
}

// readDone records that entity's read ended after batches batches.
func (p *progress) readDone(entity, batches int) error {
	if p.fn == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total[entity] = batches
	if p.next[entity] == batches {
		return p.fn(entity, p.lastPos[entity], true)
	}
	return nil
}

// Run migrates the entities of plans from src, which must have begun its
// snapshot (extract.Source.Begin), into sink. One goroutine reads and
// transforms, entities in order; opts.Concurrency writers call sink.Write.
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
	states := make([]entityState, len(plans))
	totals := make([]int64, len(plans))
	for i, p := range plans {
		n, err := src.Count(ctx, p.Entity())
		if err != nil {
			return nil, err
		}
		totals[i] = n
	}

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

	// Stopping. The reader stops when ctx is done or a writer fails; the
	// writers then finish the batches already read (so that the summary
	// matches the table), unless a writer failed or WriteGrace has passed
	// since ctx was done.
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
	prog := newProgress(len(plans), opts.OnProgress)
	keyAttrs := [2]string{m.Table.PartitionKey, m.Table.SortKey}

	// Reader: one snapshot, entities in order. A row's items (two with a
	// mirror) always travel in one batch, so a row is written or rejected
	// as a whole.
	g.Go(func() error {
		defer close(batches)
		cur := newBatch()
		inBatch := make(map[[2]string]int, load.MaxBatchItems)
		seen := newKeySet(!opts.SkipDuplicateCheck)
		var buf []transform.Item
		var keys [][2]string
		flush := func() error {
			if len(cur.items) == 0 {
				return nil
			}
			// The batch's position is its last row's, worked out once a batch.
			last := cur.items[len(cur.items)-1]
			cur.position = plans[last.Entity].Position(last.Row)
			select {
			case batches <- cur:
			case <-wctx.Done():
				return context.Cause(wctx)
			}
			cur = batch{items: make([]transform.Item, 0, load.MaxBatchItems), rowEnd: make([]bool, 0, load.MaxBatchItems),
				entity: cur.entity, seq: cur.seq + 1}
			clear(inBatch)
			return nil
		}
		var err error
		for i, p := range plans {
			if i < len(opts.Skip) && opts.Skip[i] {
				continue
			}
			st := &states[i]
			st.start.Store(time.Now().UnixNano())
			if opts.Progress != nil {
				opts.Progress.Start(p.Entity().Name, totals[i])
			}
			cur.entity, cur.seq = i, 0
			err = src.Stream(rctx, p.Entity().Name, p.Query(), func(values []any) error {
				st.rows.Add(1)
				var err error
				buf, err = p.Items(values, buf[:0])
				if err != nil {
					var re *transform.RowError
					if !errors.As(err, &re) {
						return err
					}
					advance(i, 1)
					return reject(Reject{Entity: re.Entity, SourceKey: re.SourceKey, Column: re.Column, Reason: re.Reason})
				}
				if len(cur.items)+len(buf) > load.MaxBatchItems {
					if err := flush(); err != nil {
						return err
					}
				}
				// A row is checked whole before any of its keys is
				// remembered, so a rejected row leaves no trace.
				// BatchWriteItem refuses two puts of one key, and writing
				// them in turn would silently keep only the last.
				keys = keys[:0]
				for _, it := range buf {
					k := itemKey(it.Attrs, keyAttrs)
					reason := ""
					switch {
					case slices.Contains(keys, k):
						reason = "duplicate primary key: the row's own items (a mirror of itself) have the same key"
					case inBatch[k] > 0:
						prev := cur.items[inBatch[k]-1]
						reason = fmt.Sprintf("duplicate primary key: row %s of entity %s produces the same item key",
							transform.FormatSourceKey(plans[prev.Entity].SourceKey(prev.Row)), plans[prev.Entity].Entity().Name)
					case seen.has(k):
						reason = "duplicate primary key: an earlier row produced the same item key"
					}
					if reason != "" {
						advance(i, 1)
						return reject(Reject{Entity: p.Entity().Name, SourceKey: p.SourceKey(values), ItemKey: keyMap(k, keyAttrs), Reason: reason})
					}
					keys = append(keys, k)
				}
				for _, k := range keys {
					seen.add(k)
				}
				for j, it := range buf {
					inBatch[keys[j]] = len(cur.items) + 1 // 0 means absent
					cur.items = append(cur.items, it)
					cur.rowEnd = append(cur.rowEnd, j == len(buf)-1)
				}
				if len(cur.items) == load.MaxBatchItems {
					return flush()
				}
				return nil
			})
			if err != nil {
				break
			}
			// Batches hold one entity's rows: hand over the last one.
			if err = flush(); err != nil {
				break
			}
			if err = prog.readDone(i, cur.seq); err != nil {
				break
			}
		}
		// Whatever stopped the reading, the rows read go to the writers
		// if they still run.
		if ferr := flush(); err == nil {
			err = ferr
		}
		if err != nil && rctx.Err() != nil {
			return context.Cause(rctx)
		}
		return err
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
				if err := prog.ack(b.entity, b.seq, b.position); err != nil {
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

// keySet remembers a 64-bit hash of every primary key written in a run, to
// catch two rows that render one key. It is an open-addressing table of
// hashes (linear probing, at most 3/4 full): 8 to 16 bytes per item, about
// 11 on average. Disabled, it catches only duplicates within one batch.
// Two different keys share a 64-bit hash with probability about n²/2⁶⁵
// (1 in 36 million for 1M items); the later row would then be rejected as
// a duplicate, not lost.
type keySet struct {
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

// has reports whether k was added before (always false when disabled).
func (s *keySet) has(k [2]string) bool {
	if !s.on {
		return false
	}
	v := s.sum(k)
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

// add records k.
func (s *keySet) add(k [2]string) {
	if !s.on {
		return
	}
	if s.insert(s.sum(k)) {
		return
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
