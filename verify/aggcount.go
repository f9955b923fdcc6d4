package verify

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// aggCount is a count aggregate of an entity: the sum of its attribute over
// the Scan's items of the entity's type, and the items whose attribute is no
// integer.
type aggCount struct {
	entity   int
	attr     string
	agg      *mapping.Aggregate
	sum, bad atomic.Int64
}

// aggCounts returns the count aggregates of the entities alone in their type,
// by type.
func aggCounts(plans []*transform.Plan) map[string][]*aggCount {
	out := map[string][]*aggCount{}
	for i, p := range plans {
		e := p.Entity()
		if !aloneInType(plans, p) {
			continue
		}
		for _, attr := range slices.Sorted(maps.Keys(e.Aggregates)) {
			if a := e.Aggregates[attr]; a.Function == "count" {
				out[e.Type] = append(out[e.Type], &aggCount{entity: i, attr: attr, agg: a})
			}
		}
	}
	return out
}

// countAgg adds a scanned item's count attributes to its type's sums.
func countAgg(aggs map[string][]*aggCount, typ string, it map[string]types.AttributeValue) {
	for _, ac := range aggs[typ] {
		n, ok := it[ac.attr].(*types.AttributeValueMemberN)
		v, err := int64(0), error(nil)
		if ok {
			v, err = strconv.ParseInt(n.Value, 10, 64)
		}
		if !ok || err != nil {
			ac.bad.Add(1)
			continue
		}
		ac.sum.Add(v)
	}
}

// checkAggs compares each count aggregate's sum with PostgreSQL's count of the
// child rows joined to a parent row not rejected, times the items a row gives
// (a mirror copies the attribute); a difference is the entity's count problem.
func (c *comparison) checkAggs(ctx context.Context, res *outcome.Result, aggs map[string][]*aggCount) error {
	for typ, list := range aggs {
		for _, ac := range list {
			e := c.plans[ac.entity].Entity()
			exclude, ok := c.scanCounted(typ, e.Name)
			if !ok {
				continue
			}
			n, err := c.src.CountJoined(ctx, e.Source, ac.agg.Source, ac.agg.Join.Pairs(), exclude)
			if err != nil {
				return fmt.Errorf("entity %s, aggregate %s: %w", e.Name, ac.attr, err)
			}
			want := n * itemsPerRow(c.plans[ac.entity])
			if got, bad := ac.sum.Load(), ac.bad.Load(); got != want || bad > 0 {
				addProblem(&res.Entities[ac.entity].CountProblem, fmt.Sprintf("aggregate %s: its items of entity %s sum to %d (%d without an integer), but PostgreSQL joins %d rows of %s to its rows, %d rejected left out: %d expected",
					ac.attr, e.Name, got, bad, n, sourceName(ac.agg.Source), len(exclude), want))
			}
		}
	}
	return nil
}
