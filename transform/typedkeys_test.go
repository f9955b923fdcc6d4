package transform_test

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// typedCols are the columns of the typed key tests' source, in the order
// the plans read them.
var typedCols = []extract.Column{
	{Name: "player", Type: "text"},
	{Name: "score", Type: "int4"},
	{Name: "amount", Type: "numeric"},
	{Name: "ratio", Type: "float8"},
	{Name: "digest", Type: "bytea"},
}

// typedHead declares an N sort key, an N GSI sort key and a B GSI
// partition key.
const typedHead = `
table:
  name: scores
  sort_key_type: N
  gsis:
    - {name: ByGame, partition_key: GPK, sort_key: GSK, sort_key_type: N}
    - {name: ByDigest, partition_key: DPK, partition_key_type: B}
entities:
`

func numeric(s string) pgtype.Numeric {
	var n pgtype.Numeric
	if err := n.Scan(s); err != nil {
		panic(err)
	}
	return n
}

// TestTypedKeyRendering checks the one key renderer on keys of type N and
// B: the value itself as an N (canonical text) or B (the bytes), beside
// string keys rendered as before, on the item and its mirror; and the
// rows whose key value DynamoDB cannot hold rejected with the reason.
func TestTypedKeyRendering(t *testing.T) {
	cases := []struct {
		name   string
		entity string
		row    []any // player, score, amount, ratio, digest
		want   map[string]string
		reject string
	}{
		{
			name: "an integer sort key, the same column padded in a string key as always",
			entity: `  E:
    source: {table: t}
    pk: PLAYER#${player}
    sk: ${score}
    indexes: {ByGame: {pk: "SCORE#${score}", sk: "${score}"}}
    attributes: {select: [player]}`,
			row:  []any{"ann", int32(-42), nil, nil, nil},
			want: map[string]string{"PK": `{"S":"PLAYER#ann"}`, "SK": `{"N":"-42"}`, "GPK": `{"S":"SCORE#-9999999957"}`, "GSK": `{"N":"-42"}`},
		},
		{
			name: "numeric: canonical, as DynamoDB holds it",
			entity: `  E:
    source: {table: t}
    pk: P#${player}
    sk: ${amount}
    attributes: {select: [player]}`,
			row:  []any{"ann", nil, numeric("0012.500"), nil, nil},
			want: map[string]string{"PK": `{"S":"P#ann"}`, "SK": `{"N":"12.5"}`},
		},
		{
			name: "a float",
			entity: `  E:
    source: {table: t}
    pk: P#${player}
    sk: ${ratio}
    attributes: {select: [player]}`,
			row:  []any{"ann", nil, nil, 0.25, nil},
			want: map[string]string{"PK": `{"S":"P#ann"}`, "SK": `{"N":"0.25"}`},
		},
		{
			name: "a literal number, canonical",
			entity: `  E:
    source: {table: t}
    pk: P#${player}
    sk: "007.50"
    attributes: {select: [player]}`,
			row:  []any{"ann", nil, nil, nil, nil},
			want: map[string]string{"PK": `{"S":"P#ann"}`, "SK": `{"N":"7.5"}`},
		},
		{
			name: "a bytea GSI partition key and its mirror's N sort key",
			entity: `  E:
    source: {table: t}
    pk: P#${player}
    sk: ${score}
    indexes: {ByDigest: {pk: "${digest}"}}
    mirror: {pk: "D#${player}", sk: "1"}
    attributes: {select: [player]}`,
			row:  []any{"ann", int32(3), nil, nil, []byte{0, 0xff, '#'}},
			want: map[string]string{"PK": `{"S":"P#ann"}`, "SK": `{"N":"3"}`, "DPK": `{"B":"AP8j"}`, "mirror PK": `{"S":"D#ann"}`, "mirror SK": `{"N":"1"}`},
		},
		{
			name: "NaN rejects the row",
			entity: `  E:
    source: {table: t}
    pk: P#${player}
    sk: ${amount}`,
			row:    []any{"ann", nil, pgtype.Numeric{NaN: true, Valid: true}, nil, nil},
			reject: "key attribute SK: NaN and Infinity are not DynamoDB numbers",
		},
		{
			name: "infinity rejects the row",
			entity: `  E:
    source: {table: t}
    pk: P#${player}
    sk: ${ratio}`,
			row:    []any{"ann", nil, nil, posInf(), nil},
			reject: "key attribute SK: NaN and Infinity are not DynamoDB numbers",
		},
		{
			name: "more than 38 digits reject the row",
			entity: `  E:
    source: {table: t}
    pk: P#${player}
    sk: ${amount}`,
			row:    []any{"ann", nil, pgtype.Numeric{Int: new(big.Int).Exp(big.NewInt(10), big.NewInt(39), nil).Add(new(big.Int).Exp(big.NewInt(10), big.NewInt(39), nil), big.NewInt(1)), Valid: true}, nil, nil},
			reject: "key attribute SK: ",
		},
		{
			name: "an empty bytea rejects the row",
			entity: `  E:
    source: {table: t}
    pk: P#${player}
    sk: "1"
    indexes: {ByDigest: {pk: "${digest}"}}`,
			row:    []any{"ann", nil, nil, nil, []byte{}},
			reject: "key attribute DPK renders empty",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := compileFirst(t, typedHead+tc.entity, typedCols)
			row := make([]any, 0, len(p.Query().Columns))
			for _, c := range p.Query().Columns {
				for i, tcCol := range typedCols {
					if tcCol.Name == c.Name {
						row = append(row, tc.row[i])
					}
				}
			}
			items, err := p.Items(row, nil)
			if tc.reject != "" {
				if err == nil || !strings.Contains(err.Error(), tc.reject) {
					t.Fatalf("Items error = %v, want one saying %q", err, tc.reject)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for i, it := range items {
				prefix := ""
				if i == 1 {
					prefix = "mirror "
				}
				for _, a := range []string{"PK", "SK", "GPK", "GSK", "DPK"} {
					if av, ok := it.Attrs[a]; ok {
						got[prefix+a] = testenv.CanonicalValue(av)
					}
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("keys (-want +got):\n%s", d)
			}
		})
	}
}

// TestTypedKeyColumns checks that an N key takes number columns only and
// a B key bytea only, naming the column and its type.
func TestTypedKeyColumns(t *testing.T) {
	cases := []struct{ name, entity, want string }{
		{"text in an N key", `  E: {source: {table: t}, pk: "P", sk: "${player}"}`,
			`m.yaml:9:40: entities.E.sk: ${player}: key attribute SK is of type N (number), but column "player" is text`},
		{"bytea in an N key", `  E: {source: {table: t}, pk: "P", sk: "${digest}"}`,
			`m.yaml:9:40: entities.E.sk: ${digest}: key attribute SK is of type N (number), but column "digest" is bytea`},
		{"an integer in a B key", `  E: {source: {table: t}, pk: "P", sk: "1", indexes: {ByDigest: {pk: "${score}"}}}`,
			`m.yaml:9:70: entities.E.indexes.ByDigest.pk: ${score}: key attribute DPK is of type B (binary), but column "score" is int4`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := compileErrors(t, typedHead+tc.entity, &transform.Sources{Columns: typedCols})
			if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
				t.Errorf("errors = %q\nwant one starting %q", got, tc.want)
			}
		})
	}
}

// TestKeyTextOfTypes checks ItemKey and KeyAttributeValue: an N key's
// text is canonical, so 1.0 and 1, one DynamoDB number, are one key; a
// B key's text is its bytes; each comes back as the attribute it was.
func TestKeyTextOfTypes(t *testing.T) {
	item := map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberB{Value: []byte{0, 1}},
		"SK": &types.AttributeValueMemberN{Value: "1.0"},
	}
	k := transform.ItemKey(item, [2]string{"PK", "SK"})
	if k != [2]string{"\x00\x01", "1"} {
		t.Errorf("ItemKey = %q", k)
	}
	for _, tc := range []struct {
		typ, text string
		want      types.AttributeValue
	}{
		{"N", "1", &types.AttributeValueMemberN{Value: "1"}},
		{"B", "\x00\x01", &types.AttributeValueMemberB{Value: []byte{0, 1}}},
		{"S", "x", &types.AttributeValueMemberS{Value: "x"}},
		{"", "x", &types.AttributeValueMemberS{Value: "x"}},
	} {
		got := transform.KeyAttributeValue(tc.typ, tc.text)
		if testenv.CanonicalValue(got) != testenv.CanonicalValue(tc.want) {
			t.Errorf("KeyAttributeValue(%s, %q) = %s", tc.typ, tc.text, testenv.CanonicalValue(got))
		}
	}
}

func posInf() float64 { return math.Inf(1) }

// TestSortText checks that the order-preserving text of numbers sorts as
// the numbers do, equal numbers of different text giving one text.
func TestSortText(t *testing.T) {
	ordered := []string{"-1e125", "-100", "-99.5", "-1.25", "-1.2", "-1", "-0.001", "0", "1e-130", "0.001", "0.5", "1", "1.2", "1.25", "9", "10", "99.5", "100", "12345678901234567890123456789012345678", "9.99e125"}
	var texts []string
	for _, n := range ordered {
		c, err := transform.CanonicalNumber(n)
		if err != nil {
			t.Fatalf("CanonicalNumber(%s): %v", n, err)
		}
		texts = append(texts, transform.SortText("N", c))
	}
	for i := 1; i < len(texts); i++ {
		if texts[i-1] >= texts[i] {
			t.Errorf("SortText(%s) = %q is not below SortText(%s) = %q", ordered[i-1], texts[i-1], ordered[i], texts[i])
		}
	}
	if a, b := transform.SortText("N", "1.0"), transform.SortText("N", "1"); a != b {
		t.Errorf("SortText(1.0) = %q, SortText(1) = %q: one number", a, b)
	}
	if got := transform.SortText("S", "B#2"); got != "B#2" {
		t.Errorf("SortText of a string = %q", got)
	}
}
