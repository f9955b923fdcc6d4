// Package verify proves a migration from the source, not from its own writes:
// it derives every item from PostgreSQL again, compares the table with them by
// content (Compare), and runs the access patterns as real Queries for
// parameters sampled from the source.
package verify

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/internal/extsort"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// keyOperand is key text of type typ as an expression value: a string (S), an
// attributevalue.Number (N) or bytes (B), as transform.KeyAttributeValue.
func keyOperand(typ, text string) expression.ValueBuilder {
	switch typ {
	case mapping.TypeNumber:
		return expression.Value(attributevalue.Number(text))
	case mapping.TypeBinary:
		return expression.Value([]byte(text))
	}
	return expression.Value(text)
}

// PatternQuery builds pp's Query for one parameter tuple (one Go value per
// pp.Params, as pgx decodes them). A table Query reads consistently; a GSI's
// cannot.
func PatternQuery(table string, pp *transform.PatternPlan, values []any) (*dynamodb.QueryInput, error) {
	return patternQuery(table, pp, values, true)
}

// patternQuery is PatternQuery, without the pattern's filter unless filter.
func patternQuery(table string, pp *transform.PatternPlan, values []any, filter bool) (*dynamodb.QueryInput, error) {
	if pp.MultiAttribute() {
		return multiPatternQuery(table, pp, values, filter)
	}
	pk, sk, err := pp.Render(values)
	if err != nil {
		return nil, err
	}
	kc := pp.Pattern.Condition
	pt, st := pp.KeyTypes()
	cond := expression.Key(kc.PartitionAttr).Equal(keyOperand(pt, pk))
	if kc.SortAttr != "" {
		vals := make([]expression.ValueBuilder, len(sk))
		for i, s := range sk {
			vals[i] = keyOperand(st, s)
		}
		sc, err := keyCondition(kc.SortAttr, kc.SortOp, vals, sk[0])
		if err != nil {
			return nil, fmt.Errorf("pattern %s: %w", pp.Pattern.Name, err)
		}
		cond = cond.And(sc)
	}
	return patternInput(table, pp, values, cond, filter)
}

// patternInput is pp's Query for values, with key condition cond and, when
// filter, the pattern's filter.
func patternInput(table string, pp *transform.PatternPlan, values []any, cond expression.KeyConditionBuilder, filter bool) (*dynamodb.QueryInput, error) {
	b := expression.NewBuilder().WithKeyCondition(cond)
	if f := pp.Pattern.FilterExpr; f != nil && filter {
		vals, err := filterValues(pp, values)
		if err != nil {
			return nil, err
		}
		fc, err := filterCondition(f, vals)
		if err != nil {
			return nil, fmt.Errorf("pattern %s: %w", pp.Pattern.Name, err)
		}
		b = b.WithFilter(fc)
	}
	expr, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("pattern %s: %w", pp.Pattern.Name, err)
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		FilterExpression:          expr.Filter(),
	}
	if pp.Pattern.Index != "" {
		in.IndexName = aws.String(pp.Pattern.Index)
	} else {
		// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html
		in.ConsistentRead = aws.Bool(true)
	}
	if sf := pp.Pattern.ScanForward; sf != nil {
		in.ScanIndexForward = aws.Bool(*sf)
	}
	return in, nil
}

// RunPattern runs the pattern's Query for values over every page and returns
// the items in DynamoDB's order.
func RunPattern(ctx context.Context, client dynamodb.QueryAPIClient, table string, pp *transform.PatternPlan, values []any) ([]map[string]types.AttributeValue, error) {
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

// patternCheck is one access pattern with one parameter tuple: its rendered key
// values and the derived items that must answer it.
type patternCheck struct {
	pp     *transform.PatternPlan
	values []any
	params map[string]string
	pk     string
	// sk are the sort key condition's bounds as transform.SortText, which
	// compare as strings as DynamoDB compares the keys.
	sk  []string
	gsi *mapping.GSI
	// sortAttr is the attribute the index sorts by, of type sortType (""
	// without a sort key or with multi-attribute keys).
	sortAttr, sortType string
	// terms are a multi-attribute GSI pattern's key condition terms
	// (transform.PatternPlan.RenderTerms).
	terms []transform.Term
	// want holds the answer's derived items as want records in the Query's
	// order (compareWant), on disk past the memory budget.
	want *extsort.Sorter
	// members counts want's items by entity and mirror
	// (patternSample.checkCollection).
	members map[memberKey]int64
	// collection sums PostgreSQL's counts of members, if counted.
	counted    bool
	collection int64
	// filter holds the filter's parameter values; filtered counts items the key
	// condition reads and the filter leaves out, which the Query must leave out
	// too.
	filter   map[string]types.AttributeValue
	filtered int64
	// undecided holds the canonical items whose filter result is undecided
	// (matchFilter), with why; neither side compares them.
	undecided    map[string]struct{}
	undecidedWhy string
	rec          []byte // scratch for offer
	// inFlight says whether a canonical item changed after the snapshot; such
	// items are skipped on both sides.
	inFlight func(ctx context.Context, item []byte, readAt time.Time) (bool, error)
	// refused says whether a canonical item's put was refused (a reject); such
	// items are skipped on both sides. Nil: none was.
	refused func(item []byte) (bool, error)
	// owners tell by attribute typeAttr whose an answer's item is; another
	// writer's is passed over (nil: every item is compared).
	typeAttr string
	owners   *owners
}

// projectsType reports whether the items of index g (nil: the table) carry
// typeAttr, which tells other writers' items: a KEYS_ONLY projection, or
// INCLUDE without it, leaves it out unless it is a key of g.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Projections
func projectsType(g *mapping.GSI, typeAttr string) bool {
	if g == nil || g.Projection == "" || g.Projection == "ALL" || g.PartitionKey == typeAttr || g.SortKey == typeAttr {
		return true
	}
	for _, k := range slices.Concat(g.PartitionKeys, g.SortKeys) {
		if k.Name == typeAttr {
			return true
		}
	}
	return g.Projection == "INCLUDE" && slices.Contains(g.NonKeyAttributes, typeAttr)
}

// other reports whether item is another writer's.
func (c *patternCheck) other(item map[string]types.AttributeValue) bool {
	return c.owners != nil && !c.owners.owns(load.StringAttr(item, c.typeAttr))
}

// wantItem is an item that must answer a Query: sort key value, canonical
// projected form, entity index, mirror flag, and the source values its order
// depends on.
type wantItem struct {
	sort   string
	item   []byte
	entity int
	mirror bool
	vals   []any
}

// appendWant appends a want record: sort key value and canonical item (each
// uvarint-length-prefixed), entity (uvarint), mirror byte, encoded values.
func appendWant(b []byte, sort string, item []byte, entity int, mirror bool, vals []any) ([]byte, error) {
	b = appendBytes(b, []byte(sort))
	b = appendBytes(b, item)
	b = binary.AppendUvarint(b, uint64(entity))
	m := byte(0)
	if mirror {
		m = 1
	}
	b = append(b, m)
	b = binary.AppendUvarint(b, uint64(len(vals)))
	for _, v := range vals {
		var err error
		if b, err = appendValue(b, v); err != nil {
			return nil, fmt.Errorf("order check: %w", err)
		}
	}
	return b, nil
}

type wantRecord struct {
	sort, item []byte
	entity     int
	mirror     bool
	vals       []byte
}

// parseWant splits a want record (appendWant) into its parts.
func parseWant(rec []byte) wantRecord {
	var w wantRecord
	field := func() []byte {
		l, n := binary.Uvarint(rec)
		v := rec[n : n+int(l)]
		rec = rec[n+int(l):]
		return v
	}
	w.sort = field()
	w.item = field()
	e, n := binary.Uvarint(rec)
	w.entity = int(e)
	w.mirror = rec[n] == 1
	w.vals = rec[n+1:]
	return w
}

func (w wantRecord) values() ([]any, error) {
	b := w.vals
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, errValueData
	}
	b = b[k:]
	if n == 0 {
		return nil, nil
	}
	vals := make([]any, n)
	for i := range vals {
		var err error
		if vals[i], b, err = readValue(b); err != nil {
			return nil, err
		}
	}
	return vals, nil
}

// compareWant orders want records as a Query returns them: by sort key value
// (reversed when desc), then canonical item.
func compareWant(desc bool) func(a, b []byte) int {
	return func(a, b []byte) int {
		wa, wb := parseWantKey(a), parseWantKey(b)
		if d := bytes.Compare(wa[0], wb[0]); d != 0 {
			if desc {
				return -d
			}
			return d
		}
		return bytes.Compare(wa[1], wb[1])
	}
}

func parseWantKey(rec []byte) [2][]byte {
	l, n := binary.Uvarint(rec)
	sort := rec[n : n+int(l)]
	rec = rec[n+int(l):]
	l, n = binary.Uvarint(rec)
	return [2][]byte{sort, rec[n : n+int(l)]}
}

// patternSample is one access pattern and the checks of its sampled parameter
// tuples.
type patternSample struct {
	pp *transform.PatternPlan
	// from is the entity whose source the parameters are sampled from; -1 when
	// none.
	from int
	// tuples is how many tuples were sampled; unrendered says why the last one
	// without a check rendered no key.
	tuples     int
	unrendered string
	checks     []*patternCheck
	// members are the entities of the item collection the pattern reads whole;
	// nil with a sort key condition.
	members []collectionMember
	// rejected are the rows the source pass rejected, which the collection's
	// counts leave out.
	rejected *rejectedRows
}

// samplePatterns compiles every access pattern and samples up to n parameter
// tuples from its home entity (transform.PatternPlan.Home), else the first
// source with all its parameters. Every pattern gets a patternSample in mapping
// order, each check's answer in a sorter of g.
func samplePatterns(ctx context.Context, src source, m *mapping.Mapping, plans []*transform.Plan, n int, g *extsort.Group) ([]*patternSample, error) {
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
			ps.from = pp.Home
			for i, p := range plans {
				if ps.from < 0 && hasColumns(p.SourceColumns(), pp.Params) {
					ps.from = i
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
		ps.members = collectionMembers(m, plans, pp, ps.from)
		for _, t := range tuples {
			if pp.MultiAttribute() {
				if c, err := newMultiCheck(m, pp, t); err != nil {
					ps.unrendered = err.Error()
				} else {
					c.want = g.NewSorter("want", compareWant(ap.ScanForward != nil && !*ap.ScanForward))
					ps.checks = append(ps.checks, c)
				}
				continue
			}
			pk, sk, err := pp.Render(t)
			if err != nil {
				ps.unrendered = err.Error()
				continue // a tuple no item could have: nothing to check
			}
			c := &patternCheck{pp: pp, values: t, pk: pk, params: map[string]string{}, sortAttr: m.Table.SortKey, members: map[memberKey]int64{}}
			for i, p := range pp.Params {
				c.params[p] = fmt.Sprint(t[i])
			}
			if c.filter, err = filterValues(pp, t); err != nil {
				return nil, err
			}
			if ap.Index != "" {
				c.gsi = m.Table.GSI(ap.Index)
				c.sortAttr = c.gsi.SortKey
			}
			c.sortType = m.Table.KeyType(c.sortAttr)
			for _, b := range sk {
				c.sk = append(c.sk, transform.SortText(c.sortType, b))
			}
			c.want = g.NewSorter("want", compareWant(ap.ScanForward != nil && !*ap.ScanForward))
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

// indexChecks indexes checks by partition attribute and value, so each derived
// item meets only its partition's checks.
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

// offer adds it to the expected answer if it is in the index and meets the sort
// key condition; orders picks its order values. The caller holds the lock.
func (c *patternCheck) offer(m *mapping.Mapping, orders *orderChecker, it transform.Item, mirror bool) error {
	item := it.Attrs
	kc := c.pp.Pattern.Condition
	if c.terms != nil {
		sortVal, ok := c.matchTerms(item)
		if !ok {
			return nil
		}
		return c.addWant(m, orders, it, mirror, sortVal)
	}
	if c.gsi != nil {
		for _, a := range []string{c.gsi.PartitionKey, c.gsi.SortKey} {
			if _, ok := item[a]; a != "" && !ok {
				return nil // not in the (sparse) index
			}
		}
	}
	var sortVal string
	if c.sortAttr != "" {
		if v, ok := item[c.sortAttr]; ok {
			text, _ := transform.KeyText(v)
			sortVal = transform.SortText(c.sortType, text)
		}
	}
	if kc.SortAttr != "" {
		if !keyOpHolds(kc.SortOp, sortVal, c.sk) {
			return nil
		}
	}
	return c.addWant(m, orders, it, mirror, sortVal)
}

// addWant adds it, with sort key value sortVal, to the expected answer,
// projected as the index projects it.
func (c *patternCheck) addWant(m *mapping.Mapping, orders *orderChecker, it transform.Item, mirror bool, sortVal string) error {
	projected := it.Attrs
	if c.gsi != nil {
		projected = transform.Project(m, *c.gsi, it.Attrs)
	}
	// DynamoDB filters what the index holds: the projected item.
	if f := c.pp.Pattern.FilterExpr; f != nil {
		pass, why := matchFilter(f, projected, c.filter)
		if why != "" {
			if c.undecided == nil {
				c.undecided = map[string]struct{}{}
			}
			c.undecided[string(ddbjson.Canonical(projected))] = struct{}{}
			c.undecidedWhy = why
			return nil
		}
		if !pass {
			c.filtered++
			return nil
		}
	}
	vals, err := orders.values(it.Entity, mirror, c.sortAttr, it.Row)
	if err != nil {
		return err
	}
	if c.rec, err = appendWant(c.rec[:0], sortVal, ddbjson.Canonical(projected), it.Entity, mirror, vals); err != nil {
		return fmt.Errorf("pattern %s: %w", c.pp.Pattern.Name, err)
	}
	c.members[memberKey{it.Entity, mirror}]++
	return c.want.Add(c.rec)
}

// indexWait is the time a verification may spend re-reading GSIs that do not
// match yet: one budget for all checks from the first that needs it, so a real
// mismatch in many checks costs it once. Waits follow
// retry.ExponentialJitterBackoff, the last cut to what is left.
type indexWait struct {
	budget   time.Duration // <= 0: no re-reads
	deadline time.Time     // zero until the first re-read
	backoff  *retry.ExponentialJitterBackoff
}

const indexBackoffMax = 2 * time.Second

func newIndexWait(budget time.Duration) *indexWait {
	return &indexWait{budget: budget, backoff: retry.NewExponentialJitterBackoff(indexBackoffMax)}
}

// delay returns the wait before re-read attempt (1 first), or false past the
// budget.
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

// run queries the table and compares the items, in order, with want (sorted by
// the sort key's UTF-8 bytes, as DynamoDB does; equal GSI sort keys in any
// order). A GSI is eventually consistent, so a non-matching check is re-queried
// while wait allows. Matching items are then checked against PostgreSQL's order
// of their source values (orderStream); ties holds a GSI answer's runs of equal
// sort keys. Both sides stream.
func (c *patternCheck) run(ctx context.Context, client dynamodb.QueryAPIClient, table string, wait *indexWait, orders *orderChecker, ties *extsort.Sorter) (outcome.PatternResult, error) {
	ap := c.pp.Pattern
	desc := ap.ScanForward != nil && !*ap.ScanForward
	for attempt := 1; ; attempt++ {
		res, err := c.query(ctx, client, table, ties)
		res.Retries = attempt - 1
		if err != nil {
			return res, err
		}
		if res.OK {
			// The answer is want, item for item, in want's order.
			mm, err := c.checkOrder(ctx, orders, desc)
			if err != nil {
				return res, fmt.Errorf("pattern %s: %w", ap.Name, err)
			}
			if mm != nil {
				res.OK, res.Order, res.Problem = false, mm, describe(mm, desc)
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

// checkOrder feeds want, in order, to an order stream.
func (c *patternCheck) checkOrder(ctx context.Context, orders *orderChecker, desc bool) (*outcome.OrderMismatch, error) {
	st := orders.stream(c.sortAttr, desc)
	err := c.want.Each(func(rec []byte) error {
		w := parseWant(rec)
		vals, err := w.values()
		if err != nil {
			return err
		}
		return st.add(ctx, w.entity, w.mirror, string(w.sort), vals)
	})
	if err != nil {
		return nil, err
	}
	return st.finish(ctx)
}

// queryPageItems bounds a Query page (QueryInput.Limit), as load.ScanPageItems does
// a Scan's.
const queryPageItems = 200

// query runs the Query once, comparing with want an item of each at a time; it
// reads every page to count them.
func (c *patternCheck) query(ctx context.Context, client dynamodb.QueryAPIClient, table string, ties *extsort.Sorter) (outcome.PatternResult, error) {
	ap := c.pp.Pattern
	res := outcome.PatternResult{Pattern: ap.Name, Index: ap.Index, Params: c.params, Want: int(c.want.Len())}
	if res.Index == "" {
		res.Index = "table"
	}
	in, err := PatternQuery(table, c.pp, c.values)
	if err != nil {
		return res, err
	}
	in.Limit = aws.Int32(queryPageItems)
	got := &answerReader{ctx: ctx, name: ap.Name, p: dynamodb.NewQueryPaginator(client, in), ties: ties, other: c.other}
	if c.gsi != nil {
		// Equal GSI sort keys come back in no defined order: each run is
		// ordered as want is.
		got.gsi = true
		got.sortAttr, got.sortType = c.gsi.SortKey, c.sortType
		got.sortKeys = c.gsi.SortKeys
	}
	want, err := c.want.Iter()
	if err != nil {
		return res, err
	}
	var g, w []byte
	var gerr, werr error
	nextG, nextW := true, true
	for i := 1; res.Problem == ""; {
		if nextG {
			if g, gerr = c.nextAnswer(got); gerr != nil && !errors.Is(gerr, io.EOF) {
				return res, gerr // a failed Query is no answer to compare
			}
		}
		if nextW {
			if w, werr = want.Next(); werr != nil && !errors.Is(werr, io.EOF) {
				return res, werr
			}
		}
		nextG, nextW = false, false
		if gerr != nil && werr != nil {
			res.OK = true
			break
		}
		if gerr == nil && werr == nil && bytes.Equal(g, parseWant(w).item) {
			nextG, nextW = true, true
			i++
			continue
		}
		// A difference: an item refused or changed after the snapshot is
		// skipped.
		if werr == nil {
			if nextW, err = c.skip(ctx, parseWant(w).item, got.readAt, &res); err != nil {
				return res, err
			}
		}
		if !nextW && gerr == nil {
			if nextG, err = c.skip(ctx, g, got.readAt, &res); err != nil {
				return res, err
			}
		}
		switch {
		case nextG || nextW:
		case gerr != nil:
			res.Problem = fmt.Sprintf("item %d missing from the Query: %s", i, parseWant(w).item)
		case werr != nil:
			res.Problem = fmt.Sprintf("item %d not expected: %s", i, g)
		default:
			res.Problem = fmt.Sprintf("item %d differs: Query %s, source %s", i, g, parseWant(w).item)
		}
	}
	if err := got.drain(); err != nil {
		return res, err
	}
	res.Got, res.Others = got.n-got.undecided, got.others
	if got.others > 0 {
		addNote(&res, fmt.Sprintf("%d of the answer's items are other writers' (a type the mapping does not have, or none): passed over", got.others))
	}
	if len(c.undecided) > 0 {
		addNote(&res, fmt.Sprintf("%d of the items the key condition reads are compared on neither side: whether they pass the filter "+
			"is not decided by DynamoDB's documented rules (%s)", len(c.undecided), c.undecidedWhy))
	}
	if err := c.checkScanned(ctx, client, table, &res, got.scanned); err != nil {
		return res, err
	}
	return res, nil
}

// nextAnswer returns the answer's next item that is not undecided; io.EOF at
// the end.
func (c *patternCheck) nextAnswer(got *answerReader) ([]byte, error) {
	for {
		g, err := got.next()
		if err != nil {
			return g, err
		}
		if _, ok := c.undecided[string(g)]; !ok {
			return g, nil
		}
		got.undecided++
	}
}

// checkScanned fails res, a matched filtered answer, when ScannedCount differs
// from the items the key condition must read (passing, left out, undecided,
// and other writers'); each item skipped (in flight, refused) widens the
// allowance by one.
// Otherwise a key condition reading nothing would match a filter that leaves
// every derived item out. Other writers' items the filter left out are not in
// the answer: when the count is over, the key condition is read again without
// the filter to count them.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.FilterExpression.html
func (c *patternCheck) checkScanned(ctx context.Context, client dynamodb.QueryAPIClient, table string, res *outcome.PatternResult, scanned int64) error {
	if c.pp.Pattern.FilterExpr == nil || !res.OK {
		return nil
	}
	res.Scanned = int(scanned)
	want := c.want.Len() + c.filtered + int64(len(c.undecided))
	others := int64(res.Others)
	skipped := int64(res.InFlight + res.Refused)
	if scanned-want-others > skipped && c.owners != nil {
		n, err := c.othersRead(ctx, client, table)
		if err != nil {
			return err
		}
		others = n
	}
	if d := scanned - want - others; d <= skipped && -d <= skipped {
		return nil
	}
	res.OK = false
	res.Problem = fmt.Sprintf("the Query's key condition read %d items (its ScannedCount), but the source derives %d items it must read "+
		"(%d that pass the filter, %d that the filter leaves out, %d undecided), and %d are other writers': the %s lacks items, or holds items it should not",
		scanned, want, c.want.Len(), c.filtered, len(c.undecided), others, res.Index)
	return nil
}

// othersRead counts the other writers' items the key condition reads: the
// Query without its filter.
func (c *patternCheck) othersRead(ctx context.Context, client dynamodb.QueryAPIClient, table string) (int64, error) {
	in, err := patternQuery(table, c.pp, c.values, false)
	if err != nil {
		return 0, err
	}
	in.Limit = aws.Int32(queryPageItems)
	var n int64
	for p := dynamodb.NewQueryPaginator(client, in); p.HasMorePages(); {
		out, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("pattern %s: %w", c.pp.Pattern.Name, err)
		}
		for _, it := range out.Items {
			if c.other(it) {
				n++
			}
		}
	}
	return n, nil
}

// skip reports whether item, differing from the other side's and read at readAt
// or before, is passed over, counting it in res: its put was refused, or it
// changed after the snapshot.
func (c *patternCheck) skip(ctx context.Context, item []byte, readAt time.Time, res *outcome.PatternResult) (bool, error) {
	if c.refused != nil {
		ok, err := c.refused(item)
		if err != nil {
			return false, err
		}
		if ok {
			res.Refused++
			return true, nil
		}
	}
	if c.inFlight == nil {
		return false, nil
	}
	ok, err := c.inFlight(ctx, item, readAt)
	if ok {
		res.InFlight++
	}
	return ok, err
}

// answerReader reads a Query's answer page by page as canonical items; from a
// GSI, each run of equal sort keys (the whole answer, without a sort key) is
// ordered by canonical item in ties (on disk past its budget).
type answerReader struct {
	ctx  context.Context
	name string
	p    *dynamodb.QueryPaginator
	page []map[string]types.AttributeValue
	i    int
	n    int // items read
	// gsi: the answer is a GSI's, whose items of equal sort keys (all, without
	// one) come back in no defined order.
	gsi bool
	// sortAttr is the GSI's sort key, of type sortType ("" for none).
	sortAttr, sortType string
	// sortKeys are a multi-attribute GSI's sort key attributes, whose runs of
	// equal values are ordered.
	sortKeys []mapping.KeyAttribute
	ties     *extsort.Sorter
	run      extsort.Source // the current run of ties, ordered
	// undecided counts items passed over as undecided.
	undecided int
	// scanned sums ScannedCount: items the key condition read before the
	// filter.
	scanned int64
	// readAt is when the last page was read.
	readAt  time.Time
	pending *answerItem // the first item of the next run
	// other reports an item of another writer, which is passed over and
	// counted in others.
	other  func(map[string]types.AttributeValue) bool
	others int
}

type answerItem struct {
	sort string
	item []byte
}

// raw returns the next item as DynamoDB returned it; io.EOF at the end.
func (a *answerReader) raw() (answerItem, error) {
	var it map[string]types.AttributeValue
	for it == nil {
		for a.i >= len(a.page) {
			if !a.p.HasMorePages() {
				return answerItem{}, io.EOF
			}
			out, err := a.p.NextPage(a.ctx)
			if err != nil {
				return answerItem{}, fmt.Errorf("pattern %s: %w", a.name, err)
			}
			a.page, a.i = out.Items, 0
			a.scanned += int64(out.ScannedCount)
			a.readAt = time.Now()
		}
		it = a.page[a.i]
		a.page[a.i] = nil
		a.i++
		if a.other != nil && a.other(it) {
			a.others++
			it = nil
		}
	}
	a.n++
	ai := answerItem{item: ddbjson.Canonical(it)}
	if len(a.sortKeys) > 0 {
		ai.sort = sortTuple(it, a.sortKeys)
	} else if a.sortAttr != "" {
		if v, ok := it[a.sortAttr]; ok {
			text, _ := transform.KeyText(v)
			ai.sort = transform.SortText(a.sortType, text)
		}
	}
	return ai, nil
}

// next returns the next canonical item, tie runs ordered; io.EOF at the end.
// Valid until the next call.
func (a *answerReader) next() ([]byte, error) {
	if !a.gsi {
		it, err := a.raw()
		return it.item, err
	}
	for {
		if a.run != nil {
			rec, err := a.run.Next()
			if !errors.Is(err, io.EOF) {
				return rec, err
			}
			a.run = nil
		}
		first := a.pending
		a.pending = nil
		if first == nil {
			it, err := a.raw()
			if err != nil {
				return nil, err
			}
			first = &it
		}
		a.ties.Reset()
		if err := a.ties.Add(first.item); err != nil {
			return nil, err
		}
		for {
			it, err := a.raw()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, err
			}
			if it.sort != first.sort {
				a.pending = &it
				break
			}
			if err := a.ties.Add(it.item); err != nil {
				return nil, err
			}
		}
		var err error
		if a.run, err = a.ties.Iter(); err != nil {
			return nil, err
		}
	}
}

// drain reads the rest of the answer, to count it.
func (a *answerReader) drain() error {
	for {
		if _, err := a.raw(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// runAll runs the sample's checks and judges the pattern by docs/verify.md,
// "Patterns that reach nothing fail": an empty parameter source or no item
// derived passes with a Note; no tuple, or every check expecting and getting
// nothing, fails, unless some filter left items out or undecided (those were
// compared). A pattern reading a whole item collection is compared with
// PostgreSQL's count of it (checkCollection). rows gives each entity's source
// row count, for the message.
func (ps *patternSample) runAll(ctx context.Context, src source, client dynamodb.QueryAPIClient, table string, wait *indexWait,
	orders *orderChecker, ties *extsort.Sorter, derived int64, rows []int64) ([]outcome.PatternResult, error) {
	ap := ps.pp.Pattern
	index := ap.Index
	if index == "" {
		index = "table"
	}
	const empty = "not checked: the source derives no item, so no Query can find one (the Scan checks the table holds none)"
	if len(ps.checks) == 0 {
		res := outcome.PatternResult{Pattern: ap.Name, Index: index, Params: map[string]string{}, NotRun: true}
		switch {
		case derived == 0:
			res.OK, res.Note = true, empty
		case ps.tuples == 0 && ps.from >= 0 && rows[ps.from] == 0:
			// The rows a Query would be asked for are not there yet.
			e := orders.plans[ps.from].Entity()
			res.OK, res.Note = true, fmt.Sprintf("not checked: its parameters (%s) are sampled from the source of entity %s (%s), which is empty: no Query was run",
				strings.Join(ps.pp.Params, ", "), e.Name, sourceName(e.Source))
		case ps.tuples == 0:
			e := orders.plans[ps.from].Entity()
			res.Problem = fmt.Sprintf("not checked: no row of the source of entity %s (%s) has its parameters (%s) all non-NULL: no Query was run",
				e.Name, sourceName(e.Source), strings.Join(ps.pp.Params, ", "))
		default:
			res.Problem = fmt.Sprintf("not checked: none of the %d sampled parameter tuples renders a key (%s): no Query was run", ps.tuples, ps.unrendered)
		}
		return []outcome.PatternResult{res}, nil
	}
	out := make([]outcome.PatternResult, 0, len(ps.checks))
	nothing := true
	for _, c := range ps.checks {
		pr, err := c.run(ctx, client, table, wait, orders, ties)
		if err != nil {
			return nil, err
		}
		if err := ps.checkCollection(ctx, src, orders.plans, c, &pr); err != nil {
			return nil, err
		}
		if ps.from < 0 && c.counted && c.collection == 0 && pr.OK && pr.Want == 0 && pr.Got == 0 {
			addNote(&pr, "not checked: PostgreSQL counts no row in the item collection, and the Query returned no item")
			out, nothing = append(out, pr), false
			continue
		}
		// Items a filter left out on both sides were compared (checkScanned).
		nothing = nothing && pr.OK && pr.Want == 0 && pr.Got == 0 && c.filtered == 0 && len(c.undecided) == 0
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
