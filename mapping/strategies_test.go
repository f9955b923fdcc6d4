package mapping

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStrategyErrors checks the meaning-level errors of the strategy rules
// and access patterns, each at its place in the file.
func TestStrategyErrors(t *testing.T) {
	const head = "table:\n  name: shop\n  gsis:\n    - {name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK}\nentities:\n  A:\n    source: {table: a}\n    pk: A#${id}\n    sk: A\n"
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"map embed without a key", head + "    embed:\n      kids: {source: {table: k}, join: {a_id: id}, as: map}\n",
			[]string{`m.yaml:11:7: entities.A.embed.kids.key: missing: as: map needs the child column whose value keys the map`}},
		{"unknown embed form", head + "    embed:\n      kids: {source: {table: k}, join: {a_id: id}, as: bag}\n",
			[]string{`m.yaml:11:56: entities.A.embed.kids.as: unknown "bag": expected list, map or set`}},
		{"bad order", head + "    embed:\n      kids: {source: {table: k}, join: {a_id: id}, order_by: [id sideways]}\n",
			[]string{`m.yaml:11:63: entities.A.embed.kids.order_by[0]: order "id sideways": expected a column, optionally followed by ASC or DESC`}},
		{"embed without join", head + "    embed:\n      kids: {source: {table: k}}\n",
			[]string{`m.yaml:11:7: entities.A.embed.kids.join: missing: expected the join columns, e.g. {customer_id: customer_id}`}},
		{"duplicate from a query", head + "    duplicate:\n      - {source: {query: 'SELECT 1'}, join: {id: p_id}, attributes: {select: [x]}}\n",
			[]string{`m.yaml:11:10: entities.A.duplicate[0].source: expected source.table: the join must be checked against the table's unique keys`}},
		{"duplicate copying nothing", head + "    duplicate:\n      - {source: {table: p}, join: {id: p_id}}\n",
			[]string{`m.yaml:11:9: entities.A.duplicate[0].attributes.select: missing: expected the parent columns to copy`}},
		{"sum without a column", head + "    aggregates:\n      total: {function: sum, source: {table: k}, join: {a_id: id}}\n",
			[]string{`m.yaml:11:7: entities.A.aggregates.total.column: missing: sum needs the child column`}},
		{"unknown aggregate", head + "    aggregates:\n      n: {function: avg, source: {table: k}, join: {a_id: id}}\n",
			[]string{`m.yaml:11:21: entities.A.aggregates.n.function: unknown function "avg": expected count, sum, min or max`}},
		{"id without columns", head + "    ids:\n      uid: {kind: uuid, time: t}\n",
			[]string{`m.yaml:11:7: entities.A.ids.uid.from: missing: expected the columns that identify the row (its primary key)`,
				`m.yaml:11:19: entities.A.ids.uid.kind: unknown kind "uuid": expected ksuid or ulid`}},
		{"pattern on the wrong key", head + "access_patterns:\n  P: {key_condition: 'SK = A#${id}'}\n",
			[]string{`m.yaml:11:22: access_patterns.P.key_condition: the condition names "SK"; the partition key of the table is "PK"`}},
		{"pattern on an unknown index", head + "access_patterns:\n  P: {index: GSI9, key_condition: 'PK = A'}\n",
			[]string{`m.yaml:11:14: access_patterns.P.index: unknown index "GSI9": expected one of the table's gsis (GSI1) or none for the table`}},
		{"pattern that does not parse", head + "access_patterns:\n  P: {key_condition: 'PK = A OR SK = B'}\n",
			[]string{`m.yaml:11:22: access_patterns.P.key_condition: key condition "PK = A OR SK = B": expected "AND" and a sort key condition after the partition key`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("m.yaml", []byte(tc.yaml))
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("errors (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseKeyCondition(t *testing.T) {
	cases := []struct {
		in   string
		want string // attr op template …
	}{
		{"PK = USER#${id}", "PK=USER#${id}"},
		{"PK = USER#${id} AND SK = PROFILE", "PK=USER#${id} SK = PROFILE"},
		{"GSI1PK = ORG#${o} and begins_with(GSI1SK, TICKET#)", "GSI1PK=ORG#${o} GSI1SK begins_with TICKET#"},
		{"PK = A AND SK BETWEEN '2024-01' AND '2024-12'", "PK=A SK between 2024-01 2024-12"},
		{"PK = A AND SK >= ${t}", "PK=A SK >= ${t}"},
		{"PK=A AND SK<${t}", "PK=A SK < ${t}"},
		{"PK = 'CITY#New York' AND begins_with(SK, 'ZIP (old), #')", "PK=CITY#New York SK begins_with ZIP (old), #"},
		{"PK = A AND SK BETWEEN '2024-01-01 00:00' AND '2024-12-31 23:59'", "PK=A SK between 2024-01-01 00:00 2024-12-31 23:59"},
		{"PK = A AND begins_with(SK, '')", "PK=A SK begins_with "},
	}
	for _, bad := range []string{"PK = ''", "PK = A AND", "PK = A AND SK LIKE B", "PK = 'A", "PK = A AND begins_with(SK, B"} {
		if kc, err := ParseKeyCondition(bad); err == nil {
			t.Errorf("%q parsed as %+v, want an error", bad, kc)
		}
	}
	for _, tc := range cases {
		kc, err := ParseKeyCondition(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		got := kc.PartitionAttr + "=" + kc.Partition.Source
		if kc.SortAttr != "" {
			got += " " + kc.SortAttr + " " + kc.SortOp + " " + kc.Sort.Source
			if kc.SortOp == "between" {
				got += " " + kc.SortHigh.Source
			}
		}
		if got != tc.want {
			t.Errorf("%q parsed as %q, want %q", tc.in, got, tc.want)
		}
	}
}
