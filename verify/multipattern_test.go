package verify

import (
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	gocmp "github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// multiMapping has a GSI with a two-attribute partition key and a
// two-attribute sort key (a string, then a number).
const multiMapping = `table:
  name: orders
  gsis:
    - name: ByTenantRegion
      partition_keys: [{name: tenant_id, type: S}, {name: region, type: S}]
      sort_keys: [{name: placed_on, type: S}, {name: total, type: N}]
entities:
  Order:
    source: {table: orders}
    pk: ORDER#${order_id}
    sk: ORDER
access_patterns:
  Region:
    index: ByTenantRegion
    key_condition: "tenant_id = ${tenant_id} AND region = ${region}"
  Day:
    index: ByTenantRegion
    key_condition: "tenant_id = ${tenant_id} AND region = ${region} AND begins_with(placed_on, ${placed_on})"
  DayAbove:
    index: ByTenantRegion
    key_condition: "tenant_id = ${tenant_id} AND region = EU AND placed_on = ${placed_on} AND total BETWEEN ${total} AND 1000"
    scan_forward: false
`

func multiPlans(t *testing.T) (*mapping.Mapping, []*transform.Plan) {
	t.Helper()
	m, err := mapping.Parse("m.yaml", []byte(multiMapping))
	if err != nil {
		t.Fatal(err)
	}
	cols := []extract.Column{{Name: "order_id", Type: "int4", PrimaryKey: true, KeyPos: 1}, {Name: "tenant_id", Type: "text"},
		{Name: "region", Type: "text"}, {Name: "placed_on", Type: "text"}, {Name: "total", Type: "int8"}}
	p, err := transform.Compile(m, 0, transform.Sources{Columns: cols})
	if err != nil {
		t.Fatal(err)
	}
	return m, []*transform.Plan{p}
}

// The Query of a pattern on a GSI with multi-attribute keys, as the API
// reference describes it (dynalite and DynamoDB Local do not implement
// such keys, so the request is what can be checked): one condition a key
// attribute, joined by AND, every partition key attribute with =, the sort
// key attributes from the left, the range on the last one named, values of
// the attributes' own types. testdata/multi_queries.golden.json holds them
// (-update rewrites it).
func TestMultiAttributePatternQuery(t *testing.T) {
	m, plans := multiPlans(t)
	params := map[string]any{"tenant_id": "acme", "region": "EU", "placed_on": "2026-11", "total": int64(95)}
	got := map[string]any{}
	for _, ap := range m.AccessPatterns {
		pp, err := transform.CompilePattern(m, ap, plans)
		if err != nil {
			t.Fatal(err)
		}
		var values []any
		for _, p := range pp.Params {
			values = append(values, params[p])
		}
		in, err := PatternQuery("orders", pp, values)
		if err != nil {
			t.Fatalf("%s: %v", ap.Name, err)
		}
		// The request's parts, values in DynamoDB's JSON (with their types).
		got[ap.Name] = map[string]any{"IndexName": in.IndexName, "KeyConditionExpression": in.KeyConditionExpression,
			"ExpressionAttributeNames": in.ExpressionAttributeNames, "ScanIndexForward": in.ScanIndexForward,
			"ExpressionAttributeValues": json.RawMessage(ddbjson.Canonical(in.ExpressionAttributeValues))}
		// The rules, checked on the expression itself: the key attributes
		// in order, AND between them.
		names := map[string]string{}
		for k, v := range in.ExpressionAttributeNames {
			names[v] = k
		}
		want := slices.Concat([]string{"tenant_id", "region"}, []string{"placed_on", "total"}[:len(ap.Condition.Terms())-2])
		last := -1
		for _, a := range want {
			i := strings.Index(*in.KeyConditionExpression, names[a])
			if names[a] == "" || i < last {
				t.Errorf("%s: %s missing or out of order in %s", ap.Name, a, *in.KeyConditionExpression)
			}
			last = i
		}
		if n := strings.Count(*in.KeyConditionExpression, " AND "); n < len(want)-1 {
			t.Errorf("%s: %d ANDs in %s", ap.Name, n, *in.KeyConditionExpression)
		}
	}
	data, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "multi_queries.golden.json")
	if *update {
		if err := os.WriteFile(golden, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if d := gocmp.Diff(string(want), string(data)+"\n"); d != "" {
		t.Errorf("%s (-want +got):\n%s", golden, d)
	}
}

// A check on a multi-attribute index takes the items in the index (every
// key attribute present, of its declared type) that satisfy every term,
// and orders them by the sort key attributes in order, numbers by value.
func TestMultiAttributeMatch(t *testing.T) {
	m, plans := multiPlans(t)
	pp, err := transform.CompilePattern(m, m.AccessPatterns[2], plans) // DayAbove
	if err != nil {
		t.Fatal(err)
	}
	c, err := newMultiCheck(m, pp, []any{"acme", "2026-11-02", int64(9)})
	if err != nil {
		t.Fatal(err)
	}
	item := func(tenant, region, day, total string) map[string]types.AttributeValue {
		it := map[string]types.AttributeValue{"tenant_id": &types.AttributeValueMemberS{Value: tenant},
			"region": &types.AttributeValueMemberS{Value: region}, "placed_on": &types.AttributeValueMemberS{Value: day}}
		if total != "" {
			it["total"] = &types.AttributeValueMemberN{Value: total}
		}
		return it
	}
	var sorts []string
	for _, tc := range []struct {
		item map[string]types.AttributeValue
		want bool
	}{
		{item("acme", "EU", "2026-11-02", "10"), true},
		{item("acme", "EU", "2026-11-02", "9"), true},
		{item("acme", "EU", "2026-11-02", "1000"), true},
		{item("acme", "EU", "2026-11-02", "1000.01"), false},
		{item("acme", "EU", "2026-11-02", "8.5"), false},
		{item("acme", "EU", "2026-11-02", ""), false}, // not in the index
		{item("acme", "US", "2026-11-02", "10"), false},
		{item("acme", "EU", "2026-11-03", "10"), false},
	} {
		s, ok := c.matchTerms(tc.item)
		if ok != tc.want {
			t.Errorf("%v: match %v, want %v", tc.item, ok, tc.want)
		}
		if ok {
			sorts = append(sorts, s)
		}
	}
	// 9 < 10 < 1000 as numbers, not as text.
	if !slices.IsSorted([]string{sorts[1], sorts[0], sorts[2]}) {
		t.Errorf("sort values %q do not order 9, 10, 1000", sorts)
	}
	if a, b := sortTuple(item("x", "y", "2026-11-02", "5"), c.gsi.SortKeys), sortTuple(item("x", "y", "2026-11-02x", "1"), c.gsi.SortKeys); a >= b {
		t.Errorf("a shorter first sort attribute sorts first: %q >= %q", a, b)
	}
}

// verify's check of a pattern on a GSI with multi-attribute keys, against
// a fake index (DynamoDB Local and dynalite have none) scripted with each
// partition's answer: it passes when the answer is the entity's items of
// that partition in the order of the sort key attributes (note, then
// order_id as a number), and fails, naming the item, when the index
// returns them in another order (order_id's) or leaves one out.
func TestMultiAttributePatternCheck(t *testing.T) {
	text := strings.Replace(shopMapping, "table: {name: shop}",
		"table: {name: shop, gsis: [{name: ByCustomer, partition_keys: [{name: customer_id, type: N}], sort_keys: [{name: note, type: S}, {name: order_id, type: N}]}]}", 1)
	m, src := shopFrom(t, text+"  CustomerOrders: {index: ByCustomer, key_condition: \"customer_id = ${customer_id}\"}\n")
	src.rows[1][4][2] = "0" // order 5's note sorts first: by note, not by order_id
	items := src.tableItems(t)
	order := func(ids ...string) []item {
		var out []item
		for _, id := range ids {
			for _, it := range items {
				if n, ok := it["order_id"].(*types.AttributeValueMemberN); ok && n.Value == id {
					out = append(out, it)
				}
			}
		}
		return out
	}
	right := map[string][][]item{"10": {order("5", "1", "2")}, "11": {order("3")}, "12": {order("4")}}
	for _, tc := range []struct {
		name    string
		ten     []item
		problem string
	}{
		{"in order", order("5", "1", "2"), ""},
		{"in order_id's order", order("1", "2", "5"), "item 1 differs"},
		{"one missing", order("5", "2"), "item 2 differs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answers := maps.Clone(right)
			answers["10"] = [][]item{tc.ten}
			table := &fakeTable{keys: [2]string{"PK", "SK"}, gsis: map[string][2]string{"ByCustomer": {"customer_id", ""}},
				items: items, queryAnswers: answers}
			res, err := runCompare(t, m, src, table, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var checked int
			for _, p := range res.Patterns {
				if p.Pattern != "CustomerOrders" {
					continue
				}
				checked++
				ten := p.Params["customer_id"] == "10"
				switch {
				case ten && tc.problem != "" && !strings.Contains(p.Problem, tc.problem):
					t.Errorf("customer 10: OK %v, problem %q; want %q", p.OK, p.Problem, tc.problem)
				case (!ten || tc.problem == "") && !p.OK:
					t.Errorf("customer %s: %s", p.Params["customer_id"], p.Problem)
				}
			}
			if checked != 3 {
				t.Errorf("%d checks of CustomerOrders, want 3 (one a customer)", checked)
			}
		})
	}
}
