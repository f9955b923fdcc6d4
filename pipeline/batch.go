package pipeline

import (
	"context"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// batch is what one Write gets: up to load.MaxBatchItems items of one
// entity, whole rows only; rowEnd marks the last item of each row.
type batch struct {
	items  []transform.Item
	rowEnd []bool
	// entity is the index in plans of the items' entity.
	entity int
	// part and seq place the batch in its part's read: batches hold the
	// rows of one part, numbered from 0; position is that of the batch's
	// last row (nil when the part reads in no order).
	part, seq int
	position  []string
}

// batcher packs the rows one reader reads of one part into batches and
// hands each, full or at the end of the part, to the writers. A row's
// items (two with a mirror) always travel in one batch, so a row is
// written or rejected as a whole.
type batcher struct {
	out  chan<- batch
	stop context.Context // the writers'; a send waits no longer
	plan *transform.Plan
	cur  batch
	// read counts the rows read since the last flush; they are added to
	// the entity's count a batch at a time (readers of one entity would
	// otherwise contend for one counter on every row).
	read  int64
	stats *stats
}

func newBatcher(out chan<- batch, stop context.Context, p *transform.Plan, pt part, st *stats) *batcher {
	b := &batcher{out: out, stop: stop, plan: p, stats: st}
	b.cur = b.fresh(pt.entity, pt.id, 0)
	return b
}

func (b *batcher) fresh(entity, part, seq int) batch {
	return batch{items: make([]transform.Item, 0, load.MaxBatchItems), rowEnd: make([]bool, 0, load.MaxBatchItems),
		entity: entity, part: part, seq: seq}
}

// fits reports whether a row of n items fits in b.
func (b *batch) fits(n int) bool { return len(b.items)+n <= load.MaxBatchItems }

// add appends one row's items; it reports whether b is now full.
func (b *batch) add(items []transform.Item) bool {
	for j, it := range items {
		b.items = append(b.items, it)
		b.rowEnd = append(b.rowEnd, j == len(items)-1)
	}
	return len(b.items) == load.MaxBatchItems
}

// flush hands the current batch, if it holds a row, to the writers, and
// starts the next. It returns the writers' stop cause when they stopped.
func (b *batcher) flush() error {
	b.stats.entities[b.cur.entity].rows.Add(b.read)
	b.read = 0
	if len(b.cur.items) == 0 {
		return nil
	}
	// The batch's position is its last row's, worked out once a batch.
	b.cur.position = b.plan.Position(b.cur.items[len(b.cur.items)-1].Row)
	select {
	case b.out <- b.cur:
	case <-b.stop.Done():
		return context.Cause(b.stop)
	}
	b.cur = b.fresh(b.cur.entity, b.cur.part, b.cur.seq+1)
	return nil
}

// sent is the number of batches handed to the writers.
func (b *batcher) sent() int { return b.cur.seq }
