package ddbjson

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// everyType is an item with a value of every type, strings that need
// escaping, non-ASCII text, an empty string and sets out of order.
func everyType() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"PK":   &types.AttributeValueMemberS{Value: "A#\"quoted\"\\back\x01\x1f\ttab é 日本 <&> \u2028"},
		"n":    &types.AttributeValueMemberN{Value: "-12.5E3"},
		"b":    &types.AttributeValueMemberB{Value: []byte{0, 1, 255}},
		"t":    &types.AttributeValueMemberBOOL{Value: true},
		"null": &types.AttributeValueMemberNULL{Value: true},
		"ss":   &types.AttributeValueMemberSS{Value: []string{"x", "y\n", ""}},
		"ns":   &types.AttributeValueMemberNS{Value: []string{"2", "1"}},
		"bs":   &types.AttributeValueMemberBS{Value: [][]byte{{2, 3}, {1}}},
		"l":    &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "in"}, &types.AttributeValueMemberN{Value: "0"}}},
		"m":    &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k\"": &types.AttributeValueMemberS{Value: ""}}},
	}
}

// roundTripItems are everyType and the edge cases: nothing at all, empty
// values of every type that has them, names that need escaping, deep
// nesting, and escapes on every side of an 8-byte word.
func roundTripItems() map[string]map[string]types.AttributeValue {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	deep := s("bottom")
	for i := range 32 {
		if i%2 == 0 {
			deep = &types.AttributeValueMemberL{Value: []types.AttributeValue{deep}}
		} else {
			deep = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"d": deep}}
		}
	}
	many := map[string]types.AttributeValue{}
	for i := range 40 { // more than appendMap sorts on the stack
		many[strings.Repeat("x", 40-i)] = &types.AttributeValueMemberN{Value: "1"}
	}
	return map[string]map[string]types.AttributeValue{
		"every type": everyType(),
		"empty item": {},
		"empty values": {
			"s": s(""), "b": &types.AttributeValueMemberB{Value: []byte{}}, "f": &types.AttributeValueMemberBOOL{Value: false},
			"ss": &types.AttributeValueMemberSS{Value: []string{}}, "ns": &types.AttributeValueMemberNS{},
			"bs": &types.AttributeValueMemberBS{Value: [][]byte{{}}}, "l": &types.AttributeValueMemberL{}, "m": &types.AttributeValueMemberM{},
		},
		"names": {"": s("empty name"), "a\"b": s("quote"), "é日本": s("non-ASCII"), "\x00\n": s("control"), "<&>": s("html"), "a.b[0]": s("path-like")},
		"escapes at word edges": {
			"a": s("1234567\"12345678\\1234567\x00"), "b": s("12345678\n"), "c": s(strings.Repeat("\u00e9\u2029<", 9)),
			"d": &types.AttributeValueMemberSS{Value: []string{"\"", "\\", "\x7f", "😀"}},
		},
		"deep":    {"deep": deep},
		"many":    many,
		"numbers": {"n": &types.AttributeValueMemberNS{Value: []string{"10", "-1", "3", "1e400", "0.000001"}}},
	}
}

// equateValues compares attribute values by their exported fields, a nil
// slice equal to an empty one (JSON writes both as []). It is used to
// show a difference once same has found one: go-cmp diffs the elements of
// lists to explain them, which costs time exponential in the depth of
// nested lists (the 32-level item took 1.4 s, and a minute under -race).
var equateValues = cmp.Options{cmpopts.EquateEmpty(), cmpopts.IgnoreUnexported(
	types.AttributeValueMemberS{}, types.AttributeValueMemberN{}, types.AttributeValueMemberB{},
	types.AttributeValueMemberBOOL{}, types.AttributeValueMemberNULL{}, types.AttributeValueMemberSS{},
	types.AttributeValueMemberNS{}, types.AttributeValueMemberBS{}, types.AttributeValueMemberL{},
	types.AttributeValueMemberM{})}

// same reports whether x and y are equal as equateValues compares them,
// in time linear in their size.
func same(x, y any) bool { return reflect.DeepEqual(emptied(x), emptied(y)) }

// emptied returns a copy of v, an item or an attribute value, whose nil
// slices are empty ones.
func emptied(v any) any {
	switch v := v.(type) {
	case map[string]types.AttributeValue:
		out := make(map[string]types.AttributeValue, len(v))
		for k, e := range v {
			out[k] = emptied(e).(types.AttributeValue)
		}
		return out
	case *types.AttributeValueMemberM:
		return &types.AttributeValueMemberM{Value: emptied(v.Value).(map[string]types.AttributeValue)}
	case *types.AttributeValueMemberL:
		out := make([]types.AttributeValue, len(v.Value))
		for i, e := range v.Value {
			out[i] = emptied(e).(types.AttributeValue)
		}
		return &types.AttributeValueMemberL{Value: out}
	case *types.AttributeValueMemberB:
		return &types.AttributeValueMemberB{Value: append([]byte{}, v.Value...)}
	case *types.AttributeValueMemberSS:
		return &types.AttributeValueMemberSS{Value: append([]string{}, v.Value...)}
	case *types.AttributeValueMemberNS:
		return &types.AttributeValueMemberNS{Value: append([]string{}, v.Value...)}
	case *types.AttributeValueMemberBS:
		out := make([][]byte, len(v.Value))
		for i, e := range v.Value {
			out[i] = append([]byte{}, e...)
		}
		return &types.AttributeValueMemberBS{Value: out}
	}
	return v
}

// Encoding and decoding are inverses: a line, a plain item and each value
// decode to what was encoded; the canonical form decodes to the item up
// to set order, and encodes again to the same bytes, whichever form it
// was read from.
func TestRoundTrip(t *testing.T) {
	for name, item := range roundTripItems() {
		t.Run(name, func(t *testing.T) {
			line, err := AppendLine(nil, item)
			if err != nil {
				t.Fatal(err)
			}
			fromLine, err := DecodeLine(line)
			if err != nil {
				t.Fatalf("DecodeLine: %v\n%s", err, line)
			}
			if !same(item, fromLine) {
				t.Errorf("line read back (-want +got):\n%s", cmp.Diff(item, fromLine, equateValues))
			}
			obj, err := AppendItem(nil, item)
			if err != nil {
				t.Fatal(err)
			}
			fromObj, err := DecodeItem(obj)
			if err != nil {
				t.Fatalf("DecodeItem: %v\n%s", err, obj)
			}
			if !same(item, fromObj) {
				t.Errorf("item read back (-want +got):\n%s", cmp.Diff(item, fromObj, equateValues))
			}
			canon := Canonical(item)
			fromCanon, err := DecodeItem(canon)
			if err != nil {
				t.Fatalf("DecodeItem(Canonical): %v\n%s", err, canon)
			}
			for what, again := range map[string][]byte{"canonical": Canonical(fromCanon), "line": Canonical(fromLine)} {
				if string(again) != string(canon) {
					t.Errorf("canonical form of the %s read back:\n%s\nwant\n%s", what, again, canon)
				}
			}
			for attr, v := range item {
				enc, err := AppendValue(nil, v)
				if err != nil {
					t.Fatal(err)
				}
				back, err := DecodeValue(enc)
				if err != nil {
					t.Fatalf("%s: DecodeValue: %v\n%s", attr, err, enc)
				}
				if !same(v, back) {
					t.Errorf("%s: value read back (-want +got):\n%s", attr, cmp.Diff(v, back, equateValues))
				}
				cv := CanonicalValue(v)
				if !strings.Contains(string(canon), string(cv)) {
					t.Errorf("%s: CanonicalValue %s is not in Canonical %s", attr, cv, canon)
				}
				if back, err = DecodeValue(cv); err != nil || string(CanonicalValue(back)) != string(cv) {
					t.Errorf("%s: canonical value %s read back as %s (%v)", attr, cv, CanonicalValue(back), err)
				}
			}
		})
	}
}

// Sets have no order: two items whose sets hold the same members in
// another order are canonically equal, at the top level and nested; a
// different member, or a list in another order, is not.
func TestCanonicalSets(t *testing.T) {
	item := func(ss, ns []string, bs [][]byte, l []string) map[string]types.AttributeValue {
		list := make([]types.AttributeValue, len(l))
		for i, s := range l {
			list[i] = &types.AttributeValueMemberS{Value: s}
		}
		return map[string]types.AttributeValue{
			"tags":   &types.AttributeValueMemberSS{Value: ss},
			"scores": &types.AttributeValueMemberNS{Value: ns},
			"blobs":  &types.AttributeValueMemberBS{Value: bs},
			"nested": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
				"inner": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberSS{Value: ss}}}}},
			"list": &types.AttributeValueMemberL{Value: list},
		}
	}
	a := item([]string{"b", "a", ""}, []string{"10", "-1", "3"}, [][]byte{{2}, {1, 0}}, []string{"x", "y"})
	same := item([]string{"", "a", "b"}, []string{"-1", "10", "3"}, [][]byte{{1, 0}, {2}}, []string{"x", "y"})
	if got, want := string(Canonical(same)), string(Canonical(a)); got != want {
		t.Errorf("same sets in another order:\n%s\nwant\n%s", got, want)
	}
	for name, other := range map[string]map[string]types.AttributeValue{
		"another member":   item([]string{"b", "a", "c"}, []string{"10", "-1", "3"}, [][]byte{{2}, {1, 0}}, []string{"x", "y"}),
		"another number":   item([]string{"b", "a", ""}, []string{"10", "-1", "4"}, [][]byte{{2}, {1, 0}}, []string{"x", "y"}),
		"another binary":   item([]string{"b", "a", ""}, []string{"10", "-1", "3"}, [][]byte{{2}, {1}}, []string{"x", "y"}),
		"a list reordered": item([]string{"b", "a", ""}, []string{"10", "-1", "3"}, [][]byte{{2}, {1, 0}}, []string{"y", "x"}),
		"a member too few": item([]string{"b", "a"}, []string{"10", "-1", "3"}, [][]byte{{2}, {1, 0}}, []string{"x", "y"}),
	} {
		if string(Canonical(other)) == string(Canonical(a)) {
			t.Errorf("%s: canonically equal, want different", name)
		}
	}
	// Canonical leaves the item's own sets as they were.
	if ss := a["tags"].(*types.AttributeValueMemberSS).Value; ss[0] != "b" {
		t.Errorf("Canonical sorted the item's set in place: %q", ss)
	}
}

// The canonical form is a format (verify hashes it into journals): these
// bytes are pinned, as verify wrote them before this package existed.
func TestCanonicalBytes(t *testing.T) {
	got := string(Canonical(everyType()))
	want := `{"PK":{"S":"A#\"quoted\"\\back\u0001\u001f\ttab é 日本 \u003c\u0026\u003e \u2028"},"b":{"B":"AAH/"},` +
		`"bs":{"BS":["AQ==","AgM="]},"l":{"L":[{"S":"in"},{"N":"0"}]},"m":{"M":{"k\"":{"S":""}}},"n":{"N":"-12.5E3"},` +
		`"ns":{"NS":["1","2"]},"null":{"NULL":true},"ss":{"SS":["","x","y\n"]},"t":{"BOOL":true}}`
	if got != want {
		t.Errorf("Canonical\n%s\nwant\n%s", got, want)
	}
	line, _ := AppendLine(nil, everyType())
	want = `{"Item":{"PK":{"S":"A#\"quoted\"\\back\u0001\u001f\u0009tab é 日本 <&> ` + "\u2028" + `"},"b":{"B":"AAH/"},` +
		`"bs":{"BS":["AgM=","AQ=="]},"l":{"L":[{"S":"in"},{"N":"0"}]},"m":{"M":{"k\"":{"S":""}}},"n":{"N":"-12.5E3"},` +
		`"ns":{"NS":["2","1"]},"null":{"NULL":true},"ss":{"SS":["x","y\u000a",""]},"t":{"BOOL":true}}}` + "\n"
	if string(line) != want {
		t.Errorf("AppendLine\n%s\nwant\n%s", line, want)
	}
}

// Input that is not DynamoDB JSON fails with a *DecodeError naming where;
// null is an absent value only where a whole value is read.
func TestDecodeErrors(t *testing.T) {
	if v, err := DecodeValue([]byte(" null ")); v != nil || err != nil {
		t.Errorf("DecodeValue(null) = %v, %v; want nil, nil", v, err)
	}
	for _, tc := range []struct {
		in, path string
		is       error
	}{
		{`[`, "", nil},
		{`{"a":{"S":1}}`, "a", nil},
		{`{"a":{"X":"1"}}`, "a", ErrNotTyped},
		{`{"a":{"S":"a","N":"1"}}`, "a", ErrNotTyped},
		{`{"a":{}}`, "a", ErrNotTyped},
		{`{"a":"x"}`, "a", nil},
		{`{"a":null}`, "a", ErrNull},
		{`{"a":{"B":"!"}}`, "a", nil},
		{`{"a":{"BOOL":"true"}}`, "a", nil},
		{`{"a":{"L":[{"S":"x"},null]}}`, "a[1]", ErrNull},
		{`{"a":{"M":{"b":{"L":[{"M":{"c":{"s":"x"}}}]}}}}`, "a.b[0].c", ErrNotTyped},
		{`{"a":{"BS":["AA==","*"]}}`, "a[1]", nil},
		{`{"a":{"SS":[1]}}`, "a[0]", ErrNotTyped},
	} {
		_, err := DecodeItem([]byte(tc.in))
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Errorf("%s: error %v, want a *DecodeError", tc.in, err)
			continue
		}
		if de.Path != tc.path || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("%s: error %q at %q, want at %q (is %v)", tc.in, err, de.Path, tc.path, tc.is)
		}
	}
	for _, in := range []string{`{"a":{"S":"x"}}`, `{"Item":{},"x":1}`, `{"item":{}}`, `[]`} {
		if _, err := DecodeLine([]byte(in)); err == nil {
			t.Errorf("DecodeLine(%s): no error", in)
		}
	}
}

// FuzzDecodeItem: whatever DecodeItem reads, its canonical form reads
// back to the same canonical form, and so does its line.
func FuzzDecodeItem(f *testing.F) {
	for _, item := range roundTripItems() {
		b, _ := AppendItem(nil, item)
		f.Add(b)
		f.Add(Canonical(item))
	}
	f.Add([]byte(`{"a":{"B":"AA==\n"},"b":{"M":null},"c":{"NULL":false},"d":{"S":"\ud800"}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		item, err := DecodeItem(in)
		if err != nil {
			return
		}
		canon := Canonical(item)
		back, err := DecodeItem(canon)
		if err != nil {
			t.Fatalf("Canonical %s does not decode: %v", canon, err)
		}
		if again := Canonical(back); string(again) != string(canon) {
			t.Fatalf("canonical form not stable:\n%s\n%s", canon, again)
		}
		line, err := AppendLine(nil, item)
		if err != nil {
			t.Fatal(err)
		}
		fromLine, err := DecodeLine(line)
		if err != nil {
			t.Fatalf("line %s does not decode: %v", line, err)
		}
		if again := Canonical(fromLine); string(again) != string(canon) {
			t.Fatalf("line %s decodes to\n%s\nwant\n%s", line, again, canon)
		}
	})
}
