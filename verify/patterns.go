// Package verify proves a migration from the source, not from its own
// writes: it derives every item from PostgreSQL again, compares the table
// with them by content (Compare), and runs the mapping's access patterns as
// real Queries for parameters sampled from the source.
package verify

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// PatternQuery builds the Query of an access pattern for one set of
// parameter values (one Go value per pp.Params, as pgx decodes them), with
// its key condition built by feature/dynamodb/expression. A Query of the
// table reads consistently (ConsistentRead, at twice the read capacity of an
// eventually consistent read); a Query of a GSI cannot.
func PatternQuery(table string, pp *transform.PatternPlan, values []any) (*dynamodb.QueryInput, error) {
	pk, sk, err := pp.Render(values)
	if err != nil {
		return nil, err
	}
	kc := pp.Pattern.Condition
	cond := expression.Key(kc.PartitionAttr).Equal(expression.Value(pk))
	if kc.SortAttr != "" {
		k := expression.Key(kc.SortAttr)
		var sc expression.KeyConditionBuilder
		switch kc.SortOp {
		case "=":
			sc = k.Equal(expression.Value(sk[0]))
		case "<":
			sc = k.LessThan(expression.Value(sk[0]))
		case "<=":
			sc = k.LessThanEqual(expression.Value(sk[0]))
		case ">":
			sc = k.GreaterThan(expression.Value(sk[0]))
		case ">=":
			sc = k.GreaterThanEqual(expression.Value(sk[0]))
		case "begins_with":
			sc = k.BeginsWith(sk[0])
		case "between":
			sc = k.Between(expression.Value(sk[0]), expression.Value(sk[1]))
		default:
			return nil, fmt.Errorf("pattern %s: unknown sort key operator %q", pp.Pattern.Name, kc.SortOp)
		}
		cond = cond.And(sc)
	}
	expr, err := expression.NewBuilder().WithKeyCondition(cond).Build()
	if err != nil {
		return nil, fmt.Errorf("pattern %s: %w", pp.Pattern.Name, err)
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	}
	if pp.Pattern.Index != "" {
		in.IndexName = aws.String(pp.Pattern.Index)
	} else {
		// The table's own items: read them as written. (A GSI offers
		// eventually consistent reads only.)
		// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html
		in.ConsistentRead = aws.Bool(true)
	}
	if sf := pp.Pattern.ScanForward; sf != nil {
		in.ScanIndexForward = aws.Bool(*sf)
	}
	return in, nil
}

// RunPattern runs the access pattern's Query for values, following every
// page, and returns the items in the order DynamoDB returned them.
func RunPattern(ctx context.Context, client *dynamodb.Client, table string, pp *transform.PatternPlan, values []any) ([]map[string]types.AttributeValue, error) {
	in, err := PatternQuery(table, pp, values)
	if err != nil {
		return nil, err
	}
	var items []map[string]types.AttributeValue
	p := dynamodb.NewQueryPaginator(client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("pattern %s: %w", pp.Pattern.Name, err)
		}
		items = append(items, page.Items...)
	}
	return items, nil
}

// patternCheck is one access pattern with one parameter tuple: the key
// values it renders to and the derived items that must answer it.
type patternCheck struct {
	pp     *transform.PatternPlan
	values []any
	params map[string]string
	pk     string
	sk     []string
	gsi    *mapping.GSI
	// sortAttr is the attribute the Query's index sorts by ("" for a GSI
	// without a sort key).
	sortAttr string
	// want holds the projected canonical items and their sort key values.
	want []wantItem
}

// wantItem is an item that must answer a pattern's Query: its sort key
// value, its canonical projected form, and where it comes from: its
// entity (index in the plans), whether it is the entity's mirror item,
// and the source row it was derived from (transform.Item.Row: values in
// the plan's Query().Columns order, then its joins').
type wantItem struct {
	sort   string
	item   []byte
	entity int
	mirror bool
	row    []any
}

// patternSample is one access pattern and the checks of the parameter
// tuples sampled for it.
type patternSample struct {
	pp *transform.PatternPlan
	// from is the index of the entity whose source the parameters are
	// sampled from; -1 when the pattern has none.
	from int
	// tuples is how many parameter tuples were sampled; unrendered says
	// why the last of those that give no check did not render a key.
	tuples     int
	unrendered string
	checks     []*patternCheck
}

// samplePatterns compiles every access pattern and samples up to n
// parameter tuples for it from the first entity source that has all its
// parameters. Every pattern gets a patternSample, in mapping order, with
// or without checks.
func samplePatterns(ctx context.Context, src *extract.Source, m *mapping.Mapping, plans []*transform.Plan, n int) ([]*patternSample, error) {
	var out []*patternSample
	for _, ap := range m.AccessPatterns {
		pp, err := transform.CompilePattern(m, ap, plans)
		if err != nil {
			return nil, err
		}
		ps := &patternSample{pp: pp, from: -1}
		var tuples [][]any
		if len(pp.Params) == 0 {
			tuples = [][]any{{}}
		} else {
			for i, p := range plans {
				if hasColumns(p.SourceColumns(), pp.Params) {
					ps.from = i
					break
				}
			}
			if ps.from < 0 {
				return nil, m.Errorf(mapping.Path(mapping.KeyAccessPatterns, ap.Name, mapping.KeyKeyCondition),
					"no entity's source has all of the parameters %v together: cannot sample them", pp.Params)
			}
			if tuples, err = src.SampleParams(ctx, plans[ps.from].Entity().Source, pp.Params, n); err != nil {
				return nil, err
			}
		}
		ps.tuples = len(tuples)
		for _, t := range tuples {
			pk, sk, err := pp.Render(t)
			if err != nil {
				ps.unrendered = err.Error()
				continue // a tuple no item could have: nothing to check
			}
			c := &patternCheck{pp: pp, values: t, pk: pk, sk: sk, params: map[string]string{}, sortAttr: m.Table.SortKey}
			for i, p := range pp.Params {
				c.params[p] = fmt.Sprint(t[i])
			}
			if ap.Index != "" {
				c.gsi = m.Table.GSI(ap.Index)
				c.sortAttr = c.gsi.SortKey
			}
			ps.checks = append(ps.checks, c)
		}
		out = append(out, ps)
	}
	return out, nil
}

func hasColumns(cols []extract.Column, names []string) bool {
	for _, n := range names {
		found := false
		for _, c := range cols {
			if c.Name == n {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// indexChecks indexes checks by partition attribute and value, so that each
// derived item is matched against the few checks whose partition it is in.
func indexChecks(checks []*patternCheck) map[string]map[string][]*patternCheck {
	out := map[string]map[string][]*patternCheck{}
	for _, c := range checks {
		attr := c.pp.Pattern.Condition.PartitionAttr
		if out[attr] == nil {
			out[attr] = map[string][]*patternCheck{}
		}
		out[attr][c.pk] = append(out[attr][c.pk], c)
	}
	return out
}

// offer adds it to the expected answer if it is in the pattern's index
// and satisfies its sort key condition; mirror says it is its entity's
// mirror item. The caller holds the lock.
func (c *patternCheck) offer(m *mapping.Mapping, it transform.Item, mirror bool) {
	item := it.Attrs
	kc := c.pp.Pattern.Condition
	if c.gsi != nil {
		for _, a := range []string{c.gsi.PartitionKey, c.gsi.SortKey} {
			if _, ok := item[a]; a != "" && !ok {
				return // not in the (sparse) index
			}
		}
	}
	var sortVal string
	if c.sortAttr != "" {
		s, _ := item[c.sortAttr].(*types.AttributeValueMemberS)
		if s != nil {
			sortVal = s.Value
		}
	}
	if kc.SortAttr != "" {
		v := sortVal
		ok := false
		switch kc.SortOp {
		case "=":
			ok = v == c.sk[0]
		case "<":
			ok = v < c.sk[0]
		case "<=":
			ok = v <= c.sk[0]
		case ">":
			ok = v > c.sk[0]
		case ">=":
			ok = v >= c.sk[0]
		case "begins_with":
			ok = strings.HasPrefix(v, c.sk[0])
		case "between":
			ok = v >= c.sk[0] && v <= c.sk[1]
		}
		if !ok {
			return
		}
	}
	projected := item
	if c.gsi != nil {
		projected = transform.Project(m, *c.gsi, item)
	}
	c.want = append(c.want, wantItem{sort: sortVal, item: Canonical(projected), entity: it.Entity, mirror: mirror, row: it.Row})
}

// indexWait is the time a verification may spend re-reading GSIs that do
// not match yet: one budget for all its checks, counted from the first
// check that needed it, so that a real mismatch in many checks costs the
// budget once, not once per check. Between re-reads it waits as the SDK's
// retry.ExponentialJitterBackoff with a 2 s maximum does: a random 0–2 s
// before the first, 2 s before each later one, the last wait cut to what
// is left of the budget.
type indexWait struct {
	budget   time.Duration // <= 0: no re-reads
	deadline time.Time     // zero until the first re-read
	backoff  *retry.ExponentialJitterBackoff
}

// indexBackoffMax is the longest wait between two re-reads of a GSI.
const indexBackoffMax = 2 * time.Second

func newIndexWait(budget time.Duration) *indexWait {
	return &indexWait{budget: budget, backoff: retry.NewExponentialJitterBackoff(indexBackoffMax)}
}

// delay returns how long to wait before re-read attempt (1 for the first
// re-read), or false when the budget does not allow it.
func (w *indexWait) delay(attempt int) (time.Duration, bool) {
	if w.budget <= 0 {
		return 0, false
	}
	if w.deadline.IsZero() {
		w.deadline = time.Now().Add(w.budget)
	}
	left := time.Until(w.deadline)
	if left <= 0 {
		return 0, false
	}
	d, err := w.backoff.BackoffDelay(attempt, nil)
	if err != nil {
		d = indexBackoffMax // no randomness to be had: the maximum
	}
	return min(d, left), true
}

// run queries the table and compares the items, in order, with want
// (sorted by the sort key as DynamoDB does, by UTF-8 bytes; items with
// equal sort keys, possible in a GSI, in any order). A query of the table
// reads consistently (PatternQuery); a GSI can only be read eventually
// consistently and may lag the writes just made, so a GSI check that does
// not match is queried again, after jittered backoff (indexWait), while
// wait allows. The result counts those re-reads. When the items match,
// their order is checked against PostgreSQL's order of their source
// values (orderChecker): a mismatch fails the result, with its Order.
func (c *patternCheck) run(ctx context.Context, client *dynamodb.Client, table string, wait *indexWait, orders *orderChecker) (PatternResult, error) {
	ap := c.pp.Pattern
	desc := ap.ScanForward != nil && !*ap.ScanForward
	slices.SortFunc(c.want, func(a, b wantItem) int {
		if d := strings.Compare(a.sort, b.sort); d != 0 {
			if desc {
				return -d
			}
			return d
		}
		return bytes.Compare(a.item, b.item)
	})
	for attempt := 1; ; attempt++ {
		res, err := c.query(ctx, client, table)
		res.Retries = attempt - 1
		if err != nil {
			return res, err
		}
		if res.OK {
			// The answer is want, item for item, in want's order.
			mm, err := orders.check(ctx, c.want, c.sortAttr, desc)
			if err != nil {
				return res, fmt.Errorf("pattern %s: %w", ap.Name, err)
			}
			if mm != nil {
				res.OK, res.Order, res.Problem = false, mm, mm.describe(desc)
			}
			return res, nil
		}
		if c.gsi == nil {
			return res, nil
		}
		d, ok := wait.delay(attempt)
		if !ok {
			return res, nil
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(d):
		}
	}
}

// query runs the check's Query once and compares its items with want.
func (c *patternCheck) query(ctx context.Context, client *dynamodb.Client, table string) (PatternResult, error) {
	ap := c.pp.Pattern
	res := PatternResult{Pattern: ap.Name, Index: ap.Index, Params: c.params, Want: len(c.want)}
	if res.Index == "" {
		res.Index = "table"
	}
	items, err := RunPattern(ctx, client, table, c.pp, c.values)
	if err != nil {
		return res, err // a failed Query is no answer to compare
	}
	res.Got = len(items)
	sortAttr := ""
	if c.gsi != nil {
		sortAttr = c.gsi.SortKey
	}
	got := make([]wantItem, len(items))
	for i, it := range items {
		got[i] = wantItem{item: Canonical(it)}
		if sortAttr != "" {
			if s, ok := it[sortAttr].(*types.AttributeValueMemberS); ok {
				got[i].sort = s.Value
			}
		}
	}
	if c.gsi != nil {
		// Items with equal GSI sort keys come back in no defined order:
		// order each run of them as want is ordered.
		for i := 0; i < len(got); {
			j := i + 1
			for j < len(got) && got[j].sort == got[i].sort {
				j++
			}
			slices.SortFunc(got[i:j], func(a, b wantItem) int { return bytes.Compare(a.item, b.item) })
			i = j
		}
	}
	for i := range max(len(got), len(c.want)) {
		switch {
		case i >= len(got):
			res.Problem = fmt.Sprintf("item %d missing from the Query: %s", i+1, c.want[i].item)
		case i >= len(c.want):
			res.Problem = fmt.Sprintf("item %d not expected: %s", i+1, got[i].item)
		case !bytes.Equal(got[i].item, c.want[i].item):
			res.Problem = fmt.Sprintf("item %d differs: Query %s, source %s", i+1, got[i].item, c.want[i].item)
		default:
			continue
		}
		return res, nil
	}
	res.OK = true
	return res, nil
}

// runAll runs the sample's checks and judges the pattern as a whole:
//
//   - a pattern with no check (no parameter tuple to query with: its
//     source is empty, or no tuple renders a key) could not be checked,
//     and fails;
//   - a pattern whose every check expected and got no item matches
//     nothing: no sampled parameter reaches any item, which is what a key
//     condition whose text differs from the items' keys does. Each of its
//     results fails.
//
// Both are failures only when the source derives some item: when it
// derives none (derived is 0), no Query can find one, the Scan proves the
// table holds none, and the results pass with a Note saying the pattern
// was not checked. rows gives each entity's source row count, for the
// message.
func (ps *patternSample) runAll(ctx context.Context, client *dynamodb.Client, table string, wait *indexWait,
	orders *orderChecker, derived int64, rows []int64) ([]PatternResult, error) {
	ap := ps.pp.Pattern
	index := ap.Index
	if index == "" {
		index = "table"
	}
	const empty = "not checked: the source derives no item, so no Query can find one (the Scan checks the table holds none)"
	if len(ps.checks) == 0 {
		res := PatternResult{Pattern: ap.Name, Index: index, Params: map[string]string{}, NotRun: true}
		switch {
		case derived == 0:
			res.OK, res.Note = true, empty
		case ps.tuples == 0 && ps.from >= 0 && rows[ps.from] == 0:
			e := orders.plans[ps.from].Entity()
			res.Problem = fmt.Sprintf("not checked: its parameters (%s) are sampled from the source of entity %s (%s), which is empty: no Query was run",
				strings.Join(ps.pp.Params, ", "), e.Name, sourceName(e.Source))
		case ps.tuples == 0:
			e := orders.plans[ps.from].Entity()
			res.Problem = fmt.Sprintf("not checked: no row of the source of entity %s (%s) has its parameters (%s) all non-NULL: no Query was run",
				e.Name, sourceName(e.Source), strings.Join(ps.pp.Params, ", "))
		default:
			res.Problem = fmt.Sprintf("not checked: none of the %d sampled parameter tuples renders a key (%s): no Query was run", ps.tuples, ps.unrendered)
		}
		return []PatternResult{res}, nil
	}
	out := make([]PatternResult, 0, len(ps.checks))
	nothing := true
	for _, c := range ps.checks {
		pr, err := c.run(ctx, client, table, wait, orders)
		if err != nil {
			return nil, err
		}
		nothing = nothing && pr.OK && pr.Want == 0 && pr.Got == 0
		out = append(out, pr)
	}
	if !nothing {
		return out, nil
	}
	for i := range out {
		if derived == 0 {
			out[i].Note = empty
			continue
		}
		c := ps.checks[i]
		kc := ap.Condition
		keys := fmt.Sprintf("%s = %q", kc.PartitionAttr, c.pk)
		if kc.SortAttr != "" {
			keys += fmt.Sprintf(", %s %s %q", kc.SortAttr, kc.SortOp, strings.Join(c.sk, `" AND "`))
		}
		out[i].OK = false
		out[i].Problem = fmt.Sprintf("matches nothing: none of the %d sampled parameter tuples reaches any item (each Query expected and returned 0 items; this one asks %s): does the key condition's text match how the items' keys are rendered?",
			len(ps.checks), keys)
	}
	return out, nil
}

// sourceName names a source in a message: "table sales.orders", "its query".
func sourceName(src mapping.Source) string {
	if src.IsQuery() {
		return "its query"
	}
	return "table " + src.String()
}
