package pipeline

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// The entities whose keys may meet are grouped, transitively, and only
// those not proven unique.
func TestCollisionGroups(t *testing.T) {
	plans, _ := compilePlans(t, `
  A: {source: {table: t}, pk: "A#${name}", sk: "X"}
  P: {source: {table: t}, pk: "P#${id}", sk: "P"}
  B: {source: {table: t}, pk: "A#B#${id}", sk: "X"}
  C: {source: {table: t}, pk: "C#${name}", sk: "C"}
  D: {source: {table: t}, pk: "A#B#D#${id}", sk: "X"}`)
	groups, of := collisionGroups(plans, []bool{false, true, false, false, false})
	if d := cmp.Diff([][]int{{0, 2, 4}, {3}}, groups); d != "" {
		t.Errorf("groups (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]int{0, -1, 0, 1, 0}, of); d != "" {
		t.Errorf("group of each entity (-want +got):\n%s", d)
	}
}

// A resumed collision group replays, in order, what the earlier run wrote
// before it reads on; replays after the last part read are left out, and
// entities outside groups are read in parallel parts as before. Each
// resumed entity's total becomes the rows left in its ranges.
func TestScheduleReplaysResumedGroup(t *testing.T) {
	plans, m := compilePlans(t, `
  A: {source: {table: t}, pk: "A#${name}", sk: "X"}
  P: {source: {table: t}, pk: "P#${id}", sk: "P"}
  B: {source: {table: t}, pk: "A#B#${id}", sk: "X"}
  C: {source: {table: t}, pk: "A#C#${id}", sk: "X"}`)
	groups, of := collisionGroups(plans, transform.KeysUnique(m, plans))
	res := resume{
		skip: []bool{true, false, false, false},
		ranges: [][]Range{nil,
			{{After: []string{"5"}, Until: []string{"10"}}, {After: []string{"10"}}},
			{{After: []string{"3"}, Until: []string{"10"}}, {After: []string{"19"}, Until: []string{"20"}, Done: true}, {After: []string{"20"}}},
			{{}}},
	}
	src := newFakeSource(map[string]int{"A": 30, "P": 30, "B": 30, "C": 30}, func(id int) string { return "n" })
	totals := []int64{30, 30, 30, 30}
	_, _, tasks, err := schedule(t.Context(), src, plans, totals, res, 4, MinRangeRows, Shard{}, groups, of)
	if err != nil {
		t.Fatal(err)
	}
	// What this run reads of each: A nothing more (done, its total kept),
	// P 5 + 20 rows, B 7 + 10 (its range to 20 done), C all 30.
	if d := cmp.Diff([]int64{30, 25, 17, 30}, totals); d != "" {
		t.Errorf("rows to read (-want +got):\n%s", d)
	}
	var got []string
	for _, tk := range tasks {
		s := ""
		for _, pt := range tk.parts {
			s += fmt.Sprintf("%s%s(%v,%v] ", map[bool]string{true: "replay ", false: ""}[pt.replay],
				plans[pt.entity].Entity().Name, pt.r.After, pt.r.Until)
		}
		got = append(got, s)
	}
	want := []string{
		// A is done: replayed whole. B: its first range up to 3, then
		// read on; its second range done (replayed); its third from 20.
		// C is read from the start: nothing to replay.
		"replay A([],[]] replay B([],[3]] B([3],[10]] replay B([10],[20]] B([20],[]] C([],[]] ",
		"P([5],[10]] ",
		"P([10],[]] ",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tasks (-want +got):\n%s", d)
	}
}

// compilePlans compiles the entities of a mapping over one table (id
// integer primary key, name text) without a database.
func compilePlans(t *testing.T, entities string) ([]*transform.Plan, *mapping.Mapping) {
	t.Helper()
	m, err := mapping.Parse("m.yaml", []byte("table: {name: sched}\nentities:"+entities+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	cols := []extract.Column{{Name: "id", Type: "int4", PrimaryKey: true, KeyPos: 1}, {Name: "name", Type: "text"}}
	plans := make([]*transform.Plan, len(m.Entities))
	for i := range m.Entities {
		if plans[i], err = transform.Compile(m, i, transform.Sources{Columns: cols}); err != nil {
			t.Fatal(err)
		}
	}
	return plans, m
}
