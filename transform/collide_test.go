package transform_test

import (
	"testing"

	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// KeysMayMeet tells apart entities by the literal prefixes of their
// partition keys or of their sort keys, mirrors included; a text
// placeholder can render another entity's prefix, so A#${x} meets A#B#${y}.
func TestKeysMayMeet(t *testing.T) {
	cases := []struct {
		name     string
		entities string // A and B, each over a table with uniqueCols
		want     bool
	}{
		{"a text key can render the other's prefix", `
  A: {source: {table: t}, pk: "A#${org}", sk: "X"}
  B: {source: {table: t}, pk: "A#B#${id}", sk: "X"}`, true},
		{"distinct partition key prefixes", `
  A: {source: {table: t}, pk: "ORG#${org}", sk: "X"}
  B: {source: {table: t}, pk: "USER#${org}", sk: "X"}`, false},
		{"one partition key, distinct sort key prefixes", `
  A: {source: {table: t}, pk: "P#${org}", sk: "A#${id}"}
  B: {source: {table: t}, pk: "P#${org}", sk: "B#${id}"}`, false},
		{"distinct literal keys", `
  A: {source: {table: t}, pk: "P", sk: "A"}
  B: {source: {table: t}, pk: "P", sk: "AB"}`, false},
		{"a mirror lands on the other's keys", `
  A: {source: {table: t}, pk: "A#${org}", sk: "A#${id}", mirror: {pk: "B#${org}", sk: "B#${id}"}}
  B: {source: {table: t}, pk: "B#${org}", sk: "B#${id}"}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := mapping.Parse("m.yaml", []byte("table: {name: meet}\nentities:"+tc.entities+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			plans := make([]*transform.Plan, len(m.Entities))
			for i := range m.Entities {
				if plans[i], err = transform.Compile(m, i, transform.Sources{Columns: uniqueCols}); err != nil {
					t.Fatal(err)
				}
			}
			if got := transform.KeysMayMeet(plans[0], plans[1]); got != tc.want {
				t.Errorf("KeysMayMeet(A, B) = %v, want %v", got, tc.want)
			}
			if got := transform.KeysMayMeet(plans[1], plans[0]); got != tc.want {
				t.Errorf("KeysMayMeet(B, A) = %v, want %v (symmetric)", got, tc.want)
			}
			if !transform.KeysMayMeet(plans[0], plans[0]) {
				t.Error("KeysMayMeet(A, A) = false, want true")
			}
		})
	}
	if transform.KeysMayMeet(nil, nil) {
		t.Error("KeysMayMeet(nil, nil) = true")
	}
}
