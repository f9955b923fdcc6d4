package verify

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// gsiCover is one entity's place in one GSI: the Scan's items of its type
// that carry the GSI's key attributes must number its source rows whose
// notNull (the GSI key templates' columns) are not NULL.
type gsiCover struct {
	entity  int
	gsi     string
	attrs   []string
	notNull []string
	got     atomic.Int64
}

// gsiCovers returns the entity and GSI pairs to count, by type: an entity
// alone in its type that renders a GSI whose key attributes no other index
// has, its template columns in its source.
func gsiCovers(m *mapping.Mapping, plans []*transform.Plan) map[string][]*gsiCover {
	used := map[string]int{m.Table.PartitionKey: 1, m.Table.SortKey: 1}
	for _, g := range m.Table.GSIs {
		used[g.PartitionKey]++
		used[g.SortKey]++
	}
	out := map[string][]*gsiCover{}
	for i, p := range plans {
		typ := p.Entity().Type
		if !aloneInType(plans, p) {
			continue
		}
		for _, g := range m.Table.GSIs {
			attrs := slices.DeleteFunc([]string{g.PartitionKey, g.SortKey}, func(a string) bool { return a == "" })
			if g.PartitionKey == "" || slices.ContainsFunc(attrs, func(a string) bool { return used[a] > 1 }) {
				continue // multi-attribute, or its attributes shared
			}
			var cols []string
			rendered := false
			for _, s := range p.KeySlots() {
				if s.Index == g.Name && !s.Mirror {
					rendered = true
					cols = append(cols, s.Template.Columns()...)
				}
			}
			if rendered && hasColumns(p.SourceColumns(), cols) {
				out[typ] = append(out[typ], &gsiCover{entity: i, gsi: g.Name, attrs: attrs, notNull: slices.Compact(slices.Sorted(slices.Values(cols)))})
			}
		}
	}
	return out
}

// countCover counts a scanned item of type typ in the covers of its type.
func countCover(covers map[string][]*gsiCover, typ string, it map[string]types.AttributeValue) {
	for _, gc := range covers[typ] {
		if !slices.ContainsFunc(gc.attrs, func(a string) bool { _, ok := it[a]; return !ok }) {
			gc.got.Add(1)
		}
	}
}

// checkCovers compares each cover's items with PostgreSQL's count of its rows
// whose GSI key columns are not NULL, less the rejected rows; a difference is
// the entity's count problem. Types, if set, limits it to the types scanned.
func (c *comparison) checkCovers(ctx context.Context, res *outcome.Result, covers map[string][]*gsiCover) error {
	for typ, list := range covers {
		for _, gc := range list {
			e := c.plans[gc.entity].Entity()
			exclude, ok := c.scanCounted(typ, e.Name)
			if !ok {
				continue
			}
			n, err := c.src.CountMatching(ctx, mapping.Source{}, nil, nil, e.Source, nil, gc.notNull, exclude)
			if err != nil {
				return fmt.Errorf("entity %s, GSI %s: %w", e.Name, gc.gsi, err)
			}
			if got := gc.got.Load(); got != n {
				ec := &res.Entities[gc.entity]
				addProblem(&ec.CountProblem, fmt.Sprintf("GSI %s: the table has %d items of entity %s with %s, but PostgreSQL counts %d rows of %s whose %s are not NULL, %d rejected left out",
					gc.gsi, got, e.Name, strings.Join(gc.attrs, " and "), n, sourceName(e.Source), strings.Join(gc.notNull, ", "), len(exclude)))
			}
		}
	}
	return nil
}

// aloneInType reports whether no other plan's entity has p's type, so that the
// Scan's items of that type are p's.
func aloneInType(plans []*transform.Plan, p *transform.Plan) bool {
	return !slices.ContainsFunc(plans, func(o *transform.Plan) bool { return o != p && o.Entity().Type == p.Entity().Type })
}

// scanCounted returns the rejected rows of entity, whose items of type typ the
// Scan counted; false when the Scan left typ out (Options.Types) or PostgreSQL
// cannot leave the rejected rows out.
func (c *comparison) scanCounted(typ, entity string) ([]map[string]any, bool) {
	if len(c.opts.Types) > 0 && !slices.Contains(c.opts.Types, typ) {
		return nil, false
	}
	exclude, why := c.rejected.of(entity)
	return exclude, why == ""
}

func addProblem(p *string, s string) {
	if *p != "" {
		*p += "; "
	}
	*p += s
}
