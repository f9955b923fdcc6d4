package transform_test

import (
	"fmt"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// uniqueCols: a table with a composite primary key (org, id).
var uniqueCols = []extract.Column{
	{Name: "org", Type: "text", PrimaryKey: true, KeyPos: 1},
	{Name: "id", Type: "int4", PrimaryKey: true, KeyPos: 2},
	{Name: "name", Type: "text"},
	{Name: "ts", Type: "timestamptz"},
	{Name: "status", Type: "ticket_status", AsText: true},
}

// KeysUnique proves an entity's keys unique only when the primary key's
// columns can be read back from the rendered keys and no other entity's
// keys share its literal prefixes; every "false" case below has two rows
// (or two entities) that really can render one key.
func TestKeysUnique(t *testing.T) {
	cases := []struct {
		name     string
		entities string // each entity's source is a table with uniqueCols
		want     []bool
		unique   []extract.UniqueKey // the tables' unique indexes
	}{
		{"the tickets layout: TYPE#id keys, distinct prefixes", `
  Org: {source: {table: t}, pk: "ORG#${org}", sk: "ORG#${id}"}
  User: {source: {table: t}, pk: "ORG#${org}", sk: "USER#${id}#${ts}#${org}"}
  Ticket: {source: {table: t}, pk: "USER#${id}", sk: "TICKET#${ts}"}`, []bool{true, true, false}, nil},
		// Ticket's keys leave org out: two rows of one id and ts collide.
		{"a primary key column missing from the keys", `
  A: {source: {table: t}, pk: "A#${org}", sk: "A"}`, []bool{false}, nil},
		{"text before another placeholder cannot be read back", `
  A: {source: {table: t}, pk: "A", sk: "${org}#${id}"}`, []bool{false}, nil},
		{"an integer before # can", `
  A: {source: {table: t}, pk: "A", sk: "${id}#${org}"}`, []bool{true}, nil},
		{"two placeholders with nothing between them", `
  A: {source: {table: t}, pk: "A#${org}", sk: "${id}${id}"}`, []bool{false}, nil},
		{"text last, with a literal suffix", `
  A: {source: {table: t}, pk: "A#${id}", sk: "${org}#END"}`, []bool{true}, nil},
		{"an enum read as text is not trusted", `
  A: {source: {table: t}, pk: "A#${id}", sk: "${org}#${status:0}"}`, []bool{false}, nil},
		{"one entity's prefix is a prefix of the other's", `
  A: {source: {table: t}, pk: "U${org}", sk: "B#${id}"}
  B: {source: {table: t}, pk: "USER#${org}", sk: "B#${id}"}`, []bool{false, false}, nil},
		{"same partition key prefix, distinct sort key prefixes", `
  A: {source: {table: t}, pk: "P#${org}", sk: "A#${id}"}
  B: {source: {table: t}, pk: "P#${org}", sk: "B#${id}"}`, []bool{true, true}, nil},
		{"a unique index's columns instead of the primary key's", `
  A: {source: {table: t}, pk: "A#${org}", sk: "NAME#${name}"}`, []bool{true}, []extract.UniqueKey{{Columns: []string{"org", "name"}}}},
		{"the columns of no unique key", `
  A: {source: {table: t}, pk: "A#${org}", sk: "NAME#${name}"}`, []bool{false}, []extract.UniqueKey{{Columns: []string{"org", "ts"}}}},
		{"a query source has no primary key", `
  A: {source: {query: "SELECT 1"}, pk: "A#${org}", sk: "A#${id}"}`, []bool{false}, nil},
		{"a mirror's keys meet the other entity's", `
  A: {source: {table: t}, pk: "A#${org}", sk: "A#${id}", mirror: {pk: "B#${org}", sk: "B#${id}"}}
  B: {source: {table: t}, pk: "B#${org}", sk: "B#${id}"}`, []bool{false, false}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := mapping.Parse("u.yaml", []byte("table: {name: uniq}\nentities:"+tc.entities+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			plans := make([]*transform.Plan, len(m.Entities))
			for i := range m.Entities {
				if plans[i], err = transform.Compile(m, i, transform.Sources{Columns: uniqueCols, Unique: tc.unique}); err != nil {
					t.Fatal(err)
				}
			}
			if got := transform.KeysUnique(m, plans); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("KeysUnique = %v, want %v", got, tc.want)
			}
		})
	}
}
