package transform_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// libCols are the columns of the library tests' source.
var libCols = []extract.Column{
	{Name: "id", Type: "int4", PrimaryKey: true, KeyPos: 1},
	{Name: "org", Type: "text"},
	{Name: "ts", Type: "timestamptz"},
	{Name: "local", Type: "timestamp"},
	{Name: "day", Type: "date"},
	{Name: "amount", Type: "numeric", IntDigits: 10, Precision: 12, Scale: 2},
	{Name: "score", Type: "float8"},
	{Name: "n", Type: "numeric", IntDigits: 8, Precision: 8},
	{Name: "status", Type: "ticket_status", AsText: true},
}

// TestLibraryKeyColumns checks which columns can be key placeholders under
// a library that renders keys from the items' attributes: those whose key
// text is the text the library makes of the attribute.
func TestLibraryKeyColumns(t *testing.T) {
	ok := []string{"${id}", "${id:0}", "${org}", "${day}", "${n}", "${status}"}
	refused := map[string]string{
		"${ts}":     `${ts}: library onetable renders keys from the item's attributes, and column "ts" of type timestamptz has six fraction digits in a key but only those it has in its attribute, so the library would render another key: cast it to text in a query source (ts::text) or leave it out of the keys`,
		"${local}":  `${local}: library onetable renders keys from the item's attributes, and column "local" of type timestamp has six fraction digits in a key but only those it has in its attribute, so the library would render another key: cast it to text in a query source (local::text) or leave it out of the keys`,
		"${amount}": `${amount}: library onetable renders keys from the item's attributes with JavaScript's String(value), and column "amount" of type numeric has no key text that is that: cast it to an integer or text in a query source, or leave it out of the keys`,
		"${score}":  `${score}: library onetable renders keys from the item's attributes with JavaScript's String(value), and column "score" of type float8 has no key text that is that: cast it to an integer or text in a query source, or leave it out of the keys`,
	}
	doc := func(lib, ph string) string {
		return "table: {name: lib}\n" + lib + "\nentities:\n  E: {source: {table: t}, pk: \"E#" + ph + "\", sk: E}\n"
	}
	for _, ph := range ok {
		compileFirst(t, doc("library: onetable", ph), libCols)
	}
	for ph, want := range refused {
		m, err := mapping.Parse("test.yaml", []byte(doc("library: onetable", ph)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = transform.Compile(m, 0, transform.Sources{Columns: libCols})
		var es mapping.Errors
		if !errors.As(err, &es) || len(es) != 1 || es[0].Msg != want || es[0].Path != "entities.E.pk" || es[0].Line != 4 {
			t.Errorf("%s: got %v, want test.yaml:4: entities.E.pk: %s", ph, err, want)
		}
		// Without a library, the same key is fine.
		compileFirst(t, doc("", ph), libCols)
	}
}

// libItem converts one row with p, as Builder and as the reference
// conversion (which must agree), and returns the item's string and number
// attributes, or the row's error.
func libItem(t *testing.T, p *transform.Plan, vals map[string]any) (map[string]string, error) {
	t.Helper()
	var row []any
	q := p.Query()
	for _, c := range q.Columns {
		row = append(row, vals[c.Name])
	}
	for range q.OrderBy {
		row = append(row, "1") // the row's position
	}
	items, err := p.Items(row, nil)
	ref, refErr := transform.ReferenceItems(p, row, nil)
	if (err == nil) != (refErr == nil) || err != nil && err.Error() != refErr.Error() {
		t.Fatalf("Builder error %v, reference error %v", err, refErr)
	}
	if err != nil {
		return nil, err
	}
	if d := cmp.Diff(testItems(ref), testItems(items)); d != "" {
		t.Fatalf("Builder and reference differ (-reference +Builder):\n%s", d)
	}
	return testItems(items)[0], nil
}

func testItems(items []transform.Item) []map[string]string {
	var out []map[string]string
	for _, it := range items {
		m := map[string]string{}
		for k, v := range it.Attrs {
			switch v := v.(type) {
			case *types.AttributeValueMemberS:
				m[k] = v.Value
			case *types.AttributeValueMemberN:
				m[k] = "N " + v.Value
			}
		}
		out = append(out, m)
	}
	return out
}

// TestLibraryKeyText renders keys as the libraries do: electrodb lower-cases
// whole keys and writes numbers plainly unless a width is given; a padded
// number below zero has no key text under either library (it pads in
// front: "00000000-3"), a plain one has.
func TestLibraryKeyText(t *testing.T) {
	electro := `
table: {name: lib}
library: {name: electrodb, service: Lib}
entities:
  E:
    source: {table: t}
    pk: "$lib#org_${org}"
    sk: "$e_1#id_${id}"
`
	p := compileFirst(t, electro, libCols)
	got, err := libItem(t, p, map[string]any{"id": int32(-3), "org": "AcMe Ärger"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"PK": "$lib#org_acme ärger", "SK": "$e_1#id_-3", "__edb_e__": "E", "__edb_v__": "1", "id": "N -3", "org": "AcMe Ärger"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("electrodb item (-want +got):\n%s", d)
	}

	padded := strings.Replace(electro, "${id}", "${id:6}", 1)
	p = compileFirst(t, padded, libCols)
	if got, err := libItem(t, p, map[string]any{"id": int32(42), "org": "x"}); err != nil || got["SK"] != "$e_1#id_000042" {
		t.Errorf("electrodb ${id:6} of 42: %v, %v; want SK $e_1#id_000042", got["SK"], err)
	}
	_, err = libItem(t, p, map[string]any{"id": int32(-3), "org": "x"})
	var re *transform.RowError
	if !errors.As(err, &re) || re.Column != "id" || !strings.Contains(re.Reason, "id = -3 is below zero") {
		t.Errorf("electrodb ${id:6} of -3: %v, want a row error on id", err)
	}

	onetable := "table: {name: lib}\nlibrary: onetable\nentities:\n  E: {source: {table: t}, pk: \"E#${id}\", sk: E}\n"
	p = compileFirst(t, onetable, libCols)
	if got, err := libItem(t, p, map[string]any{"id": int32(42)}); err != nil || got["PK"] != "E#0000000042" || got["_type"] != "E" {
		t.Errorf("onetable of 42: %v, %v; want PK E#0000000042 and _type E", got, err)
	}
	if _, err := libItem(t, p, map[string]any{"id": int32(-3)}); !errors.As(err, &re) || re.Column != "id" {
		t.Errorf("onetable of -3: %v, want a row error on id", err)
	}
	p = compileFirst(t, strings.Replace(onetable, "${id}", "${id:0}", 1), libCols)
	if got, err := libItem(t, p, map[string]any{"id": int32(-3)}); err != nil || got["PK"] != "E#-3" {
		t.Errorf("onetable ${id:0} of -3: %v, %v; want PK E#-3", got["PK"], err)
	}
}

// TestLibraryKeysUnique: lower-cased text no longer tells two values apart
// ("A" and "a"), so an electrodb entity keyed by text keeps the run-wide
// duplicate check; the same entity under onetable is proven unique.
func TestLibraryKeysUnique(t *testing.T) {
	cols := []extract.Column{{Name: "org", Type: "text", PrimaryKey: true, KeyPos: 1}}
	for lib, want := range map[string]bool{
		"library: {name: electrodb, service: lib}": false,
		"library: onetable":                        true,
	} {
		pk := map[bool]string{false: "$lib#org_${org}", true: "E#${org}"}[want]
		sk := map[bool]string{false: "$e_1", true: "E"}[want]
		m, err := mapping.Parse("test.yaml", []byte("table: {name: lib}\n"+lib+"\nentities:\n  E: {source: {table: t}, pk: \""+pk+"\", sk: \""+sk+"\"}\n"))
		if err != nil {
			t.Fatal(err)
		}
		plans, err := transform.CompileAll(m, []*transform.Sources{{Columns: cols}})
		if err != nil {
			t.Fatal(err)
		}
		if got := transform.KeysUnique(m, plans)[0]; got != want {
			t.Errorf("%s: KeysUnique %v, want %v", lib, got, want)
		}
	}
}

// TestToolboxTimestamps checks dynamodb-toolbox's _ct and _md: the created
// and modified columns in JavaScript's toISOString form (UTC,
// milliseconds), the created time where modified is NULL or absent from
// the source, and a row without a created time rejected.
func TestToolboxTimestamps(t *testing.T) {
	doc := func(created, modified string) string {
		return "table: {name: lib}\nlibrary: {name: dynamodb-toolbox, created: " + created + ", modified: " + modified + "}\n" +
			"entities:\n  E: {source: {table: t}, pk: \"E#${id}\", sk: E, attributes: {select: [id]}}\n"
	}
	at := time.Date(2024, 1, 2, 3, 4, 5, 678901000, time.UTC)
	cases := []struct {
		name, created, modified string
		row                     map[string]any
		ct, md, err             string
	}{
		{"timestamptz, modified NULL", "ts", "local", map[string]any{"id": int32(1), "ts": at}, "2024-01-02T03:04:05.678Z", "2024-01-02T03:04:05.678Z", ""},
		{"timestamp without time zone, as UTC", "ts", "local", map[string]any{"id": int32(1), "ts": at, "local": at.Add(time.Hour)}, "2024-01-02T03:04:05.678Z", "2024-01-02T04:04:05.678Z", ""},
		{"a date, at midnight", "day", "nope", map[string]any{"id": int32(1), "day": time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)}, "2024-02-29T00:00:00.000Z", "2024-02-29T00:00:00.000Z", ""},
		{"created NULL", "ts", "local", map[string]any{"id": int32(1), "local": at}, "", "", "_ct: NULL: dynamodb-toolbox reads it on every item"},
		{"created infinite", "ts", "local", map[string]any{"id": int32(1), "ts": pgtype.Infinity}, "", "", "_ct: infinity is no JavaScript Date"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := compileFirst(t, doc(tc.created, tc.modified), libCols)
			got, err := libItem(t, p, tc.row)
			var re *transform.RowError
			switch {
			case tc.err != "":
				if !errors.As(err, &re) || re.Reason != tc.err || re.Column != tc.created {
					t.Errorf("got %v, want a row error on %s: %s", err, tc.created, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case got["_ct"] != tc.ct || got["_md"] != tc.md || got["_et"] != "E":
				t.Errorf("_ct %q, _md %q, _et %q; want %q, %q, E", got["_ct"], got["_md"], got["_et"], tc.ct, tc.md)
			}
		})
	}

	// Columns that are not there, or not times, are mapping errors.
	for _, tc := range []struct{ created, modified, want string }{
		{"nope", "ts", `test.yaml:2:44: library.created: entity E: its source t has no column "nope", which dynamodb-toolbox's _ct comes from on every item (a query source can alias one); it has columns: id, org, ts, local, day, amount, score, n, status`},
		{"org", "ts", `test.yaml:2:44: library.created: entity E: column "org" is of type text: expected a date, timestamp or timestamptz column for dynamodb-toolbox's _ct`},
		{"ts", "status", `test.yaml:2:58: library.modified: entity E: column "status" is of type ticket_status: expected a date, timestamp or timestamptz column for dynamodb-toolbox's _md`},
	} {
		m, err := mapping.Parse("test.yaml", []byte(doc(tc.created, tc.modified)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err = transform.Compile(m, 0, transform.Sources{Columns: libCols}); err == nil || err.Error() != tc.want {
			t.Errorf("created %s, modified %s: got %v\nwant %s", tc.created, tc.modified, err, tc.want)
		}
	}
}
