package verify

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// matchFilter evaluates a filter as DynamoDB does: numbers by value,
// strings by bytes, values of another type never compare, a missing
// attribute passes <> alone; size counts bytes and elements.
func TestMatchFilter(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	item := map[string]types.AttributeValue{"status": s("open"), "total": n("10.50"), "tags": &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
		"items": &types.AttributeValueMemberL{Value: []types.AttributeValue{s("x"), n("2")}}}
	vals := map[string]types.AttributeValue{"open": s("open"), "closed": s("closed"), "ten": n("10.5"), "nine": n("9"), "b": s("b"),
		"two": n("2"), "three": n("3"), "op": s("op"), "tenS": s("10.5")}
	for _, tc := range []struct {
		filter string
		want   bool
	}{
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
		if got := matchFilter(f, item, vals); got != tc.want {
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
