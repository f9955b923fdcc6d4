package follow

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Applier brings the table in step with a window of changes: it derives
// again, from the source as it is now, the items the changes affect
// (Graph), puts them, and deletes the items of rows that are gone or whose
// keys changed. Reading the source's present state, not the change's row
// image, makes applying idempotent and order-safe: a window applied twice,
// or a change replayed after a crash, writes the same items, and once
// every change is applied the table holds exactly what a full load would
// write.
type Applier struct {
	graph    *Graph
	src      *extract.Source
	sink     load.Sink
	keyAttrs [2]string
	b        *transform.Builder
	// OnReject is told of rows whose items cannot be written (nil:
	// counted only). Concurrency is the number of parallel Writes.
	OnReject    func(pipeline.Reject) error
	Concurrency int
}

// NewApplier returns an applier of g's changes reading src (a session of
// its own, outside any snapshot: each window reads in its own) and writing
// to sink.
func NewApplier(g *Graph, m *mapping.Mapping, src *extract.Source, sink load.Sink) *Applier {
	return &Applier{graph: g, src: src, sink: sink, keyAttrs: [2]string{m.Table.PartitionKey, m.Table.SortKey},
		b: transform.NewBuilder(), Concurrency: 8}
}

// Applied counts what one window did.
type Applied struct {
	// Changes is the number of row changes of followed tables.
	Changes int
	// Puts and Deletes are the items written and deleted; Rejected the
	// rows whose items could not be written.
	Puts, Deletes, Rejected int
}

// Apply applies the changes of txs, in one snapshot taken after their
// commits. It returns when the sink has acknowledged every item.
func (a *Applier) Apply(ctx context.Context, txs []*Tx) (Applied, error) {
	aff := newAffected()
	for _, tx := range txs {
		for _, c := range tx.Changes {
			a.graph.add(aff, c)
		}
	}
	out := Applied{Changes: aff.changes}
	if aff.changes == 0 {
		return out, nil
	}
	if err := a.src.Begin(ctx); err != nil {
		return out, err
	}
	w, err := a.derive(ctx, aff)
	a.src.End(ctx)
	if err != nil {
		return out, err
	}
	out.Puts, out.Deletes = len(w.puts), len(w.deletes)
	out.Rejected, err = a.write(ctx, w)
	out.Rejected += w.rejected
	return out, err
}

// work is what a window writes: items to put and keys to delete, each key
// once, in a stable order.
type work struct {
	puts     []transform.Item
	deletes  [][2]string
	seen     map[[2]string]bool
	rejected int
}

// derive reads the rows aff names and renders what to write.
func (a *Applier) derive(ctx context.Context, aff *affected) (*work, error) {
	w := &work{seen: map[[2]string]bool{}}
	for _, k := range sortedKeys(aff.matches) {
		mt := aff.matches[k]
		p := a.graph.plans[mt.entity]
		var buf []transform.Item
		err := a.src.Stream(ctx, p.Entity().Name, a.graph.query(mt), func(values []any) error {
			var err error
			buf, err = a.b.Items(p, values, buf[:0])
			var re *transform.RowError
			if errors.As(err, &re) {
				w.rejected++
				return a.reject(pipeline.Reject{Entity: re.Entity, SourceKey: re.SourceKey, Column: re.Column, Reason: re.Reason})
			}
			if err != nil {
				return err
			}
			for _, it := range buf {
				if key := transform.ItemKey(it.Attrs, a.keyAttrs); !w.seen[key] {
					w.seen[key] = true
					w.puts = append(w.puts, it)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return w, a.gone(ctx, aff, w)
}

// gone adds to w the keys the affected rows' old and new images render
// that no row renders now: items of rows deleted, or of keys changed.
func (a *Applier) gone(ctx context.Context, aff *affected, w *work) error {
	entities := make([]int, 0, len(aff.images))
	for e := range aff.images {
		entities = append(entities, e)
	}
	sort.Ints(entities)
	for _, e := range entities {
		p := a.graph.plans[e]
		q := p.Query()
		err := a.src.Images(ctx, p.Entity().Name, q, aff.images[e], func(values []any) error {
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

// write hands w to the sink in batches of load.MaxBatchItems, Concurrency
// at a time, and returns the number of rows rejected.
func (a *Applier) write(ctx context.Context, w *work) (int, error) {
	items := append([]transform.Item(nil), w.puts...)
	for _, k := range w.deletes {
		attrs := map[string]types.AttributeValue{a.keyAttrs[0]: &types.AttributeValueMemberS{Value: k[0]}}
		if a.keyAttrs[1] != "" {
			attrs[a.keyAttrs[1]] = &types.AttributeValueMemberS{Value: k[1]}
		}
		items = append(items, transform.Item{Entity: -1, Attrs: attrs, Delete: true})
	}
	var g errgroup.Group
	g.SetLimit(max(a.Concurrency, 1))
	rejects := make([][]pipeline.Reject, (len(items)+load.MaxBatchItems-1)/load.MaxBatchItems)
	for n, start := 0, 0; start < len(items); n, start = n+1, start+load.MaxBatchItems {
		batch := items[start:min(start+load.MaxBatchItems, len(items))]
		g.Go(func() error {
			err := a.sink.Write(ctx, batch)
			var be *load.BatchError
			if !errors.As(err, &be) {
				return err
			}
			for _, f := range be.Failed {
				it := batch[f.Index]
				if it.Delete {
					return fmt.Errorf("delete %v: %w", transform.ItemKey(it.Attrs, a.keyAttrs), f.Err)
				}
				p := a.graph.plans[it.Entity]
				rejects[n] = append(rejects[n], pipeline.Reject{Entity: p.Entity().Name, SourceKey: p.SourceKey(it.Row),
					ItemKey: map[string]string{a.keyAttrs[0]: transform.ItemKey(it.Attrs, a.keyAttrs)[0]}, Reason: f.Err.Error()})
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	n := 0
	for _, rs := range rejects {
		for _, r := range rs {
			n++
			if err := a.reject(r); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}
