package verify

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// matchFilter evaluates a filter as DynamoDB does: numbers by value,
// strings by bytes, values of another type never compare, a missing
// attribute passes <> alone; size counts a string's characters, a
// binary's bytes and a collection's elements. Where DynamoDB's documented
// rules do not decide (size() of a missing attribute or a number under
// <>, a string's size that differs in characters and UTF-16 code units),
// the item is undecided, unless the other conditions decide it.
func TestMatchFilter(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	item := map[string]types.AttributeValue{"status": s("open"), "total": n("10.50"), "tags": &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
		"items": &types.AttributeValueMemberL{Value: []types.AttributeValue{s("x"), n("2")}},
		"city":  s("Zürich"), "mood": s("ok 😀")} // 6 characters, 7 bytes; 4 characters, 5 UTF-16 code units
	vals := map[string]types.AttributeValue{"open": s("open"), "closed": s("closed"), "ten": n("10.5"), "nine": n("9"), "b": s("b"),
		"two": n("2"), "three": n("3"), "op": s("op"), "tenS": s("10.5"), "four": n("4"), "five": n("5"), "six": n("6"), "seven": n("7")}
	const undecided = "undecided"
	for _, tc := range []struct {
		filter string
		want   any // true, false or undecided
	}{
		{"size(city) = ${six}", true},
		{"size(city) = ${seven}", false},
		{"size(mood) = ${four}", undecided},
		{"size(mood) BETWEEN ${four} AND ${five}", true}, // either count
		{"size(mood) > ${five}", false},
		{"size(missing) = ${two}", false},
		{"size(missing) <> ${two}", undecided},
		{"size(total) <> ${two}", undecided}, // a number has no documented size
		{"size(total) < ${two}", false},
		{"size(missing) <> ${two} AND status = ${closed}", false},
		{"size(missing) <> ${two} OR status = ${open}", true},
		{"size(missing) <> ${two} OR status = ${closed}", undecided},
		{"status = ${open}", true},
		{"status <> ${open}", false},
		{"status <> ${closed}", true},
		{"missing <> ${open}", true},
		{"missing = ${open}", false},
		{"total = ${ten}", true}, // 10.50 = 10.5 by value
		{"total = ${tenS}", false},
		{"total <> ${tenS}", true}, // another type
		{"total > ${nine} AND total <= ${ten}", true},
		{"total < ${nine} OR status = ${closed}", false},
		{"total BETWEEN ${nine} AND ${ten}", true},
		{"status IN (${closed}, ${open})", true},
		{"begins_with(status, ${op})", true},
		{"contains(tags, ${b})", true},
		{"contains(status, ${b})", false},
		{"contains(items, ${two})", true},
		{"size(items) = ${two} AND size(status) BETWEEN ${two} AND ${ten}", true},
		{"size(tags) > ${three}", false},
		{"attribute_exists(tags) AND attribute_not_exists(missing)", true},
	} {
		f, err := mapping.ParseFilter(tc.filter)
		if err != nil {
			t.Fatal(err)
		}
		var got any
		switch pass, why := matchFilter(f, item, vals); {
		case why != "":
			got = undecided
		default:
			got = pass
		}
		if got != tc.want {
			t.Errorf("%s: %v, want %v", tc.filter, got, tc.want)
		}
	}
}

// The FilterExpression sent is the filter, each parameter its typed value,
// built by the expression builder.
func TestFilterCondition(t *testing.T) {
	f, err := mapping.ParseFilter("status <> ${status} AND size(items) BETWEEN ${lo} AND ${hi} AND begins_with(kind, ${k})")
	if err != nil {
		t.Fatal(err)
	}
	cb, err := filterCondition(f, map[string]types.AttributeValue{"status": &types.AttributeValueMemberS{Value: "x"},
		"lo": &types.AttributeValueMemberN{Value: "1"}, "hi": &types.AttributeValueMemberN{Value: "3"}, "k": &types.AttributeValueMemberS{Value: "K"}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := expression.NewBuilder().WithFilter(cb).Build()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := *e.Filter(), "(#0 <> :0) AND (size (#1) BETWEEN :1 AND :2) AND (begins_with (#2, :3))"; got != want {
		t.Errorf("filter %q, want %q", got, want)
	}
	if v, ok := e.Values()[":1"].(*types.AttributeValueMemberN); !ok || v.Value != "1" {
		t.Errorf(":1 is %#v, want the number 1", e.Values()[":1"])
	}
}

// A filter that leaves out every item its key condition reads
// (attribute_not_exists(note), every order having a note) is checked by
// the Query's ScannedCount: when the table holds the customers' orders,
// the Query reads them all (3, 1 and 1), returns none, and passes having
// compared that count; when it reads none (an index lacking the items,
// here the partitions answered empty), each check fails, though want and
// got are both 0.
func TestFilterThatLeavesOutEveryItemComparesScannedCount(t *testing.T) {
	m, src := shopFrom(t, shopMapping[:strings.Index(shopMapping, "  OrdersOfCustomer:")]+
		"  Unshipped: {key_condition: \"PK = CUSTOMER#${customer_id} AND begins_with(SK, ORDER#)\", filter: \"attribute_not_exists(note)\"}\n")
	orders := map[string]int32{"CUSTOMER#0000000010": 3, "CUSTOMER#0000000011": 1, "CUSTOMER#0000000012": 1}
	for _, read := range []bool{true, false} {
		table := &fakeTable{keys: [2]string{"PK", "SK"}, items: src.tableItems(t), queryAnswers: map[string][][]item{}}
		for pk := range orders {
			table.queryAnswers[pk] = [][]item{{}} // the filter leaves every order out
		}
		if read {
			table.filteredOut = orders
		}
		res, err := runCompare(t, m, src, table, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Patterns) != len(orders) {
			t.Fatalf("%d results, want one per customer with orders: %+v", len(res.Patterns), res.Patterns)
		}
		for _, p := range res.Patterns {
			n := int(orders["CUSTOMER#00000000"+p.Params["customer_id"]])
			switch {
			case read && (!p.OK || p.Scanned != n):
				t.Errorf("reading %d orders: %v ok %v, scanned %d: %s", n, p.Params, p.OK, p.Scanned, p.Problem)
			case !read && (p.OK || !strings.Contains(p.Problem, fmt.Sprintf("read 0 items (its ScannedCount), but the source derives %d", n))):
				t.Errorf("reading nothing: %v ok %v: %q; want a failure naming the %d orders the key condition must read", p.Params, p.OK, p.Problem, n)
			}
		}
	}
}
