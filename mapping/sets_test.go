package mapping

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSets parses the mappings that write sets: array columns listed in
// attributes.sets (of an entity, an embed's elements, a duplicate) and an
// embed with as: set.
func TestSets(t *testing.T) {
	const doc = `table: {name: shop}
entities:
  Project:
    source: {table: projects}
    pk: PROJECT#${id}
    sk: PROJECT
    attributes: {exclude: [secret], rename: {scores: score_set}, sets: [tags, scores]}
    embed:
      technologies:
        source: {table: project_technologies}
        join: {project_id: id}
        as: set
        max_items: 50
        attributes: {select: [name]}
      members:
        source: {table: members}
        join: {project_id: id}
        attributes: {select: [name, roles], sets: [roles]}
    duplicate:
      - source: {table: owners}
        join: {id: owner_id}
        attributes: {select: [labels], sets: [labels]}
`
	m, err := Parse("m.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	e := m.Entity("Project")
	if d := cmp.Diff([]string{"tags", "scores"}, e.Attributes.Sets); d != "" {
		t.Errorf("attributes.sets (-want +got):\n%s", d)
	}
	if tech := e.Embed["technologies"]; tech.As != EmbedSet || tech.MaxItems != 50 {
		t.Errorf("technologies: as %q, max_items %d; want set, 50", tech.As, tech.MaxItems)
	}
	if got := e.Embed["members"]; got.As != EmbedList || !cmp.Equal(got.Attributes.Sets, []string{"roles"}) {
		t.Errorf("members: as %q, sets %v; want list, [roles]", got.As, got.Attributes.Sets)
	}
	if got := e.Duplicate[0].Attributes.Sets; !cmp.Equal(got, []string{"labels"}) {
		t.Errorf("duplicate sets %v, want [labels]", got)
	}
}

// TestSetErrors checks the mapping-level errors of sets, each with file,
// line, column and dotted path. (Types are checked against the database,
// by transform.Compile.)
func TestSetErrors(t *testing.T) {
	const head = "table: {name: shop}\nentities:\n  A:\n    source: {table: a}\n    pk: A#${id}\n    sk: A\n"
	const embed = "    embed:\n      kids:\n        source: {table: k}\n        join: {a_id: id}\n        as: set\n"
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"set of an excluded column", head + "    attributes: {exclude: [tags], sets: [tags]}\n",
			[]string{`m.yaml:7:42: entities.A.attributes.sets[0]: column "tags" is excluded: a set is written from a column that becomes an attribute`}},
		{"set of a column not selected", head + "    attributes: {select: [id, name], sets: [name, tags]}\n",
			[]string{`m.yaml:7:51: entities.A.attributes.sets[1]: column "tags" is not selected: expected one of the selected columns (id, name)`}},
		{"set listed twice and empty", head + "    attributes:\n      sets: [tags, '', tags]\n",
			[]string{
				`m.yaml:8:20: entities.A.attributes.sets[1]: empty column name`,
				`m.yaml:8:24: entities.A.attributes.sets[2]: column "tags" is listed twice`,
			}},
		{"sets is a list", head + "    attributes: {sets: tags}\n",
			[]string{`m.yaml:7:24: entities.A.attributes.sets: expected a list, got a string ("tags")`}},
		{"embed set without select", head + embed,
			[]string{`m.yaml:8:7: entities.A.embed.kids.attributes.select: as: set needs exactly one child column in select, whose values make the set; got 0`}},
		{"embed set of two columns", head + embed + "        attributes: {select: [name, size]}\n",
			[]string{`m.yaml:12:22: entities.A.embed.kids.attributes.select: as: set needs exactly one child column in select, whose values make the set; got 2`}},
		{"embed set with a list's options", head + embed + "        key: name\n        order_by: [name]\n        attributes: {select: [name], rename: {name: n}, sets: [name]}\n",
			[]string{
				`m.yaml:12:14: entities.A.embed.kids.key: key applies to as: map only`,
				`m.yaml:13:9: entities.A.embed.kids.order_by: a set has no order: remove order_by (as: set)`,
				`m.yaml:14:38: entities.A.embed.kids.attributes.rename: rename does not apply to as: set: the selected column's values are the set`,
				`m.yaml:14:57: entities.A.embed.kids.attributes.sets: sets does not apply to as: set: the selected column's values are the set`,
			}},
		{"embed list element set not selected", head + "    embed:\n      kids: {source: {table: k}, join: {a_id: id}, attributes: {select: [name], sets: [tags]}}\n",
			[]string{`m.yaml:8:88: entities.A.embed.kids.attributes.sets[0]: column "tags" is not selected: expected one of the selected columns (name)`}},
		{"duplicate set excluded", head + "    duplicate:\n      - {source: {table: p}, join: {id: p_id}, attributes: {select: [tags], exclude: [tags], sets: [tags]}}\n",
			[]string{`m.yaml:8:101: entities.A.duplicate[0].attributes.sets[0]: column "tags" is excluded: a set is written from a column that becomes an attribute`}},
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
