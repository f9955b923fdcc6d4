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
}

// EntityStats is the outcome for one entity.
type EntityStats struct {
	Name string
	// Total is the row count in the snapshot before reading.
	Total int64
	// Rows is the number of rows read.
	Rows int64
	// Written is the number of items written.
	Written int64
	// Rejected is the number of rows listed as rejected.
	Rejected int64
	// Elapsed runs from the first row read to the last write acknowledged.
	Elapsed time.Duration
}

// Summary is the outcome of a run, entities in mapping order.
type Summary struct {
	Entities []EntityStats
	Elapsed  time.Duration
}

// Totals sums the per-entity counts.
func (s *Summary) Totals() (rows, written, rejected int64) {
	for _, e := range s.Entities {
		rows += e.Rows
		written += e.Written
		rejected += e.Rejected
	}
	return
}

// Prepare checks every entity of m against the live source (tables and
// columns exist, key columns have usable types) and compiles its Plan. It
// reads no rows. All problems are returned together as mapping.Errors.
func Prepare(ctx context.Context, src *extract.Source, m *mapping.Mapping) ([]*transform.Plan, error) {
	var errs mapping.Errors
	plans := make([]*transform.Plan, len(m.Entities))
	for i, e := range m.Entities {
		cols, err := src.Describe(ctx, m, e)
		if err != nil {
			var me *mapping.Error
			if errors.As(err, &me) {
				errs = append(errs, me)
				continue
			}
			return nil, err
		}
		p, err := transform.Compile(m, i, cols)
		if err != nil {
			var mes mapping.Errors
			if errors.As(err, &mes) {
				errs = append(errs, mes...)
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

type entityState struct {
	rows, written, rejected atomic.Int64
	start, lastAck          atomic.Int64 // unix nanoseconds
}

type batch struct {
	items []transform.Item
}

// Run migrates the entities of plans from src, which must have begun its
// snapshot (extract.Source.Begin), into sink. One goroutine reads and
// transforms, entities in order; opts.Concurrency writers call sink.Write.
// Rows that cannot become items, and items the sink reports as failed, go
// to opts.OnReject. Run returns the summary so far together with the first
// fatal error (from PostgreSQL, the sink, or ctx).
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

	g, gctx := errgroup.WithContext(ctx)
	batches := make(chan batch, conc)
	keyAttrs := [2]string{m.Table.PartitionKey, m.Table.SortKey}

	// Reader: one snapshot, entities in order.
	g.Go(func() error {
		defer close(batches)
		cur := batch{items: make([]transform.Item, 0, load.MaxBatchItems)}
		inBatch := make(map[[2]string]int, load.MaxBatchItems)
		flush := func() error {
			if len(cur.items) == 0 {
				return nil
			}
			select {
			case batches <- cur:
			case <-gctx.Done():
				return gctx.Err()
			}
			cur = batch{items: make([]transform.Item, 0, load.MaxBatchItems)}
			clear(inBatch)
			return nil
		}
		for i, p := range plans {
			st := &states[i]
			st.start.Store(time.Now().UnixNano())
			if opts.Progress != nil {
				opts.Progress.Start(p.Entity().Name, totals[i])
			}
			err := src.Stream(gctx, p.Entity(), p.Columns(), func(values []any) error {
				st.rows.Add(1)
				it, err := p.Item(values)
				if err != nil {
					var re *transform.RowError
					if !errors.As(err, &re) {
						return err
					}
					advance(i, 1)
					return reject(Reject{Entity: re.Entity, SourceKey: re.SourceKey, Column: re.Column, Reason: re.Reason})
				}
				k := itemKey(it.Attrs, keyAttrs)
				if j, dup := inBatch[k]; dup {
					// BatchWriteItem refuses two puts of one key; writing
					// them in turn would silently keep only the last.
					prev := cur.items[j]
					advance(i, 1)
					return reject(Reject{Entity: p.Entity().Name, SourceKey: p.SourceKey(values),
						ItemKey: keyMap(k, keyAttrs),
						Reason: fmt.Sprintf("duplicate primary key: row %s of entity %s produces the same item key",
							transform.FormatSourceKey(plans[prev.Entity].SourceKey(prev.Row)), plans[prev.Entity].Entity().Name)})
				}
				inBatch[k] = len(cur.items)
				cur.items = append(cur.items, it)
				if len(cur.items) == load.MaxBatchItems {
					return flush()
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return flush()
	})

	// Writers: exactly conc of them on one channel.
	for range conc {
		g.Go(func() error {
			for b := range batches {
				err := sink.Write(gctx, b.items)
				failed := map[int]error{}
				var be *load.BatchError
				switch {
				case err == nil:
				case errors.As(err, &be):
					for _, f := range be.Failed {
						failed[f.Index] = f.Err
					}
				default:
					return err
				}
				now := time.Now().UnixNano()
				for idx, it := range b.items {
					st := &states[it.Entity]
					if ferr, bad := failed[idx]; bad {
						p := plans[it.Entity]
						if err := reject(Reject{Entity: p.Entity().Name, SourceKey: p.SourceKey(it.Row),
							ItemKey: keyMap(itemKey(it.Attrs, keyAttrs), keyAttrs), Reason: ferr.Error()}); err != nil {
							return err
						}
					} else {
						st.written.Add(1)
					}
					st.lastAck.Store(now)
					advance(it.Entity, 1)
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
			Written: st.written.Load(), Rejected: st.rejected.Load()}
		if s, l := st.start.Load(), st.lastAck.Load(); s > 0 && l > s {
			es.Elapsed = time.Duration(l - s)
		}
		sum.Entities = append(sum.Entities, es)
	}
	return sum, err
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
