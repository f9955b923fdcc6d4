package verify

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// shopMapping has two entities in two partitions, and an access pattern
// on each: OrdersOfCustomer (parameters sampled from Order's source) and
// CustomerProfile (from Customer's).
const shopMapping = `table: {name: shop}
entities:
  Customer:
    source: {table: customers}
    pk: PROFILE#${id}
    sk: PROFILE
  Order:
    source: {table: orders}
    pk: CUSTOMER#${customer_id}
    sk: ORDER#${order_id}
access_patterns:
  OrdersOfCustomer: {key_condition: "PK = CUSTOMER#${customer_id} AND begins_with(SK, ORDER#)"}
  CustomerProfile: {key_condition: "PK = PROFILE#${id}"}
`

// shop compiles shopMapping (extra appended to its access patterns)
// against its columns, without PostgreSQL, and returns a fake source over
// a few rows.
func shop(t *testing.T, extra string) (*mapping.Mapping, *fakeSource) {
	t.Helper()
	return shopFrom(t, shopMapping+extra)
}

// shopFrom compiles mapping text with shopMapping's entities and returns
// a fake source over a few rows: customers 10, 11, 12 and orders 1 to 5
// (notes a to e), three of customer 10.
func shopFrom(t *testing.T, text string) (*mapping.Mapping, *fakeSource) {
	t.Helper()
	m, err := mapping.Parse("shop.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	plans, err := transform.CompileAll(m, []*transform.Sources{
		{Columns: []extract.Column{{Name: "id", Type: "int4", PrimaryKey: true}, {Name: "name", Type: "text"}}},
		{Columns: []extract.Column{{Name: "order_id", Type: "int4", PrimaryKey: true}, {Name: "customer_id", Type: "int4"}, {Name: "note", Type: "text"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m, &fakeSource{plans: plans, rows: [][][]any{
		{{int32(10), "ann"}, {int32(11), "bob"}, {int32(12), "cy"}},
		{{int32(1), int32(10), "a"}, {int32(2), int32(10), "b"}, {int32(3), int32(11), "c"}, {int32(4), int32(12), "d"}, {int32(5), int32(10), "e"}},
	}}
}

// compilePattern compiles m's access pattern name.
func compilePattern(t *testing.T, m *mapping.Mapping, src *fakeSource, name string) *transform.PatternPlan {
	t.Helper()
	for _, ap := range m.AccessPatterns {
		if ap.Name == name {
			pp, err := transform.CompilePattern(m, ap, src.plans)
			if err != nil {
				t.Fatal(err)
			}
			return pp
		}
	}
	t.Fatalf("no access pattern %s", name)
	return nil
}

// runCompare runs compare with fakes, closing the Result at the end of
// the test.
func runCompare(t *testing.T, m *mapping.Mapping, src *fakeSource, table *fakeTable, opts Options) (*outcome.Result, error) {
	t.Helper()
	res, err := compare(context.Background(), src, src.derive(), m, src.plans, table, opts)
	if res != nil {
		t.Cleanup(func() { res.Close() })
	}
	return res, err
}

func without(items []item, pk, sk string) []item {
	var out []item
	for _, it := range items {
		if sValue(it, "PK") != pk || sValue(it, "SK") != sk {
			out = append(out, it)
		}
	}
	return out
}

func with(it item, attr string, v types.AttributeValue) item {
	out := item{}
	for k, w := range it {
		out[k] = w
	}
	out[attr] = v
	return out
}

// patternProblems maps each failing pattern result to its problem, by
// pattern and parameters.
func patternProblems(res *outcome.Result) map[string]string {
	out := map[string]string{}
	for _, p := range res.Patterns {
		if !p.OK {
			out[p.Pattern+" "+p.Params["customer_id"]+p.Params["id"]] = p.Problem
		}
	}
	return out
}

// Compare, with fakes on both sides, finds every kind of difference: the
// table as migrated matches; a missing item, a stale and an unmanaged
// extra item and a differing attribute are each counted and listed, and
// fail the result, as does a Query answer they change, except an item of
// a type the mapping does not have, alone, which is another writer's.
func TestCompareFindsEachDifference(t *testing.T) {
	const (
		c10 = "CUSTOMER#0000000010"
		o2  = "ORDER#0000000002"
		o3  = "ORDER#0000000003"
	)
	tests := []struct {
		name  string
		table func([]item) []item
		// want are the counts and lists of the Result.
		wantOK                   bool
		wantCounts               outcome.ListCounts
		wantMissing, wantExtra   []outcome.ItemRef
		wantChanged              []outcome.ChangedItem
		wantOrder                outcome.EntityCounts // Order's counts, but its write units
		wantStale, wantUnmanaged int64
		wantProblems             []string // failing pattern results: pattern and parameter
	}{{
		name:       "as migrated",
		table:      func(items []item) []item { return items },
		wantOK:     true,
		wantOrder:  outcome.EntityCounts{Entity: "Order", Type: "Order", SourceRows: 5, Rows: 5, ItemsPerRow: 1, Expected: 5, Derived: 5, Table: 5, Unchanged: 5},
		wantCounts: outcome.ListCounts{},
	}, {
		name:         "an item missing",
		table:        func(items []item) []item { return without(items, c10, o2) },
		wantCounts:   outcome.ListCounts{Missing: outcome.ListCount{Total: 1, Listed: 1}},
		wantMissing:  []outcome.ItemRef{{PK: c10, SK: o2, Type: "Order"}},
		wantOrder:    outcome.EntityCounts{Entity: "Order", Type: "Order", SourceRows: 5, Rows: 5, ItemsPerRow: 1, Expected: 5, Derived: 5, Table: 4, Unchanged: 4, Missing: 1},
		wantProblems: []string{"OrdersOfCustomer 10"},
	}, {
		name: "extra items, stale and unmanaged",
		table: func(items []item) []item {
			stale := with(with(items[3], "SK", &types.AttributeValueMemberS{Value: "ORDER#0000000099"}), "order_id", &types.AttributeValueMemberN{Value: "99"})
			other := item{"PK": &types.AttributeValueMemberS{Value: "LOG#1"}, "SK": &types.AttributeValueMemberS{Value: "X"}, "type": &types.AttributeValueMemberS{Value: "Log"}}
			return append(items, stale, other)
		},
		wantCounts: outcome.ListCounts{Extra: outcome.ListCount{Total: 2, Listed: 2}},
		wantExtra:  []outcome.ItemRef{{PK: c10, SK: "ORDER#0000000099", Type: "Order"}, {PK: "LOG#1", SK: "X", Type: "Log"}},
		wantOrder:  outcome.EntityCounts{Entity: "Order", Type: "Order", SourceRows: 5, Rows: 5, ItemsPerRow: 1, Expected: 5, Derived: 5, Table: 6, Unchanged: 5, Stale: 1},
		wantStale:  1, wantUnmanaged: 1,
		wantProblems: []string{"OrdersOfCustomer 10"},
	}, {
		name: "another writer's item only",
		table: func(items []item) []item {
			other := item{"PK": &types.AttributeValueMemberS{Value: "LOG#1"}, "SK": &types.AttributeValueMemberS{Value: "X"}, "type": &types.AttributeValueMemberS{Value: "Log"}}
			return append(items, other)
		},
		wantOK:        true,
		wantCounts:    outcome.ListCounts{Extra: outcome.ListCount{Total: 1, Listed: 1}},
		wantExtra:     []outcome.ItemRef{{PK: "LOG#1", SK: "X", Type: "Log"}},
		wantOrder:     outcome.EntityCounts{Entity: "Order", Type: "Order", SourceRows: 5, Rows: 5, ItemsPerRow: 1, Expected: 5, Derived: 5, Table: 5, Unchanged: 5},
		wantUnmanaged: 1,
	}, {
		name: "an attribute differs",
		table: func(items []item) []item {
			for i, it := range items {
				if sValue(it, "SK") == o3 {
					items[i] = with(it, "note", &types.AttributeValueMemberS{Value: "X"})
				}
			}
			return items
		},
		wantCounts: outcome.ListCounts{Changed: outcome.ListCount{Total: 1, Listed: 1}},
		wantChanged: []outcome.ChangedItem{{ItemRef: outcome.ItemRef{PK: "CUSTOMER#0000000011", SK: o3, Type: "Order"},
			Changes: []outcome.AttrChange{{Attribute: "note", Before: []byte(`{"S":"X"}`), After: []byte(`{"S":"c"}`)}}}},
		wantOrder:    outcome.EntityCounts{Entity: "Order", Type: "Order", SourceRows: 5, Rows: 5, ItemsPerRow: 1, Expected: 5, Derived: 5, Table: 5, Unchanged: 4, Changed: 1},
		wantProblems: []string{"OrdersOfCustomer 11"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, src := shop(t, "")
			table := &fakeTable{keys: [2]string{"PK", "SK"}, items: tc.table(src.tableItems(t)), pageSize: 2}
			res, err := runCompare(t, m, src, table, Options{Segments: 2})
			if err != nil {
				t.Fatal(err)
			}
			if res.OK() != tc.wantOK {
				t.Errorf("OK() = %v, want %v", res.OK(), tc.wantOK)
			}
			if diff := gocmp.Diff(tc.wantCounts, res.Counts); diff != "" {
				t.Errorf("Counts (-want +got):\n%s", diff)
			}
			order := res.Entities[1]
			order.WriteUnits = 0
			if diff := gocmp.Diff(tc.wantOrder, order); diff != "" {
				t.Errorf("Order's counts (-want +got):\n%s", diff)
			}
			if res.Stale != tc.wantStale || res.Unmanaged != tc.wantUnmanaged {
				t.Errorf("stale %d, unmanaged %d; want %d, %d", res.Stale, res.Unmanaged, tc.wantStale, tc.wantUnmanaged)
			}
			if diff := gocmp.Diff(tc.wantMissing, sortedRefs(must(res.Missing.Slice())), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Missing (-want +got):\n%s", diff)
			}
			if diff := gocmp.Diff(sortedRefs(tc.wantExtra), sortedRefs(must(res.Extra.Slice())), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Extra (-want +got):\n%s", diff)
			}
			changed := must(res.Changed.Slice())
			for i := range changed {
				changed[i].Before, changed[i].After = nil, nil // the whole items: checked below
			}
			if diff := gocmp.Diff(tc.wantChanged, changed, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Changed (-want +got):\n%s", diff)
			}
			var problems []string
			for k := range patternProblems(res) {
				problems = append(problems, k)
			}
			if diff := gocmp.Diff(tc.wantProblems, problems, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("failing pattern results (-want +got):\n%s", diff)
			}
			// Every pattern ran a Query per sampled tuple: 3 customers of
			// orders, 3 profiles.
			if len(res.Patterns) != 6 {
				t.Errorf("%d pattern results, want 6: %+v", len(res.Patterns), res.Patterns)
			}
		})
	}
}

// A changed item keeps its whole before and after, the table's and the
// source's.
func TestCompareKeepsTheChangedItems(t *testing.T) {
	m, src := shop(t, "")
	items := src.tableItems(t)
	items[4] = with(items[4], "note", &types.AttributeValueMemberS{Value: "X"})
	res, err := runCompare(t, m, src, &fakeTable{keys: [2]string{"PK", "SK"}, items: items}, Options{SkipPatterns: true})
	if err != nil {
		t.Fatal(err)
	}
	changed := must(res.Changed.Slice())
	if len(changed) != 1 {
		t.Fatalf("changed %+v, want 1 item", changed)
	}
	if got, want := string(changed[0].Before), string(ddbjson.Canonical(items[4])); got != want {
		t.Errorf("Before = %s, want %s", got, want)
	}
	if !strings.Contains(string(changed[0].After), `"note":{"S":"b"}`) {
		t.Errorf("After = %s, want the source's note b", changed[0].After)
	}
	if len(res.Patterns) != 0 {
		t.Errorf("SkipPatterns ran %d patterns", len(res.Patterns))
	}
}

// Found nothing to compare fails rather than passes, as long as the
// source derives some item: a pattern whose key condition reaches no
// item fails every result ("matches nothing"). A pattern whose
// parameters come from an empty source cannot run, and passes with a
// note: an empty table is no mistake. When the source derives no item at
// all, the Scan alone proves an empty table right: the patterns pass with
// a note; a table that holds items then fails on them.
func TestCompareFoundNothingFails(t *testing.T) {
	t.Run("a key condition that reaches no item", func(t *testing.T) {
		m, src := shop(t, "  Misspelt: {key_condition: \"PK = CUST#${customer_id}\"}\n")
		table := &fakeTable{keys: [2]string{"PK", "SK"}, items: src.tableItems(t)}
		res, err := runCompare(t, m, src, table, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.OK() {
			t.Error("OK() = true, want false")
		}
		n := 0
		for _, p := range res.Patterns {
			switch {
			case p.Pattern == "Misspelt":
				n++
				if p.OK || !strings.HasPrefix(p.Problem, "matches nothing") {
					t.Errorf("Misspelt %v: OK %v, problem %q; want it to fail as matching nothing", p.Params, p.OK, p.Problem)
				}
			case !p.OK:
				t.Errorf("%s %v fails: %s", p.Pattern, p.Params, p.Problem)
			}
		}
		if n != 3 {
			t.Errorf("%d Misspelt results, want 3 (one a customer)", n)
		}
	})
	// An empty table is no mistake: a pattern whose parameters it would
	// give is not checked, and passes saying so.
	t.Run("parameters from an empty source", func(t *testing.T) {
		m, src := shop(t, "")
		src.rows[0] = nil // no customer: CustomerProfile has no parameter
		table := &fakeTable{keys: [2]string{"PK", "SK"}, items: src.tableItems(t)}
		res, err := runCompare(t, m, src, table, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !res.OK() {
			t.Errorf("OK() = false, want true; failing: %v", patternProblems(res))
		}
		found := false
		for _, p := range res.Patterns {
			if p.Pattern == "CustomerProfile" {
				found = true
				if !p.OK || !p.NotRun || !strings.Contains(p.Note, "which is empty: no Query was run") {
					t.Errorf("CustomerProfile: OK %v, not run %v, note %q: want it passed, not run, for an empty source", p.OK, p.NotRun, p.Note)
				}
			}
		}
		if !found {
			t.Error("no result for CustomerProfile")
		}
	})
	t.Run("no item derived, empty table", func(t *testing.T) {
		m, src := shop(t, "")
		src.rows = [][][]any{nil, nil}
		res, err := runCompare(t, m, src, &fakeTable{keys: [2]string{"PK", "SK"}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !res.OK() {
			t.Errorf("OK() = false, want true: %+v", res)
		}
		for _, p := range res.Patterns {
			if !strings.HasPrefix(p.Note, "not checked") {
				t.Errorf("%s: note %q, want it to say it was not checked", p.Pattern, p.Note)
			}
		}
	})
	t.Run("no item derived, items in the table", func(t *testing.T) {
		m, src := shop(t, "")
		items := src.tableItems(t)
		src.rows = [][][]any{nil, nil}
		res, err := runCompare(t, m, src, &fakeTable{keys: [2]string{"PK", "SK"}, items: items}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.OK() || res.Counts.Extra.Total != int64(len(items)) {
			t.Errorf("OK() = %v, %d extra; want false, %d", res.OK(), res.Counts.Extra.Total, len(items))
		}
	})
}

// A table that does not exist is no error: every item is missing, and
// neither Scan nor Query is run.
func TestCompareTableMissing(t *testing.T) {
	m, src := shop(t, "")
	table := &fakeTable{keys: [2]string{"PK", "SK"}, missing: true}
	res, err := runCompare(t, m, src, table, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TableMissing || res.OK() || res.Counts.Missing.Total != 8 {
		t.Errorf("TableMissing %v, OK() %v, missing %d; want true, false, 8", res.TableMissing, res.OK(), res.Counts.Missing.Total)
	}
	if len(table.scans)+len(table.queries) != 0 || len(res.Patterns) != 0 {
		t.Errorf("%d Scans, %d Queries, %d pattern results against a missing table; want none", len(table.scans), len(table.queries), len(res.Patterns))
	}
}

// The Scan reads every page of every segment, consistently, a bounded
// page at a time.
func TestCompareScansEveryPage(t *testing.T) {
	m, src := shop(t, "")
	table := &fakeTable{keys: [2]string{"PK", "SK"}, items: src.tableItems(t), pageSize: 1}
	res, err := runCompare(t, m, src, table, Options{Segments: 3, SkipPatterns: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() || res.Entities[0].Unchanged+res.Entities[1].Unchanged != 8 {
		t.Errorf("OK() %v, unchanged %d+%d; want true, 8", res.OK(), res.Entities[0].Unchanged, res.Entities[1].Unchanged)
	}
	// 8 items in 3 segments of 3, 3 and 2 items, a page each.
	if len(table.scans) != 8 {
		t.Errorf("%d Scan calls, want 8 (one item a page)", len(table.scans))
	}
	for _, in := range table.scans {
		if !*in.ConsistentRead || *in.Limit != load.ScanPageItems || *in.TotalSegments != 3 {
			t.Errorf("Scan ConsistentRead %v, Limit %d, TotalSegments %d; want true, %d, 3", *in.ConsistentRead, *in.Limit, *in.TotalSegments, load.ScanPageItems)
		}
	}
}

// A failure of the source, the Scan or a Query fails Compare with that
// error, wrapped; a DynamoDB that cannot be described fails it before
// the source is read.
func TestCompareFails(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(*fakeSource, *fakeTable)
		want   string
		source bool // the source was counted
	}{
		{"source count", func(s *fakeSource, _ *fakeTable) { s.countErr = errFake }, "fake failure", true},
		{"second Scan page", func(_ *fakeSource, f *fakeTable) { f.scanErrAt = 2 }, "scan shop segment 0: fake failure", true},
		{"a Query", func(_ *fakeSource, f *fakeTable) { f.queryErrAt = 2 }, "pattern OrdersOfCustomer: fake failure", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, src := shop(t, "")
			table := &fakeTable{keys: [2]string{"PK", "SK"}, items: src.tableItems(t), pageSize: 1}
			tc.setup(src, table)
			res, err := runCompare(t, m, src, table, Options{Segments: 1})
			if !errors.Is(err, errFake) || err.Error() != tc.want {
				t.Fatalf("error %v, want %q wrapping errFake", err, tc.want)
			}
			if res != nil {
				t.Errorf("a Result with the error: %+v", res)
			}
		})
	}
}

// Items that changes after the snapshot reached (Options.InFlight) are
// counted in flight, not as missing, extra or differing, and skipped in
// the Query answers; a difference on any other item still fails.
func TestCompareInFlight(t *testing.T) {
	const c10 = "CUSTOMER#0000000010"
	m, src := shop(t, "")
	items := without(src.tableItems(t), c10, "ORDER#0000000002")
	for i, it := range items {
		if sValue(it, "SK") == "ORDER#0000000003" {
			items[i] = with(it, "note", &types.AttributeValueMemberS{Value: "X"})
		}
	}
	o1 := items[slices.IndexFunc(items, func(it item) bool { return sValue(it, "SK") == "ORDER#0000000001" })]
	stale := with(with(o1, "SK", &types.AttributeValueMemberS{Value: "ORDER#0000000099"}), "order_id", &types.AttributeValueMemberN{Value: "99"})
	items = append(items, stale)
	for _, tc := range []struct {
		name     string
		inFlight []string // sort keys
		wantOK   bool
		want     outcome.ListCounts
		problems []string
	}{
		{name: "the missing and the differing item in flight", inFlight: []string{"ORDER#0000000002", "ORDER#0000000003"},
			want:     outcome.ListCounts{Extra: outcome.ListCount{Total: 1, Listed: 1}, InFlight: outcome.ListCount{Total: 2, Listed: 2}},
			problems: []string{"OrdersOfCustomer 10"}},
		{name: "every difference in flight", inFlight: []string{"ORDER#0000000002", "ORDER#0000000003", "ORDER#0000000099"}, wantOK: true,
			want: outcome.ListCounts{InFlight: outcome.ListCount{Total: 3, Listed: 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			opts := Options{Segments: 2, InFlight: func(_ context.Context, pk, sk string, readAt time.Time) (bool, error) {
				if readAt.IsZero() {
					t.Errorf("InFlight asked of %s %s without the time the table was read", pk, sk)
				}
				asked = append(asked, sk)
				return slices.Contains(tc.inFlight, sk), nil
			}}
			table := &fakeTable{keys: [2]string{"PK", "SK"}, items: slices.Clone(items), pageSize: 2}
			res, err := runCompare(t, m, src, table, opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.OK() != tc.wantOK {
				t.Errorf("OK() = %v, want %v", res.OK(), tc.wantOK)
			}
			if diff := gocmp.Diff(tc.want, res.Counts); diff != "" {
				t.Errorf("Counts (-want +got):\n%s", diff)
			}
			if n := res.Entities[1].InFlight; n != tc.want.InFlight.Total {
				t.Errorf("Order's in-flight count %d, want %d", n, tc.want.InFlight.Total)
			}
			if diff := gocmp.Diff(tc.problems, slices.Collect(maps.Keys(patternProblems(res))), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("failing pattern results (-want +got):\n%s", diff)
			}
			skipped := 0
			for _, p := range res.Patterns {
				skipped += p.InFlight
			}
			if skipped == 0 {
				t.Errorf("no item skipped in the Query answers: %+v", res.Patterns)
			}
			for _, sk := range asked {
				if !slices.Contains([]string{"ORDER#0000000002", "ORDER#0000000003", "ORDER#0000000099"}, sk) {
					t.Errorf("InFlight asked of %s, which does not differ", sk)
				}
			}
		})
	}
}

func sortedRefs(refs []outcome.ItemRef) []outcome.ItemRef {
	out := slices.Clone(refs)
	slices.SortFunc(out, func(a, b outcome.ItemRef) int { return strings.Compare(a.PK+"\x00"+a.SK, b.PK+"\x00"+b.SK) })
	return out
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
