package draft

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// roundTripBound writes b and requires the file to load to the mapping
// buildBound binds, defaults applied, to be the same on a second write,
// and to hold every unbound and untranslated part as a comment.
func roundTripBound(t *testing.T, b *Bound) string {
	t.Helper()
	var buf, again bytes.Buffer
	if err := WriteBound(&buf, b, "schema.json"); err != nil {
		t.Fatal(err)
	}
	y := buf.String()
	if err := WriteBound(&again, b, "schema.json"); err != nil || again.String() != y {
		t.Errorf("a second write differs (%v):\n%s", err, again.String())
	}
	got, err := mapping.Parse("drafted", buf.Bytes())
	if err != nil {
		t.Fatalf("the draft does not load: %v\n%s", err, y)
	}
	want, _ := buildBound(b, "schema.json")
	if diff := cmp.Diff(withDefaults(want), got, loaded); diff != "" {
		t.Errorf("the draft loads to another mapping than the one built (-built +loaded):\n%s\n%s", diff, y)
	}
	var lines []string
	for _, u := range b.Unbound {
		lines = append(lines, "# - "+u.String()+"\n")
	}
	for _, e := range b.Entities {
		if e.Table == nil {
			lines = append(lines, "# UNBOUND entity "+e.Design.Name+" (")
		}
	}
	for _, p := range b.Patterns {
		if p.Why != "" {
			lines = append(lines, "# UNBOUND "+p.Name+" (entity "+p.Entity.Name+"): "+p.Why+"\n")
		}
	}
	for _, s := range b.Untranslated {
		lines = append(lines, "# - "+s+"\n")
	}
	for _, s := range lines {
		if !strings.Contains(y, s) {
			t.Errorf("the draft lacks the comment %q:\n%s", s, y)
		}
	}
	return y
}

// TestWriteBoundRoundTrip writes bound designs of every shape WriteBound
// knows (duplicates with and without a rename, counts and joins of two
// columns, list and set embeds, sparse GSI keys with a sort key, a type
// attribute, another schema, names YAML must quote, entities and access
// patterns left unbound first, between and last, writes not translated)
// and requires each file to load to the mapping built, with a comment on
// each part left out.
func TestWriteBoundRoundTrip(t *testing.T) {
	design := func(s string) *MCPTable {
		return parseBrief(t, s).Tables[0]
	}
	keyAttrs := design(`{"tables": [{
	  "table_config": {"table_name": "Customers", "partition_key": "customer_id", "sort_key": "email"},
	  "entities": {"Customer": {"entity_type": "CUSTOMER", "pk_template": "{customer_id}", "sk_template": "PROFILE#{email}",
	    "fields": [{"name": "customer_id", "type": "integer"}, {"name": "email", "type": "string"}, {"name": "nickname", "type": "string"}, {"name": "type", "type": "string"}]}}}]}`)
	typed := shop()
	typed.Tables[0].Columns = append(typed.Tables[0].Columns, Column{Name: "type", Type: "text"})

	cases := []struct {
		name string
		b    *Bound
	}{
		{"shop", BindDesign(shop(), design(shopDesign), "")},
		{"key attributes", BindDesign(typed, keyAttrs, "")},
		{"every shape", everyShape()},
		{"no pattern bound", func() *Bound {
			b := everyShape()
			for _, p := range b.Patterns {
				if p.Why == "" {
					p.Why = "its entity is not bound"
				}
			}
			return b
		}()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { roundTripBound(t, c.b) })
	}
}

// everyShape is a Bound built by hand with each shape WriteBound writes.
func everyShape() *Bound {
	col := func(name string) Column { return Column{Name: name, Type: "text", NotNull: true} }
	tenants := &Table{Schema: "sales", Name: "tenants", PrimaryKey: []string{"tenant_id"}, Rows: 2, Columns: []Column{col("tenant_id"), col("name")}}
	projects := &Table{Schema: "sales", Name: "Café Projekte", PrimaryKey: []string{"tenant_id", "project id"}, Rows: 1200,
		Columns: []Column{col("tenant_id"), col("project id"), col("yes"), col("type")}}
	tasks := &Table{Schema: "sales", Name: "tasks", PrimaryKey: []string{"tenant_id", "project id", "task_id"}, Rows: 7,
		Columns: []Column{col("tenant_id"), col("project id"), col("task_id"), col("title")}}
	labels := &Table{Schema: "sales", Name: "task_labels", PrimaryKey: []string{"task_id", "label"}, Rows: 9, Columns: []Column{col("task_id"), col("label")}}
	cat := &Catalog{Database: "saas\ndb", Schemas: []string{"sales"}, Tables: []*Table{tenants, projects, tasks, labels}}
	ent := func(name, typ, pk, sk string) *MCPEntity {
		return &MCPEntity{Name: name, EntityType: typ, PKTemplate: pk, SKTemplate: sk}
	}
	tenant, project, task := ent("Tenant", "TENANT", "TENANT#{tenant_id}", "TENANT"), ent("Project", "", "TENANT#{tenant_id}", "PROJECT#{project_id}"), ent("Task", "TASK", "TASK#{task_id}", "TASK")
	audit, invoice := ent("Audit", "AUDIT", "AUDIT#{id}", "AUDIT"), ent("Invoice", "INVOICE", "INVOICE#{id}", "INVOICE#{n}")
	both := [][2]string{{"tenant_id", "tenant_id"}, {"project id", "project id"}}
	return &Bound{
		Catalog: cat, Design: &MCPTable{Config: MCPTableConfig{TableName: "Projects"}},
		Table: "Projects", PartitionKey: "PK", SortKey: "SK", TypeAttribute: "entity_type",
		GSIs: []MCPGSI{{Name: "GSI1", PartitionKey: "GSI1PK", SortKey: "GSI1SK"}, {Name: "by-key", PartitionKey: "GSI2PK"}},
		Entities: []*BoundEntity{
			{Design: audit},
			{Design: tenant, Table: tenants, Why: "2 of its 2 fields are columns of tenants", PK: "TENANT#${tenant_id}", SK: "TENANT",
				Select: []string{"tenant_id", "name"},
				Counts: []BoundCount{{Attr: "project_count", Child: projects, Join: [][2]string{{"tenant_id", "tenant_id"}}}}},
			{Design: invoice},
			{Design: project, Table: projects, Why: "its key", PK: "TENANT#${tenant_id}", SK: "PROJECT#${project id}",
				Indexes: []BoundIndex{{Name: "GSI1", PK: "P#${yes}", SK: "PROJECT#${project id}", Sparse: true}, {Name: "by-key", PK: "PROJECT#${project id}"}},
				Select:  []string{"tenant_id", "project id", "yes", "type"}, Rename: map[string]string{"project id": "project_id", "yes": "y"},
				Duplicates: []*BoundDuplicate{{Parent: tenants, Join: [][2]string{{"tenant_id", "tenant_id"}}, Select: []string{"name"}, Rename: map[string]string{"name": "tenant_name"}, Via: "tenants (tenant_id)"}},
				Counts:     []BoundCount{{Attr: "task_count", Child: tasks, Join: both}},
				Embeds:     []BoundEmbed{{Attr: "tasks", Child: tasks, Join: both, OrderBy: []string{"task_id"}, Exclude: []string{"tenant_id", "project id"}, Max: 4}},
				Notes:      []string{"a note\nover two lines"}},
			{Design: task, Table: tasks, Why: "its key", PK: "TASK#${task_id}", SK: "TASK", Select: []string{"task_id", "title"},
				Duplicates: []*BoundDuplicate{
					{Parent: projects, Join: both, Select: []string{"yes"}, Via: "Café Projekte (tenant_id, project id)"},
					{Parent: tenants, Join: [][2]string{{"tenant_id", "tenant_id"}}, Select: []string{"name"}, Rename: map[string]string{"name": "tenant"}, Via: "tenants, through Café Projekte (tenant_id, project id)"}},
				Embeds: []BoundEmbed{{Attr: "labels", Child: labels, Join: [][2]string{{"task_id", "task_id"}}, Column: "label", Max: 3}}},
			{Design: ent("Note", "NOTE", "NOTE#{id}", "NOTE")},
		},
		Patterns: []*BoundPattern{
			{Name: "audit_log", Entity: audit, Why: "its entity Audit is not bound"},
			{Name: "get_tenant", Description: "Tenant (design pattern 1: GetItem)", KeyCondition: "PK = TENANT#${tenant_id} AND SK = TENANT", Entity: tenant},
			{Name: "invoices", Entity: invoice, Why: "its entity Invoice is not bound"},
			{Name: "projects_by_y", Description: "yes", Index: "GSI1", KeyCondition: "GSI1PK = P#${yes}", Entity: project},
			{Name: "late", Entity: task, Why: "the entity's templates in GSI1 are unbound"},
		},
		Unbound: []Unbound{
			{"entity Audit", "no table of the source has any of its fields as a column"},
			{"entity Invoice", "no table holds its key fields"},
			{"entity Project, field owner", "Café Projekte has no column owner"},
			{"entity Note", "no table of the source has any of its fields as a column"},
			{"access pattern audit_log", "its entity Audit is not bound"},
			{"access pattern invoices", "its entity Invoice is not bound"},
			{"access pattern late", "the entity's templates in GSI1 are unbound"},
		},
		Untranslated: []string{"add_task (entity Task): a write (PutItem)"},
	}
}
