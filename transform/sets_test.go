package transform_test

import (
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// setCols are the columns of the set tests' source, as extract describes
// them: an array of each kind, and columns that cannot be sets.
var setCols = []extract.Column{
	{Name: "id", Type: "int4", PrimaryKey: true, KeyPos: 1},
	{Name: "tags", Type: "text", Array: true, Dims: 1},
	{Name: "labels", Type: "varchar", Array: true},
	{Name: "moods", Type: "mood", Array: true, AsText: true},
	{Name: "uids", Type: "uuid", Array: true},
	{Name: "days", Type: "date", Array: true},
	{Name: "times", Type: "timestamptz", Array: true},
	{Name: "ints", Type: "int4", Array: true},
	{Name: "bigs", Type: "int8", Array: true},
	{Name: "nums", Type: "numeric", Array: true},
	{Name: "floats", Type: "float8", Array: true},
	{Name: "blobs", Type: "bytea", Array: true},
	{Name: "flags", Type: "bool", Array: true},
	{Name: "docs", Type: "jsonb", Array: true, AsText: true},
	{Name: "grid", Type: "int4", Array: true, Dims: 2},
	{Name: "name", Type: "text"},
}

const setsHead = "table: {name: sets}\nentities:\n"

// setRow returns a row of p's query: vals by column name, NULL for the
// others, then the joins' values.
func setRow(p *transform.Plan, vals map[string]any, joins ...any) []any {
	cols := p.Query().Columns
	row := make([]any, len(cols), len(cols)+len(joins))
	for i, c := range cols {
		row[i] = vals[c.Name]
	}
	return append(append(row, joins...), positions(p)...)
}

func num(s string) pgtype.Numeric {
	var n pgtype.Numeric
	if err := n.Scan(s); err != nil {
		panic(err)
	}
	return n
}

// TestSetAttributes converts array columns listed in attributes.sets:
// SS, NS and BS by element type, members distinct and sorted, numbers in
// their canonical text; an empty array (or a NULL column) leaves the
// attribute out.
func TestSetAttributes(t *testing.T) {
	p := compileFirst(t, setsHead+`  E:
    source: {table: t}
    pk: E#${id}
    sk: E
    attributes:
      exclude: [flags, docs, grid, name]
      rename: {ints: int_set}
      sets: [tags, labels, moods, uids, days, times, ints, bigs, nums, floats, blobs]
`, setCols)
	u1 := [16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}
	u2 := [16]byte{0x01}
	cases := []struct {
		name string
		vals map[string]any
		want map[string]string // attribute → DynamoDB JSON; absent ones are not listed
	}{
		{
			name: "text-like arrays are string sets",
			vals: map[string]any{
				"tags":   []any{"b", "a", "b", "", "ä"},
				"labels": []any{"x"},
				"moods":  []any{"happy", "sad", "happy"},
				"uids":   []any{u1, u2, u1},
				"days":   []any{time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)},
				"times": []any{time.Date(2024, 1, 2, 3, 4, 5, 1000, time.FixedZone("", 7200)),
					time.Date(2024, 1, 2, 1, 4, 5, 1000, time.UTC)}, // one instant twice
			},
			want: map[string]string{
				"tags":   `{"SS":["","a","b","ä"]}`,
				"labels": `{"SS":["x"]}`,
				"moods":  `{"SS":["happy","sad"]}`,
				"uids":   `{"SS":["01000000-0000-0000-0000-000000000000","a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"]}`,
				"days":   `{"SS":["2023-01-01","2024-02-29"]}`,
				"times":  `{"SS":["2024-01-02T01:04:05.000001Z"]}`,
			},
		},
		{
			name: "number arrays are number sets in canonical text",
			vals: map[string]any{
				"ints":   []any{int32(3), int32(-1), int32(3), int32(10)},
				"bigs":   []any{int64(math.MaxInt64)},
				"nums":   []any{num("1.0"), num("1"), num("0012.500"), num("-0.000"), pgtype.Numeric{Int: big.NewInt(1), Exp: 20, Valid: true}},
				"floats": []any{0.1, 0.1, math.Copysign(0, -1), 0.0, 1e-7},
			},
			want: map[string]string{
				"int_set": `{"NS":["-1","10","3"]}`,
				"bigs":    `{"NS":["9223372036854775807"]}`,
				"nums":    `{"NS":["0","1","100000000000000000000","12.5"]}`,
				"floats":  `{"NS":["0","0.0000001","0.1"]}`,
			},
		},
		{
			name: "bytea arrays are binary sets",
			vals: map[string]any{"blobs": []any{[]byte{2}, []byte{1, 0}, []byte{2}, []byte{}}},
			want: map[string]string{"blobs": `{"BS":["","AQA=","Ag=="]}`},
		},
		{
			name: "empty arrays and NULL columns leave the attribute out",
			vals: map[string]any{"tags": []any{}, "ints": []any{}, "blobs": []any{}, "labels": nil},
			want: map[string]string{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.vals["id"] = int32(1)
			items, err := p.Items(setRow(p, tc.vals), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for name, av := range items[0].Attrs {
				if name != "PK" && name != "SK" && name != "type" && name != "id" {
					got[name] = testenv.CanonicalValue(av)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("attributes (-want +got):\n%s", d)
			}
			if n := transform.ItemSize(items[0].Attrs); n <= 0 {
				t.Errorf("item size %d", n)
			}
		})
	}
}

// TestSetRejections: a row whose array cannot be a DynamoDB set is
// rejected, naming the column and the element, never written with the
// element dropped.
func TestSetRejections(t *testing.T) {
	p := compileFirst(t, setsHead+`  E:
    source: {table: t}
    pk: E#${id}
    sk: E
    attributes: {select: [tags, nums, floats], sets: [tags, nums, floats]}
`, setCols)
	cases := []struct {
		name   string
		vals   map[string]any
		column string
		reason string
	}{
		{"a NULL element", map[string]any{"tags": []any{"a", nil, "b"}}, "tags",
			"element 2 is NULL: a DynamoDB set cannot hold NULL"},
		{"only NULL elements", map[string]any{"nums": []any{nil}}, "nums",
			"element 1 is NULL: a DynamoDB set cannot hold NULL"},
		{"a two-dimensional value", map[string]any{"tags": []any{[]any{"a", "b"}, []any{"c", "d"}}}, "tags",
			"element 1 is an array: a multi-dimensional array cannot be a set"},
		{"NaN", map[string]any{"floats": []any{1.5, math.NaN()}}, "floats",
			"element 2: NaN and Infinity are not DynamoDB numbers"},
		{"too many digits", map[string]any{"nums": []any{num("123456789012345678901234567890123456789")}}, "nums",
			"element 1: number with 39 significant digits: DynamoDB numbers hold at most 38"},
		{"text that is not UTF-8", map[string]any{"tags": []any{"caf\xe9"}}, "tags",
			"element 1: text is not valid UTF-8 (is the database encoding SQL_ASCII?)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.vals["id"] = int32(7)
			items, err := p.Items(setRow(p, tc.vals), nil)
			var re *transform.RowError
			if !errors.As(err, &re) {
				t.Fatalf("got items %v, error %v; want a RowError", items, err)
			}
			want := transform.RowError{Entity: "E", SourceKey: map[string]any{"id": "7"}, Column: tc.column, Reason: tc.reason}
			if d := cmp.Diff(want, *re); d != "" {
				t.Errorf("RowError (-want +got):\n%s", d)
			}
		})
	}
}

// childCols are the columns of the child and parent sources of the
// embed and duplicate tests.
var childCols = []extract.Column{
	{Name: "project_id", Type: "int4"},
	{Name: "name", Type: "text"},
	{Name: "year", Type: "int2"},
	{Name: "stars", Type: "numeric"},
	{Name: "active", Type: "bool"},
	{Name: "aliases", Type: "text", Array: true},
	{Name: "meta", Type: "jsonb", AsText: true},
}

func compileSources(t *testing.T, doc string, srcs transform.Sources) *transform.Plan {
	t.Helper()
	m, err := mapping.Parse("sets.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	p, err := transform.Compile(m, 0, srcs)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// records makes an embed's join values: the records (one field each, as
// array_agg(ROW(col)) reads them; nil without children) and their count.
func records(vals ...any) []any {
	if len(vals) == 0 {
		return []any{nil, int64(0)}
	}
	recs := make([]any, len(vals))
	for i, v := range vals {
		recs[i] = []any{v}
	}
	return []any{recs, int64(len(vals))}
}

// TestEmbedSet embeds one child column's values as a set: SS or NS by the
// column's type, duplicates collapsed, no children leaving the attribute
// out, a NULL child value or too many children rejecting the row.
func TestEmbedSet(t *testing.T) {
	doc := setsHead + `  P:
    source: {table: projects}
    pk: P#${id}
    sk: P
    attributes: {select: [id]}
    embed:
      technologies:
        source: {table: project_technologies}
        join: {project_id: id}
        as: set
        attributes: {select: [name]}
      years:
        source: {table: project_technologies}
        join: {project_id: id}
        as: set
        max_items: 3
        attributes: {select: [year]}
`
	p := compileSources(t, doc, transform.Sources{Columns: setCols,
		Embed: map[string][]extract.Column{"technologies": childCols, "years": childCols}})
	if q := p.Query(); len(q.Joins) != 2 || len(q.Joins[0].Columns) != 1 || q.Joins[0].Columns[0].Name != "name" || q.Joins[0].Limit != 0 || q.Joins[1].Limit != 4 {
		t.Fatalf("joins %+v: want one column each, the second limited to max_items+1", q.Joins)
	}
	cases := []struct {
		name        string
		tech, years []any
		want        map[string]string
		reason      string
	}{
		{name: "children make a set", tech: records("go", "sql", "go"), years: records(int16(2024), int16(2019), int16(2024)),
			want: map[string]string{"technologies": `{"SS":["go","sql"]}`, "years": `{"NS":["2019","2024"]}`}},
		{name: "no children leave the attribute out", tech: records(), years: records(),
			want: map[string]string{}},
		{name: "max_items counts child rows, duplicates too", tech: records("go"),
			years:  []any{[]any{[]any{int16(1)}, []any{int16(1)}, []any{int16(1)}, []any{int16(1)}}, int64(9)},
			reason: "embed years: 9 child rows, over max_items 3"},
		{name: "a NULL child value rejects the row", tech: records("go", nil), years: records(),
			reason: `embed technologies: column "name" of child row 2 is NULL: a DynamoDB set cannot hold NULL`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			row := setRow(p, map[string]any{"id": int32(3)}, append(tc.tech, tc.years...)...)
			items, err := p.Items(row, nil)
			if tc.reason != "" {
				var re *transform.RowError
				if !errors.As(err, &re) || re.Reason != tc.reason {
					t.Fatalf("got items %v, error %v; want a RowError %q", items, err, tc.reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, name := range []string{"technologies", "years"} {
				if av, ok := items[0].Attrs[name]; ok {
					got[name] = testenv.CanonicalValue(av)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("attributes (-want +got):\n%s", d)
			}
		})
	}
}

// TestSetsInJoins writes sets inside an embed's elements and among a
// duplicate's columns; an empty array leaves the element's attribute out.
func TestSetsInJoins(t *testing.T) {
	doc := setsHead + `  P:
    source: {table: projects}
    pk: P#${id}
    sk: P
    attributes: {select: [id]}
    embed:
      people:
        source: {table: people}
        join: {project_id: id}
        order_by: [name]
        attributes: {select: [name, aliases], sets: [aliases]}
    duplicate:
      - source: {table: owners}
        join: {project_id: id}
        attributes: {select: [aliases], rename: {aliases: owner_aliases}, sets: [aliases]}
`
	p := compileSources(t, doc, transform.Sources{Columns: setCols,
		Embed:         map[string][]extract.Column{"people": childCols},
		Duplicate:     [][]extract.Column{childCols},
		DuplicateKeys: [][]extract.UniqueKey{{{Columns: []string{"project_id"}, Primary: true}}}})
	people := []any{[]any{"ann", []any{"a", "an", "a"}}, []any{"bo", []any{}}}
	row := setRow(p, map[string]any{"id": int32(3)}, []any{"x", "y", "x"}, people, int64(2))
	items, err := p.Items(row, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, name := range []string{"people", "owner_aliases"} {
		got[name] = testenv.CanonicalValue(items[0].Attrs[name])
	}
	want := map[string]string{
		"people":        `{"L":[{"M":{"aliases":{"SS":["a","an"]},"name":{"S":"ann"}}},{"M":{"name":{"S":"bo"}}}]}`,
		"owner_aliases": `{"SS":["x","y"]}`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("attributes (-want +got):\n%s", d)
	}

	// An empty array of the parent: no attribute.
	row = setRow(p, map[string]any{"id": int32(3)}, []any{}, nil, int64(0))
	items, err = p.Items(row, nil)
	if err != nil {
		t.Fatal(err)
	}
	if av, ok := items[0].Attrs["owner_aliases"]; ok {
		t.Errorf("owner_aliases = %s, want no attribute", testenv.CanonicalValue(av))
	}
}

// TestSetCompileErrors: a set of a column that is not a one-dimensional
// array of text-like values, numbers or bytea is a mapping error, with the
// file, line, column and dotted path.
func TestSetCompileErrors(t *testing.T) {
	embed := func(col string) string {
		return `    embed:
      kids:
        source: {table: k}
        join: {project_id: id}
        as: set
        attributes: {select: [` + col + `]}
`
	}
	const ent = "  E:\n    source: {table: t}\n    pk: E#${id}\n    sk: E\n"
	cases := []struct{ name, entity, want string }{
		{"not an array", ent + "    attributes: {sets: [name]}\n",
			`sets.yaml:7:25: entities.E.attributes.sets[0]: column "name" of type text is not an array: a set is written from an array column (or from child rows, with embed as: set)`},
		{"boolean array", ent + "    attributes: {sets: [tags, flags]}\n",
			`sets.yaml:7:31: entities.E.attributes.sets[1]: column "flags" of type bool[] cannot be a set: expected an array of text-like values (SS), numbers (NS) or bytea (BS)`},
		{"json array", ent + "    attributes: {sets: [docs]}\n",
			`sets.yaml:7:25: entities.E.attributes.sets[0]: column "docs" of type jsonb[] cannot be a set: expected an array of text-like values (SS), numbers (NS) or bytea (BS)`},
		{"two dimensions", ent + "    attributes: {sets: [grid]}\n",
			`sets.yaml:7:25: entities.E.attributes.sets[0]: column "grid" is declared with 2 dimensions: a set is written from a one-dimensional array`},
		{"unknown column", ent + "    attributes: {sets: [tagz]}\n",
			`sets.yaml:7:25: entities.E.attributes.sets[0]: unknown column "tagz" (did you mean "tags"?); t has columns: ` + columnNames(setCols)},
		{"embed set of an array", ent + embed("aliases"),
			`sets.yaml:12:31: entities.E.embed.kids.attributes.select[0]: column "aliases" of type text[] is an array: as: set takes the values of a column of another type, one per child row`},
		{"embed set of booleans", ent + embed("active"),
			`sets.yaml:12:31: entities.E.embed.kids.attributes.select[0]: column "active" of type bool cannot be a set: expected a text-like column (SS), a number (NS) or bytea (BS)`},
		{"embed set of json", ent + embed("meta"),
			`sets.yaml:12:31: entities.E.embed.kids.attributes.select[0]: column "meta" of type jsonb cannot be a set: expected a text-like column (SS), a number (NS) or bytea (BS)`},
		{"embed set of an unknown column", ent + embed("nam"),
			`sets.yaml:12:31: entities.E.embed.kids.attributes.select[0]: unknown column "nam" (did you mean "name"?); it has columns: ` + columnNames(childCols)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := mapping.Parse("sets.yaml", []byte(setsHead+tc.entity))
			if err == nil {
				_, err = transform.Compile(m, 0, transform.Sources{Columns: setCols,
					Embed: map[string][]extract.Column{"kids": childCols}})
			}
			if err == nil || err.Error() != tc.want {
				t.Errorf("got error:\n%v\nwant:\n%s", err, tc.want)
			}
		})
	}
}

func columnNames(cols []extract.Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}
