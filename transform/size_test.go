package transform

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestItemSize follows DynamoDB's item size rules, computed by hand:
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html
func TestItemSize(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	cases := []struct {
		name string
		item map[string]types.AttributeValue
		want int
	}{
		{"string: name + UTF-8 bytes", map[string]types.AttributeValue{"a": s("héllo")}, 1 + 6},
		{"number: 1 byte + 1 per 2 significant digits", map[string]types.AttributeValue{"n": n("123.45")}, 1 + 1 + 3},
		{"leading and trailing zeros are not significant", map[string]types.AttributeValue{"n": n("0.0012000")}, 1 + 1 + 1},
		{"negative number", map[string]types.AttributeValue{"n": n("-7")}, 1 + 1 + 1},
		{"binary", map[string]types.AttributeValue{"bb": &types.AttributeValueMemberB{Value: []byte{1, 2, 3}}}, 2 + 3},
		{"boolean and null", map[string]types.AttributeValue{"t": &types.AttributeValueMemberBOOL{Value: true}, "z": &types.AttributeValueMemberNULL{Value: true}}, 2 + 2},
		{"list: 3 bytes + 1 per element", map[string]types.AttributeValue{"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{s("ab"), n("1")}}}, 1 + 3 + (1 + 2) + (1 + 2)},
		{"map: 3 bytes + 1 per element + its key", map[string]types.AttributeValue{"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"key": s("v")}}}, 1 + 3 + (1 + 3 + 1)},
		{"empty list", map[string]types.AttributeValue{"l": &types.AttributeValueMemberL{}}, 1 + 3},
	}
	for _, tc := range cases {
		if got := ItemSize(tc.item); got != tc.want {
			t.Errorf("%s: ItemSize = %d, want %d", tc.name, got, tc.want)
		}
	}
}
