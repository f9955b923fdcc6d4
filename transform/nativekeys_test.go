package transform_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

const nativeHead = `
table:
  name: native
  gsis:
    - name: ByOrg
      partition_keys: [{name: org, type: S}]
      sort_keys: [{name: %s, type: %s}]
entities:
  E:
    source: {table: t}
    pk: ID#${id}
    sk: ID#${id}
`

// A multi-attribute GSI key is checked against its source: a column of
// another DynamoDB type is a mapping error at the key's declaration, and a
// value DynamoDB would refuse (empty, over the key size limit) rejects its
// row instead of failing the batch it would be in.
func TestNativeKeys(t *testing.T) {
	cols := []extract.Column{{Name: "org", Type: "text"}, {Name: "id", Type: "int4"}, {Name: "ts", Type: "timestamptz"}, {Name: "ok", Type: "bool"}}
	compile := func(attr, typ string) (*transform.Plan, error) {
		m, err := mapping.Parse("native.yaml", []byte(strings.NewReplacer("%s, type: %s", attr+", type: "+typ).Replace(nativeHead)))
		if err != nil {
			t.Fatal(err)
		}
		return transform.Compile(m, 0, transform.Sources{Columns: cols})
	}
	for _, tc := range []struct{ attr, typ, want string }{
		{"id", "N", ""},
		{"ts", "S", ""},
		{"id", "S", `native.yaml:7:19: table.gsis[0].sort_keys[0]: entity E writes id from column id (int4), which DynamoDB stores as type N: the key declares type S`},
		{"ok", "S", `entity E writes ok from column ok (bool), which DynamoDB stores as no key type: the key declares type S`},
	} {
		_, err := compile(tc.attr, tc.typ)
		if got := errString(err); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("sort key %s %s: error %q, want %q", tc.attr, tc.typ, got, tc.want)
		}
	}
	p, err := compile("id", "N")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		org, reason string
	}{
		{"", "attribute org, a ByOrg partition key attribute, is empty: DynamoDB refuses an empty key value"},
		{strings.Repeat("x", 2049), "attribute org, a ByOrg partition key attribute, is 2049 bytes: DynamoDB allows 2048"},
		{"acme", ""},
	} {
		row := []any{tc.org, int32(7), nil, nil}[:len(p.Query().Columns)]
		items, err := p.Items(row, nil)
		var re *transform.RowError
		switch {
		case tc.reason == "" && (err != nil || len(items) != 1):
			t.Errorf("org %.10q: items %v, error %v; want one item", tc.org, items, err)
		case tc.reason != "" && (!errors.As(err, &re) || re.Reason != tc.reason):
			t.Errorf("org %.10q: error %v; want the row rejected: %s", tc.org, err, tc.reason)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// An aggregate as a multi-attribute GSI key is of its result's type: a
// count or sum N, a min or max its column's (S for a timestamp); a stable
// ID a string.
func TestNativeKeysOfAggregatesAndIDs(t *testing.T) {
	doc := nativeHead + `    aggregates:
      visits: {function: count, source: {table: v}, join: {t_id: id}}
      last_visit: {function: max, column: at, source: {table: v}, join: {t_id: id}}
    ids:
      eid: {kind: ulid, time: ts, from: [id]}
`
	cols := []extract.Column{{Name: "org", Type: "text"}, {Name: "id", Type: "int4", PrimaryKey: true, KeyPos: 1}, {Name: "ts", Type: "timestamptz"}}
	visits := []extract.Column{{Name: "t_id", Type: "int4"}, {Name: "at", Type: "timestamptz"}}
	for _, tc := range []struct{ attr, typ, want string }{
		{"visits", "N", ""},
		{"visits", "S", "entity E writes visits as"},
		{"last_visit", "S", ""},
		{"last_visit", "N", "which DynamoDB stores as type S: the key declares type N"},
		{"eid", "S", ""},
		{"eid", "N", "a string: the key declares type N"},
	} {
		m, err := mapping.Parse("native.yaml", []byte(strings.NewReplacer("%s, type: %s", tc.attr+", type: "+tc.typ).Replace(doc)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = transform.Compile(m, 0, transform.Sources{Columns: cols, Aggregate: map[string][]extract.Column{"visits": visits, "last_visit": visits}})
		if got := errString(err); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("sort key %s %s: error %q, want %q", tc.attr, tc.typ, got, tc.want)
		}
	}
}
