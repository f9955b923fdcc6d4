package mapping

import (
	"strings"
	"testing"
)

// TestKeyTypes checks the declared types of the table's and the overloaded
// GSIs' key attributes and the templates of the keys declared N or B: each
// case's mapping loads, or fails with exactly the one error given.
func TestKeyTypes(t *testing.T) {
	const head = "name: t\ntable:\n  name: scores\n"
	cases := []struct {
		name, doc string
		// want is the one error expected ("" for none), as "path: message prefix".
		want  string
		types map[string]string // key attribute → Table.KeyType, when it loads
	}{
		{
			name: "N sort key of one placeholder, N GSI sort key, the default S elsewhere",
			doc: head + `  sort_key_type: N
  gsis: [{name: ByGame, partition_key: GPK, sort_key: GSK, sort_key_type: N}]
entities:
  Score:
    source: {table: scores}
    pk: PLAYER#${player_id}
    sk: ${score}
    indexes: {ByGame: {pk: "GAME#${game}", sk: "${score}"}}
access_patterns:
  TopScores: {index: ByGame, key_condition: "GPK = GAME#${game} AND GSK BETWEEN ${low} AND ${high}"}
`,
			types: map[string]string{"PK": "S", "SK": "N", "GPK": "S", "GSK": "N"},
		},
		{
			name: "a literal number is an N key's template too",
			doc: head + `  sort_key_type: N
entities:
  Total:
    source: {table: totals}
    pk: TOTAL#${id}
    sk: "-1.50"
`,
			types: map[string]string{"SK": "N"},
		},
		{
			name: "B partition key",
			doc: head + `  partition_key_type: B
entities:
  Blob:
    source: {table: blobs}
    pk: ${digest}
    sk: BLOB
`,
			types: map[string]string{"PK": "B", "SK": "S"},
		},
		{
			name: "text beside a placeholder in an N key",
			doc: head + `  sort_key_type: N
entities:
  Score:
    source: {table: scores}
    pk: PLAYER#${player_id}
    sk: SCORE#${score}
`,
			want: `entities.Score.sk: template "SCORE#${score}": key attribute SK is of type N (number), so its template is one placeholder of a number column`,
		},
		{
			name: "two placeholders in a B key",
			doc: head + `  partition_key_type: B
entities:
  Blob:
    source: {table: blobs}
    pk: ${a}${b}
    sk: BLOB
`,
			want: `entities.Blob.pk: template "${a}${b}": key attribute PK is of type B (binary)`,
		},
		{
			name: "a width on an N key",
			doc: head + `  sort_key_type: N
entities:
  Score:
    source: {table: scores}
    pk: P
    sk: ${score:8}
`,
			want: `entities.Score.sk: template "${score:8}": key attribute SK is of type N, which holds the value itself`,
		},
		{
			name: "a literal that is no number in an N key",
			doc: head + `  sort_key_type: N
entities:
  Score:
    source: {table: scores}
    pk: P#${id}
    sk: LATEST
`,
			want: `entities.Score.sk: template "LATEST": key attribute SK is of type N (number)`,
		},
		{
			name: "a literal number of 39 digits",
			doc: head + `  sort_key_type: N
entities:
  Score:
    source: {table: scores}
    pk: P#${id}
    sk: "123456789012345678901234567890123456789"
`,
			want: `entities.Score.sk: template "123456789012345678901234567890123456789": key attribute SK is of type N (number)`,
		},
		{
			name: "an unknown type",
			doc: head + `  sort_key_type: NUMBER
entities:
  E: {source: {table: e}, pk: "P#${id}", sk: "S"}
`,
			want: `table.sort_key_type: unknown type "NUMBER": expected S (string, the default), N (number) or B (binary)`,
		},
		{
			name: "an inverted index typing the table's key attribute otherwise",
			doc: head + `  sort_key_type: N
  gsis: [{name: Inverted, partition_key: SK, partition_key_type: S, sort_key: PK}]
entities:
  E: {source: {table: e}, pk: "P#${id}", sk: "${n}"}
`,
			want: `table.gsis[0].partition_key_type: "SK" is the table's key attribute, of type N`,
		},
		{
			name: "two GSIs giving one attribute two types",
			doc: head + `  gsis:
    - {name: One, partition_key: GPK, sort_key: GSK, sort_key_type: N}
    - {name: Two, partition_key: GPK2, sort_key: GSK, sort_key_type: S}
entities:
  E: {source: {table: e}, pk: "P#${id}", sk: "S"}
`,
			want: `table.gsis[1].sort_key_type: key attribute "GSK" is declared N at table.gsis[0].sort_key_type`,
		},
		{
			name: "begins_with on an N sort key",
			doc: head + `  sort_key_type: N
entities:
  E: {source: {table: e}, pk: "P#${id}", sk: "${n}"}
access_patterns:
  Bad: {key_condition: "PK = P#${id} AND begins_with(SK, ${n})"}
`,
			want: `access_patterns.Bad.key_condition: begins_with(SK, …): SK is a number (N)`,
		},
		{
			name: "text in an access pattern's N bound",
			doc: head + `  sort_key_type: N
entities:
  E: {source: {table: e}, pk: "P#${id}", sk: "${n}"}
access_patterns:
  Bad: {key_condition: "PK = P#${id} AND SK > N#${n}"}
`,
			want: `access_patterns.Bad.key_condition: template "N#${n}": key attribute SK is of type N (number)`,
		},
		{
			name: "a library with an N key",
			doc: head + `  sort_key_type: N
library: onetable
entities:
  E: {source: {table: e}, pk: "P#${id}", sk: "${n}"}
`,
			want: `table: key attribute "SK" is of type N: library onetable renders every key as a string`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse("m.yaml", []byte(tc.doc))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				for attr, typ := range tc.types {
					if got := m.Table.KeyType(attr); got != typ {
						t.Errorf("KeyType(%s) = %s, want %s", attr, got, typ)
					}
				}
				return
			}
			errs, ok := err.(Errors)
			if !ok || len(errs) != 1 {
				t.Fatalf("Parse errors = %v, want one: %s", err, tc.want)
			}
			got := errs[0].Path + ": " + errs[0].Msg
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("error = %s\nwant prefix %s", got, tc.want)
			}
		})
	}
}

// TestKeyAttributeTypesDeclared checks that CreateTable's attribute
// definitions carry the declared types.
func TestKeyAttributeTypesDeclared(t *testing.T) {
	m, err := Parse("m.yaml", []byte(`table:
  name: scores
  sort_key_type: N
  gsis:
    - {name: ByScore, partition_key: GPK, sort_key: GSK, sort_key_type: N}
    - {name: Inverted, partition_key: SK, sort_key: PK}
entities:
  E: {source: {table: e}, pk: "P#${id}", sk: "${n}", indexes: {ByScore: {pk: G, sk: "${n}"}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := m.Table.KeyAttributeTypes()
	want := []KeyAttribute{{"PK", "S"}, {"SK", "N"}, {"GPK", "S"}, {"GSK", "N"}}
	if len(got) != len(want) {
		t.Fatalf("KeyAttributeTypes = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("KeyAttributeTypes = %v, want %v", got, want)
		}
	}
}
