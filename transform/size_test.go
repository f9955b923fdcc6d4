package transform

import (
	"maps"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/mapping"
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

// WriteUnits counts one write per GSI the item lands in, each of the
// projected item's size rounded up per 1 KB: a template-keyed GSI when the
// item has its key attributes, a multi-attribute GSI when it has every one
// of its key attributes (else the index is sparse for it).
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations.Writes
func TestWriteUnitsPerIndex(t *testing.T) {
	m := &mapping.Mapping{Table: mapping.Table{PartitionKey: "PK", SortKey: "SK", GSIs: []mapping.GSI{
		{Name: "G1", PartitionKey: "G1PK", SortKey: "G1SK", Projection: mapping.ProjectKeysOnly},
		{Name: "ByRegion", PartitionKeys: []mapping.KeyAttribute{{Name: "region", Type: "S"}, {Name: "tier", Type: "N"}},
			SortKeys: []mapping.KeyAttribute{{Name: "since", Type: "S"}}, Projection: mapping.ProjectKeysOnly},
	}}}
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	big := s(strings.Repeat("x", 1500)) // the base item takes 2 units
	base := map[string]types.AttributeValue{"PK": s("A#1"), "SK": s("A"), "body": big}
	with := func(extra map[string]types.AttributeValue) map[string]types.AttributeValue {
		out := maps.Clone(base)
		maps.Copy(out, extra)
		return out
	}
	cases := []struct {
		name string
		item map[string]types.AttributeValue
		want int64
	}{
		{"in no index", base, 2},
		{"in G1 (keys only: 1 unit)", with(map[string]types.AttributeValue{"G1PK": s("x"), "G1SK": s("y")}), 3},
		{"G1 without its sort key", with(map[string]types.AttributeValue{"G1PK": s("x")}), 2},
		{"in ByRegion", with(map[string]types.AttributeValue{"region": s("eu"), "tier": &types.AttributeValueMemberN{Value: "2"}, "since": s("2020")}), 3},
		{"ByRegion without one key attribute", with(map[string]types.AttributeValue{"region": s("eu"), "since": s("2020")}), 2},
	}
	for _, tc := range cases {
		if got := WriteUnits(m, tc.item); got != tc.want {
			t.Errorf("%s: WriteUnits = %d, want %d", tc.name, got, tc.want)
		}
	}
}
