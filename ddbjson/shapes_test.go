package ddbjson

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A LineEncoder writes the bytes AppendLine writes, whatever the order
// in which shapes come: the same one again, one of the same size with a
// name swapped, more shapes than it remembers, many attributes, names
// that need escaping.
func TestLineEncoderIsAppendLine(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	wide := map[string]types.AttributeValue{}
	for i := range 40 {
		wide[fmt.Sprintf("a%02d", 39-i)] = s(fmt.Sprint(i))
	}
	items := []map[string]types.AttributeValue{
		benchTicket(), benchTicket(),
		{"PK": s("1"), "SK": s("x"), "a": s("A")},
		{"PK": s("2"), "SK": s("y"), "b": s("B")}, // same size, another set
		{"PK": s("3"), "SK": s("z"), "a": s("A2")},
		{}, wide, everyType(), benchTicket(),
		{"PK": s("4"), "quote\"d": s("q"), "ctl\x01": s("c"), "é": s("e")},
	}
	for i := range 12 { // more shapes than maxShapes, then the first ones again
		items = append(items, map[string]types.AttributeValue{"PK": s("p"), fmt.Sprintf("x%d", i): s("v")})
	}
	items = append(items, benchTicket(), everyType(), map[string]types.AttributeValue{"PK": s("p"), "x0": s("w")})
	var e LineEncoder
	var got []byte
	for i, item := range items {
		want, err := AppendLine(nil, item)
		if err != nil {
			t.Fatal(err)
		}
		start := len(got)
		if got, err = e.AppendLine(got, item); err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
		if string(got[start:]) != string(want) {
			t.Errorf("item %d:\n got %s\nwant %s", i, got[start:], want)
		}
	}
	if len(e.top.shapes) != maxShapes {
		t.Errorf("%d shapes remembered, want %d", len(e.top.shapes), maxShapes)
	}
}

// An unknown value fails as it does with AppendLine, known shape or not.
func TestLineEncoderUnknownValueType(t *testing.T) {
	var e LineEncoder
	item := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "1"}, "x": nil}
	for range 2 {
		if _, err := e.AppendLine(nil, item); err == nil {
			t.Fatal("no error for a nil attribute value")
		}
	}
}

// Nested maps are written as AppendLine writes them whether their keys
// recur, change between items of one shape (a jsonb column's objects, in
// M and in L), or change so often that the encoder stops remembering
// their shapes; and their place does stop.
func TestLineEncoderNestedShapes(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	m := func(kv ...string) types.AttributeValue {
		v := map[string]types.AttributeValue{}
		for i := 0; i < len(kv); i += 2 {
			v[kv[i]] = s(kv[i+1])
		}
		return &types.AttributeValueMemberM{Value: v}
	}
	var e LineEncoder
	var got []byte
	for i := range 300 {
		varying := fmt.Sprintf("k%d", i) // a new key every item
		item := map[string]types.AttributeValue{
			"PK":  s(fmt.Sprint(i)),
			"doc": m("a", "1", []string{"b", "c"}[i%2], "2\"q"),
			"new": m(varying, "v", "z", "w"),
			"list": &types.AttributeValueMemberL{Value: []types.AttributeValue{
				m("x", "1"), m("y", "2"), &types.AttributeValueMemberL{Value: []types.AttributeValue{m("x", "3")}}, s("plain"),
			}},
		}
		want, err := AppendLine(nil, item)
		if err != nil {
			t.Fatal(err)
		}
		start := len(got)
		if got, err = e.AppendLine(got, item); err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
		if string(got[start:]) != string(want) {
			t.Fatalf("item %d:\n got %s\nwant %s", i, got[start:], want)
		}
	}
	top := e.top.shapes[0]
	for i, name := range top.names {
		if off := top.subs[i].off(); off != (name == "new") {
			t.Errorf("%s: place off %v, want %v", name, off, name == "new")
		}
	}
}
