package verify

import (
	"strings"
	"testing"
)

// collectionMapping puts a customer and its orders in one item
// collection; CustomerCollection reads it whole.
const collectionMapping = `table: {name: shop}
entities:
  Customer:
    source: {table: customers}
    pk: CUSTOMER#${id:0}
    sk: PROFILE
  Order:
    source: {table: orders}
    pk: CUSTOMER#${customer_id:0}
    sk: ORDER#${order_id}
access_patterns:
  CustomerCollection: {key_condition: "PK = CUSTOMER#${id:0}"}
`

// A pattern on the partition key alone is checked as the whole item
// collection: each entity whose partition key template has the pattern's
// text is counted by PostgreSQL (rows whose column has the parameter's
// text), apart from the key renderer. When the derivation loses rows of
// the collection (a defect of the transform), the Query's answer equals
// the items derived for it, and only that count finds them missing.
func TestCompareChecksItemCollectionsWhole(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lost  [][]any
		want  map[string]string // problem by pattern and id
		items map[string]int    // Want by id
	}{
		{"one collection", nil, map[string]string{}, map[string]int{"10": 4, "11": 2, "12": 2}},
		{"orders lost", [][]any{{int32(6), int32(10), "f"}, {int32(7), int32(11), "g"}}, map[string]string{
			"CustomerCollection 10": "the item collection differs from the source's: entity Order has 3 items in it, but PostgreSQL has 4 rows of table orders whose customer_id has the text of the parameter id",
			"CustomerCollection 11": "entity Order has 1 items in it, but PostgreSQL has 2 rows of table orders",
		}, map[string]int{"10": 4, "11": 2, "12": 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, src := shopFrom(t, collectionMapping)
			src.lost = map[int][][]any{1: tc.lost}
			table := &fakeTable{keys: [2]string{"PK", "SK"}, items: src.tableItems(t)}
			res, err := runCompare(t, m, src, table, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Patterns) != 3 {
				t.Fatalf("%d pattern results, want one per customer: %+v", len(res.Patterns), res.Patterns)
			}
			problems := patternProblems(res)
			for k, want := range tc.want {
				if !strings.Contains(problems[k], want) {
					t.Errorf("%s: problem %q, want it to hold %q", k, problems[k], want)
				}
			}
			if len(problems) != len(tc.want) {
				t.Errorf("problems %v, want %d", problems, len(tc.want))
			}
			for _, p := range res.Patterns {
				if p.Want != tc.items[p.Params["id"]] || p.Got != p.Want {
					t.Errorf("customer %s: want %d got %d items, want %d", p.Params["id"], p.Want, p.Got, tc.items[p.Params["id"]])
				}
			}
		})
	}
}

// A pattern narrowed by begins_with of a literal reads the entities whose
// sort key template starts with it: the orders of the collection, counted
// by PostgreSQL, and not the profile.
func TestCompareChecksPrefixOfCollection(t *testing.T) {
	m, src := shopFrom(t, strings.Replace(collectionMapping, `CustomerCollection: {key_condition: "PK = CUSTOMER#${id:0}"}`,
		`CustomerOrders: {key_condition: "PK = CUSTOMER#${id:0} AND begins_with(SK, ORDER#)"}`, 1))
	src.lost = map[int][][]any{1: {{int32(6), int32(12), "f"}}}
	// The fake's Query takes the partition key alone: its table holds the
	// orders only, what begins_with(SK, ORDER#) reads.
	var orders []item
	for _, it := range src.tableItems(t) {
		if sValue(it, "type") == "Order" {
			orders = append(orders, it)
		}
	}
	res, err := runCompare(t, m, src, &fakeTable{keys: [2]string{"PK", "SK"}, items: orders}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	problems := patternProblems(res)
	want := "entity Order has 1 items in it, but PostgreSQL has 2 rows of table orders"
	if len(problems) != 1 || !strings.Contains(problems["CustomerOrders 12"], want) {
		t.Errorf("problems %v, want one for customer 12: %q", problems, want)
	}
}

// A member of the collection PostgreSQL cannot count (here the orders:
// their sort key template ORDER#${order_id} does not say whether a key
// begins with ORDER#0) is named in the result's Note with the reason;
// when it is the only member, the Note says the collection is not
// checked whole, the items being compared with the derived ones alone.
func TestCollectionNotesMembersNotCounted(t *testing.T) {
	for _, tc := range []struct {
		name, profileSK string
		note            []string
	}{
		{"every member", "PROFILE", []string{"the item collection is not checked whole: PostgreSQL can count none of its entities, entity Order " +
			`(its sort key template "ORDER#${order_id}" does not say whether its keys begin with "ORDER#0")`}},
		{"one of two", "ORDER#0-PROFILE", []string{`not counted by PostgreSQL in the item collection: entity Order (its sort key template "ORDER#${order_id}"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(collectionMapping, "sk: PROFILE", "sk: "+tc.profileSK, 1)
			m, src := shopFrom(t, strings.Replace(text, `CustomerCollection: {key_condition: "PK = CUSTOMER#${id:0}"}`,
				`CustomerOrders: {key_condition: "PK = CUSTOMER#${id:0} AND begins_with(SK, ORDER#0)"}`, 1))
			// The fake's Query takes the partition key alone: its table
			// holds what begins_with(SK, ORDER#0) reads.
			var read []item
			for _, it := range src.tableItems(t) {
				if strings.HasPrefix(sValue(it, "SK"), "ORDER#0") {
					read = append(read, it)
				}
			}
			res, err := runCompare(t, m, src, &fakeTable{keys: [2]string{"PK", "SK"}, items: read}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Patterns) != 3 {
				t.Fatalf("%d results, want one per customer: %+v", len(res.Patterns), res.Patterns)
			}
			for _, p := range res.Patterns {
				if !p.OK || p.Want == 0 || p.Got != p.Want {
					t.Errorf("customer %s: ok %v, want %d got %d: %s", p.Params["id"], p.OK, p.Want, p.Got, p.Problem)
				}
				for _, s := range tc.note {
					if !strings.Contains(p.Note, s) {
						t.Errorf("customer %s: note %q, want it to hold %q", p.Params["id"], p.Note, s)
					}
				}
			}
		})
	}
}

// sparseMapping indexes the orders with a note in GSI1 under the literal
// NOTED; AllNoted reads them all, with no parameter.
const sparseMapping = `table: {name: shop, gsis: [{name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK}]}
entities:
  Customer:
    source: {table: customers}
    pk: CUSTOMER#${id:0}
    sk: PROFILE
  Order:
    source: {table: orders}
    pk: CUSTOMER#${customer_id:0}
    sk: ORDER#${order_id}
    indexes:
      GSI1: {pk: NOTED, sk: "${note}#${order_id}", sparse: true}
access_patterns:
  AllNoted: {index: GSI1, key_condition: "GSI1PK = NOTED"}
`

// A pattern with a literal partition key is counted by PostgreSQL too:
// the rows whose GSI key columns are all non-NULL. A transform that drops
// an order's GSI keys (on both sides: the Query's answer equals the
// derived items) is found by that count alone; when PostgreSQL counts no
// row and the Query returns none, the pattern is not checked, not failed.
func TestCompareCountsLiteralPartitionKey(t *testing.T) {
	for _, tc := range []struct {
		name    string
		nulls   bool // every note NULL
		drop    bool // order 3 loses its GSI keys
		want    string
		wantNum int
	}{
		{"as derived", false, false, "", 4},
		{"keys dropped", false, true, "entity Order has 3 items in it, but PostgreSQL has 4 rows of table orders whose note, order_id are not NULL", 3},
		{"none indexed", true, false, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, src := shopFrom(t, sparseMapping)
			src.rows[1][1][2] = nil // order 2 has no note
			for _, r := range src.rows[1] {
				if tc.nulls {
					r[2] = nil
				}
			}
			if tc.drop {
				src.mangle = func(it item) {
					if sValue(it, "SK") == "ORDER#0000000003" {
						delete(it, "GSI1PK")
						delete(it, "GSI1SK")
					}
				}
			}
			table := &fakeTable{keys: [2]string{"PK", "SK"}, gsis: map[string][2]string{"GSI1": {"GSI1PK", "GSI1SK"}}, items: src.tableItems(t)}
			res, err := runCompare(t, m, src, table, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Patterns) != 1 {
				t.Fatalf("%d pattern results, want 1: %+v", len(res.Patterns), res.Patterns)
			}
			p := res.Patterns[0]
			if p.Got != tc.wantNum || p.OK != (tc.want == "") || !strings.Contains(p.Problem, tc.want) {
				t.Errorf("got %d items, ok %v, problem %q; want %d, %q", p.Got, p.OK, p.Problem, tc.wantNum, tc.want)
			}
			if tc.nulls && !strings.Contains(p.Note, "not checked: PostgreSQL counts no row") {
				t.Errorf("note %q, want it not checked", p.Note)
			}
		})
	}
}
