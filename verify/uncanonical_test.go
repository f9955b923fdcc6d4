package verify

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ParseCanonical is Canonical's inverse: every type, nested, comes back
// with the same canonical form; null is an absent value; bad input fails.
func TestParseCanonicalRoundTrip(t *testing.T) {
	item := map[string]types.AttributeValue{
		"s":    &types.AttributeValueMemberS{Value: "Ada \"<&>\" ü"},
		"n":    &types.AttributeValueMemberN{Value: "-12.5"},
		"b":    &types.AttributeValueMemberB{Value: []byte{0, 1, 255}},
		"t":    &types.AttributeValueMemberBOOL{Value: true},
		"null": &types.AttributeValueMemberNULL{Value: true},
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "x"},
			&types.AttributeValueMemberL{}, &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}}},
		"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"ss": &types.AttributeValueMemberSS{Value: []string{"b", "a"}},
			"ns": &types.AttributeValueMemberNS{Value: []string{"2", "1"}},
			"bs": &types.AttributeValueMemberBS{Value: [][]byte{{2}, {1}}}}},
	}
	want := Canonical(item)
	back, err := ParseCanonical(want)
	if err != nil {
		t.Fatal(err)
	}
	if got := Canonical(back); string(got) != string(want) {
		t.Errorf("round trip:\n%s\nwant\n%s", got, want)
	}
	if v, err := ParseCanonicalValue([]byte("null")); v != nil || err != nil {
		t.Errorf("null: %v, %v; want nil, nil", v, err)
	}
	for _, bad := range []string{`{"S":1}`, `{"X":"1"}`, `{"S":"a","N":"1"}`, `{"B":"!"}`, `{"L":[null]}`, `[`} {
		if _, err := ParseCanonicalValue([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
