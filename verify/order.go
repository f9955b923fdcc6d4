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
)

// OrderMismatch is two items of one entity, and of one sort key template,
// that a Query returned in an order PostgreSQL contradicts: ordering the
// source values of the template's columns (ORDER BY those columns in
// template order, text-like ones COLLATE "C", in the Query's direction),
// PostgreSQL puts Second strictly before First.
type OrderMismatch struct {
	Entity string `json:"entity"`
	// SortKey is the attribute the Query's index sorts by; Template the
	// entity's template for it.
	SortKey  string `json:"sort_key"`
	Template string `json:"template"`
	// OrderBy is the ORDER BY PostgreSQL ran: `delta`, `name COLLATE "C" DESC`.
	OrderBy string      `json:"order_by"`
	First   OrderedItem `json:"first"`
	Second  OrderedItem `json:"second"`
}

// OrderedItem is an item of an OrderMismatch.
type OrderedItem struct {
	// Position is the item's 1-based position in the Query's answer.
	Position int `json:"position"`
	// Key is its sort key value.
	Key string `json:"key"`
	// Values are the source values of the template's columns, in
	// PostgreSQL's text form.
	Values map[string]string `json:"values"`
}

// ranker is what the order check needs of the source: extract.Source.
type ranker interface {
	SortColumns(ctx context.Context, src mapping.Source, cols []extract.Column) ([]extract.SortColumn, error)
	Rank(ctx context.Context, cols []extract.SortColumn, tuples [][]any, desc bool) ([]int64, [][]string, error)
}

// orderChecker checks the order of Query answers against PostgreSQL, with
// the column descriptions it has asked for so far. Not safe for
// concurrent use.
type orderChecker struct {
	src   ranker
	m     *mapping.Mapping
	plans []*transform.Plan
	// sortCols caches SortColumns by entity and column list.
	sortCols map[string][]extract.SortColumn
}

func newOrderChecker(src ranker, m *mapping.Mapping, plans []*transform.Plan) *orderChecker {
	return &orderChecker{src: src, m: m, plans: plans, sortCols: map[string][]extract.SortColumn{}}
}

// check takes a Query's answer, items in the order DynamoDB returned them
// (each with the entity and source row it was derived from), and returns
// the first pair of items of one entity and sort key template whose order
// PostgreSQL contradicts, or nil. sortAttr is the attribute the Query's
// index sorts by (none: nothing to check); desc is true when the Query
// reads backwards (ScanIndexForward false). Items with equal sort keys
// come back in no defined order and are never out of order with each
// other, and values of a type PostgreSQL cannot order (point, xml) have no
// order to keep. Transform's key renderer is not used: PostgreSQL orders
// the source values themselves (extract.Source.Rank).
func (o *orderChecker) check(ctx context.Context, items []wantItem, sortAttr string, desc bool) (*OrderMismatch, error) {
	if sortAttr == "" {
		return nil, nil
	}
	type group struct {
		entity int
		mirror bool
		pos    []int // indexes in items
	}
	var groups []*group
	for i, it := range items {
		j := slices.IndexFunc(groups, func(g *group) bool { return g.entity == it.entity && g.mirror == it.mirror })
		if j < 0 {
			groups = append(groups, &group{entity: it.entity, mirror: it.mirror})
			j = len(groups) - 1
		}
		groups[j].pos = append(groups[j].pos, i)
	}
	for _, g := range groups {
		if len(g.pos) < 2 {
			continue
		}
		mm, err := o.checkGroup(ctx, items, g.entity, g.mirror, g.pos, sortAttr, desc)
		if mm != nil || err != nil {
			return mm, err
		}
	}
	return nil, nil
}

// checkGroup checks the items at pos, all of entity and of one template.
func (o *orderChecker) checkGroup(ctx context.Context, items []wantItem, entity int, mirror bool, pos []int,
	sortAttr string, desc bool) (*OrderMismatch, error) {
	p := o.plans[entity]
	e := p.Entity()
	tpl, ok := keyTemplate(o.m, e, sortAttr, mirror)
	if !ok {
		return nil, nil
	}
	var names []string
	for _, part := range tpl.Parts {
		if part.Column != "" && !slices.Contains(names, part.Column) {
			names = append(names, part.Column)
		}
	}
	if len(names) == 0 {
		return nil, nil // a literal sort key: every item has the same one
	}
	qcols := p.Query().Columns
	idx := make([]int, len(names))
	cols := make([]extract.Column, len(names))
	for i, n := range names {
		idx[i] = slices.IndexFunc(qcols, func(c extract.Column) bool { return c.Name == n })
		if idx[i] < 0 {
			// A stable ID (ordered by its own time and hash) or a column a
			// duplicate copies from the parent: not a column of the
			// entity's source, whose order PostgreSQL gives here.
			if e.IDs[n] != nil || p.Duplicates(n) {
				return nil, nil
			}
			return nil, fmt.Errorf("order check: entity %s reads no column %q of its sort key template %q", e.Name, n, tpl.Source)
		}
		cols[i] = qcols[idx[i]]
	}
	cacheKey := e.Name + "\x00" + strings.Join(names, "\x00")
	sc, ok := o.sortCols[cacheKey]
	if !ok {
		var err error
		if sc, err = o.src.SortColumns(ctx, e.Source, cols); err != nil {
			return nil, fmt.Errorf("order check of %s: %w", e.Name, err)
		}
		o.sortCols[cacheKey] = sc
	}
	tuples := make([][]any, len(pos))
	for i, at := range pos {
		row := items[at].row
		t := make([]any, len(idx))
		for j, ci := range idx {
			t[j] = row[ci]
		}
		tuples[i] = t
	}
	ranks, texts, err := o.src.Rank(ctx, sc, tuples, desc)
	if errors.Is(err, extract.ErrUnordered) {
		return nil, nil // the source values have no order to keep
	}
	if err != nil {
		return nil, fmt.Errorf("order check of %s: %w", e.Name, err)
	}
	// Blocks of equal sort keys, in answer order: each block's lowest rank
	// must not come before the highest rank of the block before it.
	prevMax, prevEnd := -1, -1 // index in pos of the highest rank of the previous block
	for start := 0; start < len(pos); {
		end := start + 1
		for end < len(pos) && items[pos[end]].sort == items[pos[start]].sort {
			end++
		}
		lo, hi := start, start
		for k := start; k < end; k++ {
			if ranks[k] < ranks[lo] {
				lo = k
			}
			if ranks[k] > ranks[hi] {
				hi = k
			}
		}
		if prevEnd >= 0 && ranks[lo] < ranks[prevMax] {
			item := func(k int) OrderedItem {
				vals := make(map[string]string, len(names))
				for j, n := range names {
					vals[n] = texts[k][j]
				}
				return OrderedItem{Position: pos[k] + 1, Key: items[pos[k]].sort, Values: vals}
			}
			return &OrderMismatch{Entity: e.Name, SortKey: sortAttr, Template: tpl.Source, OrderBy: extract.OrderBy(sc, desc),
				First: item(prevMax), Second: item(lo)}, nil
		}
		prevMax, prevEnd = hi, end
		start = end
	}
	return nil, nil
}

// keyTemplate returns entity e's template for key attribute attr on its
// own items, or on its mirror items: the table's keys come from pk and sk
// (mirror.pk and mirror.sk), a GSI's from its indexes entry (a mirror item
// has none), as transform writes them.
func keyTemplate(m *mapping.Mapping, e *mapping.Entity, attr string, mirror bool) (mapping.Template, bool) {
	t := m.Table
	switch {
	case attr == t.PartitionKey && mirror:
		return e.Mirror.PKTemplate, true
	case attr == t.PartitionKey:
		return e.PKTemplate, true
	case attr == t.SortKey && mirror:
		return e.Mirror.SKTemplate, true
	case attr == t.SortKey:
		return e.SKTemplate, true
	case mirror:
		return mapping.Template{}, false
	}
	var tpl mapping.Template
	found := false
	for _, g := range t.GSIs {
		pair, ok := e.IndexTemplate[g.Name]
		if !ok {
			continue
		}
		for i, a := range []string{g.PartitionKey, g.SortKey} {
			if a == attr && !pair[i].IsZero() {
				tpl, found = pair[i], true // the last one written wins, as in the item
			}
		}
	}
	return tpl, found
}

// describe renders an order mismatch for PatternResult.Problem.
func (mm *OrderMismatch) describe(desc bool) string {
	dir := "the Query"
	if desc {
		dir = "the Query, reading backwards (scan_forward: false),"
	}
	item := func(it OrderedItem) string {
		var vals []string
		for _, k := range slices.Sorted(maps.Keys(it.Values)) {
			vals = append(vals, k+"="+it.Values[k])
		}
		return fmt.Sprintf("item %d (%s %q; %s)", it.Position, mm.SortKey, it.Key, strings.Join(vals, ", "))
	}
	return fmt.Sprintf("order differs from PostgreSQL's: %s returns %s before %s, but PostgreSQL's ORDER BY %s puts the second first; entity %s's %s template %q does not sort as its columns do",
		dir, item(mm.First), item(mm.Second), mm.OrderBy, mm.Entity, mm.SortKey, mm.Template)
}
