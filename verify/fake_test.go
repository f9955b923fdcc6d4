package verify

import (
	stdcmp "cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// This file holds the fakes of verify's seams (ReadAPI, source,
// deriveFunc), for tests that run with neither PostgreSQL nor DynamoDB.

type item = map[string]types.AttributeValue

// errFake is the error a fake is told to fail with.
var errFake = errors.New("fake failure")

// fakeTable is a ReadAPI over items held in memory, in the order given.
//
// Scan gives segment s the items whose position is s modulo
// TotalSegments. Query answers a key condition on the table or on a GSI
// (gsis: its partition and sort key attributes) from the items that have
// the condition's partition key value, sorted by the index's sort key
// (reversed for ScanIndexForward false); it ignores the sort key
// condition, so tests use one that every item of the partition meets.
// Both return at most min(Limit, pageSize) items a page, as DynamoDB cuts
// a page at 1 MB, with LastEvaluatedKey the key of the page's last item
// while items remain, and resume after ExclusiveStartKey: reading the
// whole answer needs the paging to work. Safe for concurrent use.
type fakeTable struct {
	keys     [2]string            // the table's partition and sort key attributes
	gsis     map[string][2]string // GSI name → its partition and sort key attributes
	items    []item
	missing  bool // DescribeTable fails with ResourceNotFoundException
	pageSize int  // 0: Limit alone
	// scanErrAt and queryErrAt fail the nth Scan (or Query) call, 1-based,
	// with errFake; 0 never.
	scanErrAt, queryErrAt int
	// queryAnswers, when set, replace the nth Query answer of a partition
	// key value (by call, 0-based; the last one for later calls), to script
	// a GSI that lags its table.
	queryAnswers map[string][][]item
	// filteredOut counts, by partition key value, the items a Query's
	// FilterExpression leaves out, which the fake does not evaluate: its
	// ScannedCount is the page's items, plus these on the first page.
	filteredOut map[string]int32

	mu         sync.Mutex
	scans      []dynamodb.ScanInput
	queries    []dynamodb.QueryInput
	describes  int
	queryCalls map[string]int // first pages asked, by partition key value
	batchGets  int            // BatchGetItem calls (apply_unit_test.go)
}

var _ ReadAPI = (*fakeTable)(nil)

func (f *fakeTable) DescribeTable(_ context.Context, in *dynamodb.DescribeTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.describes++
	if f.missing {
		return nil, &types.ResourceNotFoundException{Message: aws.String("Requested resource not found")}
	}
	return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{TableName: in.TableName, ItemCount: aws.Int64(int64(len(f.items)))}}, nil
}

func (f *fakeTable) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scans = append(f.scans, *in)
	if len(f.scans) == f.scanErrAt {
		return nil, errFake
	}
	seg, total := int(aws.ToInt32(in.Segment)), int(max(aws.ToInt32(in.TotalSegments), 1))
	var mine []item
	for i, it := range f.items {
		if i%total == seg {
			mine = append(mine, it)
		}
	}
	page, last := f.page(mine, in.ExclusiveStartKey, in.Limit, f.keys[:])
	return &dynamodb.ScanOutput{Items: page, LastEvaluatedKey: last, Count: int32(len(page))}, nil
}

func (f *fakeTable) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, *in)
	if len(f.queries) == f.queryErrAt {
		return nil, errFake
	}
	idx := f.keys
	if in.IndexName != nil {
		idx = f.gsis[*in.IndexName]
	}
	pk, err := partitionValue(in, idx[0])
	if err != nil {
		return nil, err
	}
	var answer []item
	if script, ok := f.queryAnswers[pk]; ok {
		if f.queryCalls == nil {
			f.queryCalls = map[string]int{}
		}
		n := f.queryCalls[pk]
		if in.ExclusiveStartKey == nil {
			f.queryCalls[pk]++
		} else {
			n-- // a later page of the same answer
		}
		answer = script[min(n, len(script)-1)]
	} else {
		for _, it := range f.items {
			if s, ok := it[idx[0]].(*types.AttributeValueMemberS); ok && s.Value == pk {
				answer = append(answer, it)
			}
		}
		slices.SortStableFunc(answer, func(a, b item) int { return stdcmp.Compare(sValue(a, idx[1]), sValue(b, idx[1])) })
		if in.ScanIndexForward != nil && !*in.ScanIndexForward {
			slices.Reverse(answer)
		}
	}
	keyAttrs := append([]string{f.keys[0], f.keys[1]}, idx[:]...)
	page, last := f.page(answer, in.ExclusiveStartKey, in.Limit, keyAttrs)
	scanned := int32(len(page))
	if in.ExclusiveStartKey == nil {
		scanned += f.filteredOut[pk]
	}
	return &dynamodb.QueryOutput{Items: page, LastEvaluatedKey: last, Count: int32(len(page)), ScannedCount: scanned}, nil
}

// page returns the page of items after the item whose keyAttrs are
// those of start (from the first when start is nil), and the key of its
// last item when more follow.
func (f *fakeTable) page(items []item, start item, limit *int32, keyAttrs []string) ([]item, item) {
	from := 0
	if start != nil {
		from = len(items) // an unknown key: nothing left
		for i, it := range items {
			if sameKey(it, start, keyAttrs) {
				from = i + 1
				break
			}
		}
	}
	n := int(aws.ToInt32(limit))
	if n <= 0 {
		n = len(items)
	}
	if f.pageSize > 0 {
		n = min(n, f.pageSize)
	}
	end := min(from+n, len(items))
	// A copy, as each response of the SDK is: verify lets go of the
	// items it has read (answerReader.raw).
	page := slices.Clone(items[from:end])
	if end == len(items) || len(page) == 0 {
		return page, nil
	}
	last := item{}
	for _, a := range keyAttrs {
		if v, ok := page[len(page)-1][a]; ok && a != "" {
			last[a] = v
		}
	}
	return page, last
}

func sameKey(it, key item, attrs []string) bool {
	for _, a := range attrs {
		if a != "" && sValue(it, a) != sValue(key, a) {
			return false
		}
	}
	return true
}

func sValue(it item, attr string) string {
	if s, ok := it[attr].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// partitionValue finds, in a key condition built by
// feature/dynamodb/expression ("#0 = :0 AND …"), the value the partition
// key attribute attr must equal.
func partitionValue(in *dynamodb.QueryInput, attr string) (string, error) {
	for ph, name := range in.ExpressionAttributeNames {
		if name != attr {
			continue
		}
		m := regexp.MustCompile(regexp.QuoteMeta(ph) + ` = (:\w+)`).FindStringSubmatch(aws.ToString(in.KeyConditionExpression))
		if m == nil {
			continue
		}
		switch v := in.ExpressionAttributeValues[m[1]].(type) {
		case *types.AttributeValueMemberS:
			return v.Value, nil
		case *types.AttributeValueMemberN: // a multi-attribute key's number
			return v.Value, nil
		}
	}
	return "", fmt.Errorf("fake: no condition on %s in %q", attr, aws.ToString(in.KeyConditionExpression))
}

// fakeSource is a source over rows held in memory: rows[i] are the rows of
// plans[i]'s entity, each in the order of its Query().Columns.
// SampleParams takes the tuples from the rows of the first entity whose
// source is the one asked for, in row order; Rank orders tuples as Go
// orders their values (ints, strings), which is how PostgreSQL orders
// those types under COLLATE "C". unordered makes Rank fail with
// extract.ErrUnordered; countErr makes Count fail.
type fakeSource struct {
	plans     []*transform.Plan
	rows      [][][]any
	unordered bool
	countErr  error
	// lost are rows of plans[i] that CountMatching sees and the
	// derivation does not: rows a defect of the transform loses.
	lost map[int][][]any
	// mangle, if set, changes each derived item in place, on both sides
	// (derive and tableItems): a defect of the transform.
	mangle func(it item)

	ranks int // Rank calls
}

var _ source = (*fakeSource)(nil)

func (s *fakeSource) Count(_ context.Context, e *mapping.Entity) (int64, error) {
	if s.countErr != nil {
		return 0, s.countErr
	}
	for i, p := range s.plans {
		if p.Entity() == e {
			return int64(len(s.rows[i])), nil
		}
	}
	return 0, fmt.Errorf("fake: no entity %s", e.Name)
}

func (s *fakeSource) SampleParams(_ context.Context, src mapping.Source, cols []string, n int) ([][]any, error) {
	for i, p := range s.plans {
		if p.Entity().Source != src {
			continue
		}
		var out [][]any
	rows:
		for _, row := range s.rows[i] {
			t := make([]any, len(cols))
			for j, c := range cols {
				k := slices.IndexFunc(p.Query().Columns, func(qc extract.Column) bool { return qc.Name == c })
				if k < 0 {
					return nil, fmt.Errorf("fake: no column %s", c)
				}
				if row[k] == nil {
					continue rows
				}
				t[j] = row[k]
			}
			if !slices.ContainsFunc(out, func(o []any) bool { return slices.Equal(o, t) }) && len(out) < n {
				out = append(out, t)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("fake: no entity reads %s", src)
}

func (s *fakeSource) SortColumns(_ context.Context, _ mapping.Source, cols []extract.Column) ([]extract.SortColumn, error) {
	out := make([]extract.SortColumn, len(cols))
	for i, c := range cols {
		out[i] = extract.SortColumn{Name: c.Name, Type: c.Type}
	}
	return out, nil
}

func (s *fakeSource) Rank(_ context.Context, _ []extract.SortColumn, tuples [][]any, desc bool) ([]int64, [][]string, error) {
	s.ranks++
	if s.unordered {
		return nil, nil, fmt.Errorf("fake: %w", extract.ErrUnordered)
	}
	compare := func(a, b []any) int {
		for i := range a {
			if c := compareValue(a[i], b[i]); c != 0 {
				return c
			}
		}
		return 0
	}
	sorted := slices.Clone(tuples)
	slices.SortFunc(sorted, compare)
	if desc {
		slices.Reverse(sorted)
	}
	ranks := make([]int64, len(tuples))
	texts := make([][]string, len(tuples))
	for i, t := range tuples {
		// dense rank: 1 + the distinct tuples before it.
		var distinct []([]any)
		for _, o := range sorted {
			if compare(o, t) == 0 {
				break
			}
			if len(distinct) == 0 || compare(distinct[len(distinct)-1], o) != 0 {
				distinct = append(distinct, o)
			}
		}
		ranks[i] = int64(len(distinct) + 1)
		for _, v := range t {
			texts[i] = append(texts[i], fmt.Sprint(v))
		}
	}
	return ranks, texts, nil
}

func compareValue(a, b any) int {
	switch a := a.(type) {
	case int32:
		return stdcmp.Compare(a, b.(int32))
	case int64:
		return stdcmp.Compare(a, b.(int64))
	case string:
		return strings.Compare(a, b.(string))
	}
	panic(fmt.Sprintf("fake: cannot order %T", a))
}

// derive returns a deriveFunc that converts s's rows with the real
// transform and hands each row's items to the sink in one batch, as the
// pipeline does (an item, then its mirror); it has no duplicate check and
// rejects no row.
func (s *fakeSource) derive() deriveFunc {
	return func(ctx context.Context, sink load.Sink, _ func(pipeline.Reject) error) (*pipeline.Summary, error) {
		sum := &pipeline.Summary{}
		b := transform.NewBuilder()
		for i, p := range s.plans {
			st := pipeline.EntityStats{Name: p.Entity().Name}
			for _, row := range s.rows[i] {
				items, err := b.Items(p, row, nil)
				if err != nil {
					return nil, err
				}
				for _, it := range items {
					if s.mangle != nil {
						s.mangle(it.Attrs)
					}
				}
				if err := sink.Write(ctx, items); err != nil {
					return nil, err
				}
				st.Rows++
				st.Items += int64(len(items))
			}
			sum.Entities = append(sum.Entities, st)
		}
		return sum, nil
	}
}

// tableItems derives the items of s's rows, as the table holds them after
// a migration.
func (s *fakeSource) tableItems(t *testing.T) []item {
	t.Helper()
	var out []item
	b := transform.NewBuilder()
	for i, p := range s.plans {
		for _, row := range s.rows[i] {
			items, err := b.Items(p, row, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range items {
				if s.mangle != nil {
					s.mangle(it.Attrs)
				}
				out = append(out, it.Attrs)
			}
		}
	}
	return out
}

// CountMatching counts as PostgreSQL does, comparing the values' text
// (fmt's) for ::text: the first row of home with values, then the rows of
// other.
func (s *fakeSource) CountMatching(_ context.Context, home mapping.Source, homeCols []string, values []any, other mapping.Source,
	pairs []extract.ColumnPair, notNull []string, exclude []map[string]any) (int64, error) {
	rowsOf := func(src mapping.Source) ([][]any, func(row []any, c string) any) {
		for i, p := range s.plans {
			if p.Entity().Source == src {
				return append(slices.Clone(s.rows[i]), s.lost[i]...), func(row []any, c string) any {
					k := slices.IndexFunc(p.Query().Columns, func(qc extract.Column) bool { return qc.Name == c })
					return row[k]
				}
			}
		}
		return nil, nil
	}
	hr, hv := rowsOf(home)
	or, ov := rowsOf(other)
	if len(homeCols) == 0 {
		hr, hv = [][]any{{}}, ov // a literal key: no home row to match
	}
	if hv == nil || ov == nil {
		return 0, fmt.Errorf("fake: no entity reads %s or %s", home, other)
	}
	text := func(v any) string { return fmt.Sprint(v) }
	var h []any
	for _, row := range hr {
		match := true
		for i, c := range homeCols {
			match = match && text(hv(row, c)) == text(values[i])
		}
		if match {
			h = row
			break
		}
	}
	if h == nil {
		return 0, nil
	}
	var n int64
	for _, row := range or {
		match := true
		for _, p := range pairs {
			match = match && ov(row, p.Other) != nil && text(ov(row, p.Other)) == text(hv(h, p.Home))
		}
		for _, c := range notNull {
			match = match && ov(row, c) != nil
		}
		for _, key := range exclude {
			same := true
			for c, v := range key {
				same = same && text(ov(row, c)) == text(v)
			}
			match = match && !same
		}
		if match {
			n++
		}
	}
	return n, nil
}

// CountJoined counts the pairs of a parent and a child row whose join
// columns have one text, less the parents equal to one of exclude.
func (s *fakeSource) CountJoined(_ context.Context, parent, child mapping.Source, join [][2]string, exclude []map[string]any) (int64, error) {
	rowsOf := func(src mapping.Source) ([][]any, func(row []any, c string) any) {
		for i, p := range s.plans {
			if p.Entity().Source == src {
				return s.rows[i], func(row []any, c string) any {
					return row[slices.IndexFunc(p.Query().Columns, func(qc extract.Column) bool { return qc.Name == c })]
				}
			}
		}
		return nil, nil
	}
	pr, pv := rowsOf(parent)
	cr, cv := rowsOf(child)
	if pv == nil || cv == nil {
		return 0, fmt.Errorf("fake: no entity reads %s or %s", parent, child)
	}
	var n int64
	for _, p := range pr {
		if slices.ContainsFunc(exclude, func(key map[string]any) bool {
			for c, v := range key {
				if fmt.Sprint(pv(p, c)) != fmt.Sprint(v) {
					return false
				}
			}
			return true
		}) {
			continue
		}
		for _, ch := range cr {
			if !slices.ContainsFunc(join, func(j [2]string) bool {
				return cv(ch, j[0]) == nil || fmt.Sprint(cv(ch, j[0])) != fmt.Sprint(pv(p, j[1]))
			}) {
				n++
			}
		}
	}
	return n, nil
}
