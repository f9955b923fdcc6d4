package plan_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/plan"
)

// The entity chart says which attributes are sets: an entity's array
// columns, an embed as: set, and sets inside embedded elements and
// duplicated columns.
func TestPlanNotesSets(t *testing.T) {
	m, err := mapping.Parse("m.yaml", []byte(`table: {name: shop}
entities:
  Project:
    source: {table: projects}
    pk: PROJECT#${id}
    sk: PROJECT
    attributes: {exclude: [secret], sets: [tags, scores]}
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
        order_by: [name]
        attributes: {select: [name, roles], sets: [roles]}
    duplicate:
      - source: {table: owners}
        join: {id: owner_id}
        attributes: {select: [labels], sets: [labels]}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"all columns except secret",
		"sets: tags, scores",
		"duplicated from owners: labels (sets: labels)",
		"members: embedded list of members ordered by name (sets: roles)",
		"technologies: embedded set of name from project_technologies, at most 50",
		`type = "Project"`,
	}
	if d := cmp.Diff(want, plan.Build(m).Entities[0].Attributes); d != "" {
		t.Errorf("attribute notes (-want +got):\n%s", d)
	}
}
