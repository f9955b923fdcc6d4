package verify

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

type ranker interface {
	SortColumns(ctx context.Context, src mapping.Source, cols []extract.Column) ([]extract.SortColumn, error)
	Rank(ctx context.Context, cols []extract.SortColumn, tuples [][]any, desc bool) ([]int64, [][]string, error)
}

// orderChecker checks Query answer order against PostgreSQL, caching column
// descriptions. Not safe for concurrent use.
type orderChecker struct {
	src   ranker
	plans []*transform.Plan
	// cols caches columns by entity, mirror and sort attribute; sortCols
	// SortColumns by entity and columns.
	cols     map[orderColsKey]*orderCols
	sortCols map[string][]extract.SortColumn
	chunk    int
}

// newOrderChecker returns the order checker of plans, whose key slots say what
// each sort key is made of.
func newOrderChecker(src ranker, _ *mapping.Mapping, plans []*transform.Plan) *orderChecker {
	return &orderChecker{src: src, plans: plans, cols: map[orderColsKey]*orderCols{}, sortCols: map[string][]extract.SortColumn{},
		chunk: orderChunk}
}

type orderColsKey struct {
	entity   int
	mirror   bool
	sortAttr string
}

// orderCols are the source columns, in template order, whose order an entity's
// (or mirror's) items keep along a sort key.
type orderCols struct {
	tpl   mapping.Template
	names []string
	// idx are the columns' positions in transform.Item.Row, cols their
	// descriptions.
	idx  []int
	cols []extract.Column
}

// orderChunk is how many items of one group a Rank call sends, so memory holds
// a chunk per group whatever the answer's length.
const orderChunk = 4096

// columns returns the columns entity's (or its mirror's) items are ordered by
// along sortAttr, or nil without an order to keep: no sort attribute, no
// template, or literals only.
func (o *orderChecker) columns(entity int, mirror bool, sortAttr string) (*orderCols, error) {
	if sortAttr == "" {
		return nil, nil
	}
	k := orderColsKey{entity, mirror, sortAttr}
	if c, ok := o.cols[k]; ok {
		return c, nil
	}
	p := o.plans[entity]
	e := p.Entity()
	slot, ok := p.KeySlots().Find(sortAttr, mirror)
	if !ok {
		o.cols[k] = nil
		return nil, nil
	}
	tpl := slot.Template
	c := &orderCols{tpl: tpl, names: tpl.Columns()}
	if len(c.names) == 0 {
		o.cols[k] = nil
		return nil, nil
	}
	qcols := p.Query().Columns
	for _, n := range c.names {
		i := slices.IndexFunc(qcols, func(c extract.Column) bool { return c.Name == n })
		if i < 0 {
			// A stable ID or a duplicated parent column is not a source column
			// PostgreSQL can order here.
			if p.Derived(n) {
				o.cols[k] = nil
				return nil, nil
			}
			return nil, fmt.Errorf("order check: entity %s reads no column %q of its sort key template %q", e.Name, n, tpl.Source)
		}
		c.idx = append(c.idx, i)
		c.cols = append(c.cols, qcols[i])
	}
	o.cols[k] = c
	return c, nil
}

// values returns the values of row that the item's order along sortAttr depends
// on, in columns order; nil without an order.
func (o *orderChecker) values(entity int, mirror bool, sortAttr string, row []any) ([]any, error) {
	c, err := o.columns(entity, mirror, sortAttr)
	if c == nil || err != nil {
		return nil, err
	}
	vals := make([]any, len(c.idx))
	for j, i := range c.idx {
		vals[j] = row[i]
	}
	return vals, nil
}

// check takes a Query's answer in DynamoDB's order (each item with entity and
// orderChecker.values) and returns the first pair of one entity and template
// whose order PostgreSQL contradicts, or nil. See orderStream.
func (o *orderChecker) check(ctx context.Context, items []wantItem, sortAttr string, desc bool) (*outcome.OrderMismatch, error) {
	st := o.stream(sortAttr, desc)
	for _, it := range items {
		if err := st.add(ctx, it.entity, it.mirror, it.sort, it.vals); err != nil {
			return nil, err
		}
	}
	return st.finish(ctx)
}

// orderStream checks one Query answer's order as items arrive, holding
// orderChunk items per group. sortAttr is the index's sort attribute (none:
// nothing to check); desc when ScanIndexForward is false. An entity's items of
// one template form a group; equal sort keys form blocks in no defined order.
// Each block's lowest item in PostgreSQL's order must not come strictly before
// the previous block's highest. PostgreSQL ranks a chunk at a time, with the
// previous block's highest and the open block's lowest and highest carried over
// so ranks compare across chunks. Values PostgreSQL cannot order (point, xml)
// have no order to keep.
type orderStream struct {
	o        *orderChecker
	sortAttr string
	desc     bool
	pos      int // items added
	groups   []*orderGroup
}

type orderGroup struct {
	entity int
	mirror bool
	cols   *orderCols // nil: no order to keep
	sc     []extract.SortColumn
	n      int // items added
	chunk  []*orderItem
	// prevMax is the last closed block's highest item; lo and hi the open
	// block's lowest and highest, of sort key key.
	prevMax, lo, hi *orderItem
	key             string
	done            bool // a mismatch found, or no order to keep
	mm              *outcome.OrderMismatch
}

// orderItem is a group's item: 1-based answer position, sort key, source
// values, and once ranked its rank in the current Rank call and its values'
// text.
type orderItem struct {
	pos   int
	key   string
	vals  []any
	rank  int64
	texts []string
}

func (o *orderChecker) stream(sortAttr string, desc bool) *orderStream {
	return &orderStream{o: o, sortAttr: sortAttr, desc: desc}
}

// add takes the answer's next item.
func (s *orderStream) add(ctx context.Context, entity int, mirror bool, key string, vals []any) error {
	s.pos++
	if s.sortAttr == "" {
		return nil
	}
	j := slices.IndexFunc(s.groups, func(g *orderGroup) bool { return g.entity == entity && g.mirror == mirror })
	if j < 0 {
		cols, err := s.o.columns(entity, mirror, s.sortAttr)
		if err != nil {
			return err
		}
		s.groups = append(s.groups, &orderGroup{entity: entity, mirror: mirror, cols: cols, done: cols == nil})
		j = len(s.groups) - 1
	}
	g := s.groups[j]
	g.n++
	if g.done {
		return nil
	}
	g.chunk = append(g.chunk, &orderItem{pos: s.pos, key: key, vals: vals})
	if len(g.chunk) >= s.o.chunk {
		return s.flush(ctx, g, false)
	}
	return nil
}

// finish checks what is left and returns the first group's mismatch in answer
// order, or nil.
func (s *orderStream) finish(ctx context.Context) (*outcome.OrderMismatch, error) {
	for _, g := range s.groups {
		if err := s.flush(ctx, g, true); err != nil {
			return nil, err
		}
	}
	for _, g := range s.groups {
		if g.mm != nil {
			return g.mm, nil
		}
	}
	return nil, nil
}

// flush ranks g's chunk with the carried items and walks its blocks, closing
// the open block on the last flush.
func (s *orderStream) flush(ctx context.Context, g *orderGroup, last bool) error {
	if g.done || g.n < 2 {
		return nil
	}
	if len(g.chunk) > 0 {
		if err := s.rank(ctx, g); err != nil || g.done {
			return err
		}
		for _, it := range g.chunk {
			if g.lo != nil && it.key == g.key {
				if it.rank < g.lo.rank {
					g.lo = it
				}
				if it.rank > g.hi.rank {
					g.hi = it
				}
				continue
			}
			if s.closeBlock(g) {
				return nil
			}
			g.lo, g.hi, g.key = it, it, it.key
		}
		g.chunk = g.chunk[:0]
	}
	if last {
		s.closeBlock(g)
	}
	return nil
}

// rank asks PostgreSQL for the ranks of the carried items and the chunk.
func (s *orderStream) rank(ctx context.Context, g *orderGroup) error {
	e := s.o.plans[g.entity].Entity()
	if g.sc == nil {
		cacheKey := e.Name + "\x00" + strings.Join(g.cols.names, "\x00")
		sc, ok := s.o.sortCols[cacheKey]
		if !ok {
			var err error
			if sc, err = s.o.src.SortColumns(ctx, e.Source, g.cols.cols); err != nil {
				return fmt.Errorf("order check of %s: %w", e.Name, err)
			}
			s.o.sortCols[cacheKey] = sc
		}
		g.sc = sc
	}
	var items []*orderItem
	for _, c := range []*orderItem{g.prevMax, g.lo, g.hi} {
		if c != nil && !slices.Contains(items, c) {
			items = append(items, c)
		}
	}
	items = append(items, g.chunk...)
	tuples := make([][]any, len(items))
	for i, it := range items {
		tuples[i] = it.vals
	}
	ranks, texts, err := s.o.src.Rank(ctx, g.sc, tuples, s.desc)
	if errors.Is(err, extract.ErrUnordered) {
		g.done, g.chunk = true, nil // the source values have no order to keep
		return nil
	}
	if err != nil {
		return fmt.Errorf("order check of %s: %w", e.Name, err)
	}
	for i, it := range items {
		it.rank, it.texts = ranks[i], texts[i]
	}
	return nil
}

// closeBlock closes g's open block, recording a mismatch when its lowest item
// precedes the previous block's highest.
func (s *orderStream) closeBlock(g *orderGroup) bool {
	if g.lo == nil {
		return false
	}
	if g.prevMax != nil && g.lo.rank < g.prevMax.rank {
		item := func(it *orderItem) outcome.OrderedItem {
			vals := make(map[string]string, len(g.cols.names))
			for j, n := range g.cols.names {
				vals[n] = it.texts[j]
			}
			return outcome.OrderedItem{Position: it.pos, Key: it.key, Values: vals}
		}
		g.mm = &outcome.OrderMismatch{Entity: s.o.plans[g.entity].Entity().Name, SortKey: s.sortAttr, Template: g.cols.tpl.Source,
			OrderBy: extract.OrderBy(g.sc, s.desc), First: item(g.prevMax), Second: item(g.lo)}
		g.done, g.chunk = true, nil
		return true
	}
	g.prevMax, g.lo, g.hi = g.hi, nil, nil
	return false
}

// describe renders an order mismatch for outcome.PatternResult.Problem.
func describe(mm *outcome.OrderMismatch, desc bool) string {
	dir := "the Query"
	if desc {
		dir = "the Query, reading backwards (scan_forward: false),"
	}
	item := func(it outcome.OrderedItem) string {
		var vals []string
		for _, k := range slices.Sorted(maps.Keys(it.Values)) {
			vals = append(vals, k+"="+it.Values[k])
		}
		return fmt.Sprintf("item %d (%s %q; %s)", it.Position, mm.SortKey, it.Key, strings.Join(vals, ", "))
	}
	return fmt.Sprintf("order differs from PostgreSQL's: %s returns %s before %s, but PostgreSQL's ORDER BY %s puts the second first; entity %s's %s template %q does not sort as its columns do",
		dir, item(mm.First), item(mm.Second), mm.OrderBy, mm.Entity, mm.SortKey, mm.Template)
}
