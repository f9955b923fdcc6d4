package verify

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

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
