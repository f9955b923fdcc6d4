package mapping

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// yml strips the leading newline of a raw string literal so that line
// numbers in expected errors count from the first line of YAML.
func yml(s string) []byte { return []byte(strings.TrimPrefix(s, "\n")) }

func mustParse(t *testing.T, data []byte) *Mapping {
	t.Helper()
	m, err := Parse("m.yaml", data)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return m
}

func entityNames(m *Mapping) []string {
	var out []string
	for _, e := range m.Entities {
		out = append(out, e.Name)
	}
	return out
}

func TestParseAppliesDefaults(t *testing.T) {
	// Entity names are in neither alphabetical nor reverse order, so a map
	// iteration or a sort would show.
	m := mustParse(t, yml(`
table:
  name: shop
  gsis:
    - name: GSI1
      partition_key: GSI1PK
      sort_key: GSI1SK
entities:
  Zeta:
    source: {table: zetas}
    pk: Z#${zeta_id}
    sk: Z#${created_at:0}
    indexes:
      GSI1: {pk: "E#${email}", sk: "${zeta_id:8}"}
  Alpha:
    source: {table: alphas}
    pk: A#${alpha_id}
    sk: A
  Mid:
    source: {query: "SELECT 1 AS id"}
    pk: M#${id}
    sk: M#${id}
`))
	if m.File != "m.yaml" {
		t.Errorf("File = %q, want m.yaml", m.File)
	}
	if m.Version != 1 {
		t.Errorf("Version = %d, want 1", m.Version)
	}
	if m.TypeAttribute != "type" {
		t.Errorf("TypeAttribute = %q, want %q", m.TypeAttribute, "type")
	}
	wantTable := Table{
		Name:         "shop",
		PartitionKey: "PK",
		SortKey:      "SK",
		BillingMode:  "PAY_PER_REQUEST",
		GSIs: []GSI{{
			Name: "GSI1", PartitionKey: "GSI1PK", SortKey: "GSI1SK", Projection: "ALL",
		}},
	}
	if d := cmp.Diff(wantTable, m.Table); d != "" {
		t.Errorf("Table mismatch (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"Zeta", "Alpha", "Mid"}, entityNames(m)); d != "" {
		t.Errorf("entity order mismatch (-want +got):\n%s", d)
	}
	wantTypes := []string{"Zeta", "Alpha", "Mid"}
	for i, e := range m.Entities {
		if e.Type != wantTypes[i] {
			t.Errorf("entity %s: Type = %q, want %q", e.Name, e.Type, wantTypes[i])
		}
		if m.Entity(e.Name) != e {
			t.Errorf("Entity(%q) does not return the entity", e.Name)
		}
	}

	zeta := m.Entity("Zeta")
	if d := cmp.Diff(Source{Table: "zetas"}, zeta.Source); d != "" {
		t.Errorf("Zeta source mismatch (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]Part{lit("Z#"), col("zeta_id")}, zeta.PKTemplate.Parts); d != "" {
		t.Errorf("Zeta PKTemplate mismatch (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]Part{lit("Z#"), colW("created_at", 0)}, zeta.SKTemplate.Parts); d != "" {
		t.Errorf("Zeta SKTemplate mismatch (-want +got):\n%s", d)
	}
	gsi1, ok := zeta.IndexTemplate["GSI1"]
	if !ok {
		t.Fatalf("Zeta IndexTemplate has no GSI1: %v", zeta.IndexTemplate)
	}
	if d := cmp.Diff([]Part{lit("E#"), col("email")}, gsi1[0].Parts); d != "" {
		t.Errorf("Zeta GSI1 pk mismatch (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]Part{colW("zeta_id", 8)}, gsi1[1].Parts); d != "" {
		t.Errorf("Zeta GSI1 sk mismatch (-want +got):\n%s", d)
	}
	if n := len(m.Entity("Alpha").IndexTemplate); n != 0 {
		t.Errorf("Alpha IndexTemplate has %d entries, want 0", n)
	}
	if !m.Entity("Mid").Source.IsQuery() {
		t.Errorf("Mid source is not a query: %+v", m.Entity("Mid").Source)
	}
	if m.Entity("Nope") != nil {
		t.Errorf("lookup of an unknown entity found something")
	}
	if d := cmp.Diff([]string{"PK", "SK", "GSI1PK", "GSI1SK"}, m.KeyAttributes()); d != "" {
		t.Errorf("KeyAttributes() mismatch (-want +got):\n%s", d)
	}
}

func TestParseKeepsExplicitValues(t *testing.T) {
	m := mustParse(t, yml(`
version: 1
type_attribute: entity_type
table:
  name: shop.v2-prod
  partition_key: pk
  sort_key: sk
  billing_mode: PROVISIONED
  read_capacity: 5
  write_capacity: 7
  gsis:
    - name: ByEmail
      partition_key: email_key
      projection: INCLUDE
      non_key_attributes: [name, email]
      read_capacity: 1
      write_capacity: 2
    - name: ByDate
      partition_key: date_key
      projection: KEYS_ONLY
      read_capacity: 3
      write_capacity: 4
entities:
  User:
    source: {schema: app, table: users}
    pk: U#${id}
    sk: U#${id}
    type: user
    indexes:
      ByEmail: {pk: "E#${email}", sparse: true}
    attributes:
      select: [id, name, email]
      exclude: [password]
      rename: {name: full_name}
`))
	wantTable := Table{
		Name: "shop.v2-prod", PartitionKey: "pk", SortKey: "sk",
		BillingMode: "PROVISIONED", ReadCapacity: 5, WriteCapacity: 7,
		GSIs: []GSI{
			{Name: "ByEmail", PartitionKey: "email_key", Projection: "INCLUDE",
				NonKeyAttributes: []string{"name", "email"}, ReadCapacity: 1, WriteCapacity: 2},
			{Name: "ByDate", PartitionKey: "date_key", Projection: "KEYS_ONLY", ReadCapacity: 3, WriteCapacity: 4},
		},
	}
	if d := cmp.Diff(wantTable, m.Table); d != "" {
		t.Errorf("Table mismatch (-want +got):\n%s", d)
	}
	if m.TypeAttribute != "entity_type" {
		t.Errorf("TypeAttribute = %q, want entity_type", m.TypeAttribute)
	}
	u := m.Entity("User")
	if u == nil {
		t.Fatalf("no entity User; have %v", entityNames(m))
	}
	if u.Type != "user" {
		t.Errorf("Type = %q, want user", u.Type)
	}
	if d := cmp.Diff(Source{Schema: "app", Table: "users"}, u.Source); d != "" {
		t.Errorf("Source mismatch (-want +got):\n%s", d)
	}
	if got := u.Source.String(); got != "app.users" {
		t.Errorf("Source.String() = %q, want app.users", got)
	}
	if d := cmp.Diff(map[string]IndexKeys{"ByEmail": {PK: "E#${email}", Sparse: true}}, u.Indexes); d != "" {
		t.Errorf("Indexes mismatch (-want +got):\n%s", d)
	}
	wantAttrs := Attributes{
		Select:  []string{"id", "name", "email"},
		Exclude: []string{"password"},
		Rename:  map[string]string{"name": "full_name"},
	}
	if d := cmp.Diff(wantAttrs, u.Attributes); d != "" {
		t.Errorf("Attributes mismatch (-want +got):\n%s", d)
	}
	pair := u.IndexTemplate["ByEmail"]
	if d := cmp.Diff([]Part{lit("E#"), col("email")}, pair[0].Parts); d != "" {
		t.Errorf("ByEmail pk mismatch (-want +got):\n%s", d)
	}
	if !pair[1].IsZero() {
		t.Errorf("ByEmail has no sort key, but the sk template is %q", pair[1].Source)
	}
	if g := m.Table.GSI("ByDate"); g == nil || g.PartitionKey != "date_key" {
		t.Errorf("GSI(ByDate) = %+v", g)
	}
	if g := m.Table.GSI("Nope"); g != nil {
		t.Errorf("GSI(Nope) = %+v, want nil", g)
	}
}

// TestLoadShippedMappings loads the mapping files of the repository; they
// are the documentation users copy from.
func TestLoadShippedMappings(t *testing.T) {
	tests := []struct {
		path     string
		table    string
		entities []string
	}{
		{"../fixtures/mappings/customers.yaml", "customers", []string{"Customer", "Address"}},
		{"../fixtures/mappings/tickets.yaml", "tickets", []string{"Org", "User", "Ticket"}},
		{"../fixtures/mappings/attendance.yaml", "attendance", []string{"Student", "Lecture", "Attendance"}},
		{"../examples/northwind/mapping.yaml", "northwind", []string{
			"Customer", "Order", "OrderDetail", "Product", "Category", "Supplier", "Employee", "Shipper"}},
		{"testdata/valid.yaml", "shop", []string{"Zeta", "Alpha"}},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(filepath.Dir(tt.path))+"/"+filepath.Base(tt.path), func(t *testing.T) {
			m, err := Load(tt.path)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if m.File != tt.path {
				t.Errorf("File = %q, want %q", m.File, tt.path)
			}
			if m.Table.Name != tt.table {
				t.Errorf("Table.Name = %q, want %q", m.Table.Name, tt.table)
			}
			if d := cmp.Diff(tt.entities, entityNames(m)); d != "" {
				t.Errorf("entities mismatch (-want +got):\n%s", d)
			}
			for _, e := range m.Entities {
				if e.PKTemplate.IsZero() || e.SKTemplate.IsZero() {
					t.Errorf("entity %s: empty key template: pk %q sk %q", e.Name, e.PK, e.SK)
				}
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	t.Run("missing file", func(t *testing.T) {
		_, err := Load("testdata/does-not-exist.yaml")
		if !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("Load error = %v, want one wrapping os.ErrNotExist", err)
		}
		if !strings.HasPrefix(err.Error(), "read mapping: ") {
			t.Errorf("Load error = %q, want the prefix %q", err, "read mapping: ")
		}
	})
	t.Run("errors name the file", func(t *testing.T) {
		_, err := Load("testdata/invalid.yaml")
		want := strings.Join([]string{
			`testdata/invalid.yaml:3:9: table.name: invalid table name "t": expected 3-255 characters of a-z, A-Z, 0-9, '_', '-', '.'`,
			`testdata/invalid.yaml:8:15: entities.Order.sk: template "ORDER#${order_id": unclosed "${": expected "}" after the column name (at character 7)`,
		}, "\n")
		if err == nil || err.Error() != want {
			t.Fatalf("Load error:\n%v\nwant:\n%s", err, want)
		}
	})
}

// TestParseErrors checks the rendered errors, file:line:col: path: message,
// of mappings with one or more problems.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // the lines of Errors.Error()
	}{
		// Decoding.
		{
			name: "unknown top-level field",
			yaml: `
version: 1
tables:
  name: shop
entities:
  A: {source: {table: a}, pk: A, sk: A}
`,
			want: []string{`m.yaml:2:1: tables: unknown field "tables"; expected one of: version, name, table, type_attribute, library, entities, access_patterns`},
		},
		{
			name: "unknown table field",
			yaml: `
table:
  name: shop
  billing: PROVISIONED
entities:
  A: {source: {table: a}, pk: A, sk: A}
`,
			want: []string{`m.yaml:3:3: table.billing: unknown field "billing"; expected one of: name, partition_key, sort_key, partition_key_type, sort_key_type, billing_mode, read_capacity, write_capacity, gsis, warm_throughput, max_read_request_units, max_write_request_units, point_in_time_recovery, deletion_protection`},
		},
		{
			name: "unknown entity field lists the allowed fields",
			yaml: `
table:
  name: shop
entities:
  Order:
    source: {table: orders}
    pk: O#${id}
    sort_key: O
`,
			want: []string{`m.yaml:7:5: entities.Order.sort_key: unknown field "sort_key"; expected one of: source, pk, sk, indexes, attributes, type, embed, duplicate, aggregates, ids, mirror`},
		},
		{
			name: "unknown source field",
			yaml: `
table:
  name: shop
entities:
  Order:
    source: {tabel: orders}
    pk: O
    sk: O
`,
			want: []string{`m.yaml:5:14: entities.Order.source.tabel: unknown field "tabel"; expected one of: schema, table, query`},
		},
		{
			name: "unknown gsi field",
			yaml: `
table:
  name: shop
  gsis:
    - name: GSI1
      pk: GSI1PK
entities:
  A: {source: {table: a}, pk: A, sk: A}
`,
			want: []string{`m.yaml:5:7: table.gsis[0].pk: unknown field "pk"; expected one of: name, partition_key, sort_key, partition_key_type, sort_key_type, partition_keys, sort_keys, projection, non_key_attributes, read_capacity, write_capacity, warm_throughput, max_read_request_units, max_write_request_units`},
		},
		{
			name: "unknown index field",
			yaml: `
table:
  name: shop
  gsis: [{name: GSI1, partition_key: G}]
entities:
  A:
    source: {table: a}
    pk: A
    sk: A
    indexes:
      GSI1: {pk: X, sparce: true}
`,
			want: []string{`m.yaml:10:21: entities.A.indexes.GSI1.sparce: unknown field "sparce"; expected one of: pk, sk, sparse`},
		},
		{
			name: "unknown attributes field",
			yaml: `
table:
  name: shop
entities:
  A:
    source: {table: a}
    pk: A
    sk: A
    attributes:
      include: [x]
`,
			want: []string{`m.yaml:9:7: entities.A.attributes.include: unknown field "include"; expected one of: select, exclude, rename, sets`},
		},
		{
			name: "field names are case-sensitive",
			yaml: `
table:
  name: shop
entities:
  A:
    source: {table: a}
    PK: A
    sk: A
`,
			want: []string{`m.yaml:6:5: entities.A.PK: unknown field "PK"; expected one of: source, pk, sk, indexes, attributes, type, embed, duplicate, aggregates, ids, mirror`},
		},
		{
			// NOTE: ("[") quotes the token that starts the list, not the value;
			// reported as a poor message.
			name: "list where a string is expected",
			yaml: `
table:
  name: shop
entities:
  A:
    source: {table: [a]}
    pk: A
    sk: A
`,
			want: []string{`m.yaml:5:21: entities.A.source.table: expected a string, got a list`},
		},
		{
			name: "string where a number is expected",
			yaml: `
version: one
table:
  name: shop
entities:
  A: {source: {table: a}, pk: A, sk: A}
`,
			want: []string{`m.yaml:1:10: version: expected a whole number, got a string ("one")`},
		},
		{
			name: "string where a number is expected in a gsi",
			yaml: `
table:
  name: shop
  billing_mode: PROVISIONED
  read_capacity: 1
  write_capacity: lots
entities:
  A: {source: {table: a}, pk: A, sk: A}
`,
			// The capacity is left out, as if absent: billing_mode's check
			// runs too, now that one run reports every problem.
			want: []string{"m.yaml:3:17: table.billing_mode: PROVISIONED needs read_capacity and write_capacity above 0",
				`m.yaml:5:19: table.write_capacity: expected a whole number, got a string ("lots")`},
		},
		{
			// NOTE: worded differently from the other type errors ("expected
			// a mapping, got a string"); reported.
			name: "string where a mapping is expected",
			yaml: `
table: shop
entities:
  A: {source: {table: a}, pk: A, sk: A}
`,
			want: []string{`m.yaml:1:8: table: expected a mapping, got a string ("shop")`},
		},
		{
			name: "list of entities",
			yaml: `
table:
  name: shop
entities: [A, B]
`,
			want: []string{`m.yaml:3:11: entities: expected a mapping, got a list`},
		},
		{
			name: "not a mapping at all",
			yaml: `
- table
- entities
`,
			want: []string{`m.yaml:1:1: expected a mapping, got a list`},
		},
		{
			// NOTE: the bare "EOF" is reported as a poor message.
			name: "empty file",
			yaml: ``,
			want: []string{`m.yaml: empty mapping: expected "table:" and "entities:"`},
		},
		{
			name: "comments only",
			yaml: `
# nothing yet
`,
			want: []string{`m.yaml: empty mapping: expected "table:" and "entities:"`},
		},

		// Malformed YAML.
		{
			name: "bad indentation",
			yaml: `
table:
  name: shop
entities:
  A:
    source: {table: a}
   pk: A
    sk: A
`,
			want: []string{`m.yaml:6:4: invalid YAML: value is not allowed in this context`},
		},
		{
			name: "unclosed double quote",
			yaml: `
table:
  name: shop
entities:
  A:
    source: {table: a}
    pk: "A#${id}
    sk: A
`,
			want: []string{`m.yaml:6:9: invalid YAML: could not find end character of double-quoted text`},
		},
		{
			name: "unclosed flow mapping",
			yaml: `
table: {name: shop
entities:
  A: {source: {table: a}, pk: A, sk: A}
`,
			want: []string{`m.yaml:2:1: invalid YAML: ',' or '}' must be specified`},
		},
		{
			name: "duplicate entity",
			yaml: `
table:
  name: shop
entities:
  A: {source: {table: a}, pk: A, sk: A}
  A: {source: {table: b}, pk: B, sk: B}
`,
			want: []string{`m.yaml:5:3: invalid YAML: mapping key "A" already defined at [4:3]`},
		},

		// Templates.
		{
			name: "unclosed placeholder in sk",
			yaml: `
table:
  name: shop
entities:
  Order:
    source: {table: orders}
    pk: CUSTOMER#${customer_id}
    sk: ORDER#${order_id
`,
			want: []string{`m.yaml:7:15: entities.Order.sk: template "ORDER#${order_id": unclosed "${": expected "}" after the column name (at character 7)`},
		},
		{
			name: "bad width in a quoted flow value",
			yaml: `
table:
  name: shop
entities:
  Order: {source: {table: orders}, pk: "O#${id:99}", sk: O}
`,
			want: []string{`m.yaml:4:48: entities.Order.pk: template "O#${id:99}": bad width "99" in ${id:99}: expected a whole number from 0 to 64 (at character 8)`},
		},
		{
			name: "missing pk",
			yaml: `
table:
  name: shop
entities:
  Order:
    source: {table: orders}
    sk: ORDER#${order_id}
`,
			want: []string{`m.yaml:4:3: entities.Order.pk: missing: expected the partition key template, e.g. "ORDER#${order_id}"`},
		},
		{
			// NOTE: 4:10 is past the end of the 8-character line "  Order:"
			// (the position of the implicit null value); reported.
			name: "empty entity",
			yaml: `
table:
  name: shop
entities:
  Order:
`,
			want: []string{
				`m.yaml:4:3: entities.Order.source: missing: expected source.table or source.query`,
				`m.yaml:4:3: entities.Order.pk: missing: expected the partition key template, e.g. "ORDER#${order_id}"`,
				`m.yaml:4:3: entities.Order.sk: missing: expected the sort key template, e.g. "ORDER#${order_id}"`,
			},
		},
		{
			name: "no entities",
			yaml: `
table:
  name: shop
entities: {}
`,
			want: []string{`m.yaml:3:1: entities: missing: expected at least one entity`},
		},

		// Sources.
		{
			name: "source with both table and query",
			yaml: `
table:
  name: shop
entities:
  Order:
    source:
      table: orders
      query: SELECT * FROM orders
    pk: O
    sk: O
`,
			want: []string{`m.yaml:5:5: entities.Order.source: both table and query given: expected exactly one`},
		},
		{
			name: "source with schema and query",
			yaml: `
table:
  name: shop
entities:
  Order:
    source:
      schema: sales
      query: SELECT * FROM orders
    pk: O
    sk: O
`,
			want: []string{`m.yaml:6:15: entities.Order.source.schema: schema applies to source.table only; qualify names inside the query instead`},
		},

		// Indexes.
		{
			name: "index naming an undeclared gsi",
			yaml: `
table:
  name: shop
  gsis:
    - {name: GSI1, partition_key: GSI1PK}
    - {name: GSI2, partition_key: GSI2PK}
entities:
  Order:
    source: {table: orders}
    pk: O
    sk: O
    indexes:
      GSI3: {pk: X}
`,
			want: []string{`m.yaml:12:7: entities.Order.indexes.GSI3: unknown index "GSI3": expected one of the table's gsis (GSI1, GSI2)`},
		},
		{
			// NOTE: "the table declares no gsis; declare it under table.gsis" is
			// reported as a poor message.
			name: "index without any gsi declared",
			yaml: `
table:
  name: shop
entities:
  Order:
    source: {table: orders}
    pk: O
    sk: O
    indexes:
      GSI1: {pk: X}
`,
			want: []string{`m.yaml:9:7: entities.Order.indexes.GSI1: unknown index "GSI1": the table declares no gsis; declare it under table.gsis`},
		},
		{
			name: "index sk on a gsi without sort key",
			yaml: `
table:
  name: shop
  gsis: [{name: GSI1, partition_key: GSI1PK}]
entities:
  Order:
    source: {table: orders}
    pk: O
    sk: O
    indexes:
      GSI1: {pk: X, sk: Y}
`,
			want: []string{`m.yaml:10:25: entities.Order.indexes.GSI1.sk: index GSI1 has no sort key`},
		},
		{
			name: "index template for a table key attribute",
			yaml: `
table:
  name: shop
  gsis: [{name: Inverted, partition_key: SK, sort_key: PK}]
entities:
  Order:
    source: {table: orders}
    pk: O
    sk: O
    indexes:
      Inverted: {pk: X}
`,
			want: []string{`m.yaml:10:22: entities.Order.indexes.Inverted.pk: index Inverted's partition key is the table's key attribute "SK", written from the entity's own pk/sk: remove this template`},
		},
		{
			name: "index missing its pk template",
			yaml: `
table:
  name: shop
  gsis: [{name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK}]
entities:
  Order:
    source: {table: orders}
    pk: O
    sk: O
    indexes:
      GSI1: {sk: Y}
`,
			want: []string{`m.yaml:10:7: entities.Order.indexes.GSI1.pk: missing: expected the index partition key template, e.g. "ORDER#${order_id}"`},
		},

		// GSIs.
		{
			// NOTE: 4:11 is the ':' after "name", not the start of the list
			// item (4:5) or of "projection" (6:7); reported.
			name: "gsi with projection INCLUDE and no non_key_attributes",
			yaml: `
table:
  name: shop
  gsis:
    - name: GSI1
      partition_key: GSI1PK
      projection: INCLUDE
entities:
  A: {source: {table: a}, pk: A, sk: A}
`,
			want: []string{`m.yaml:4:7: table.gsis[0].non_key_attributes: projection INCLUDE needs at least one attribute`},
		},
		{
			name: "gsi with non_key_attributes and projection ALL",
			yaml: `
table:
  name: shop
  gsis:
    - name: GSI1
      partition_key: GSI1PK
      non_key_attributes: [email]
entities:
  A: {source: {table: a}, pk: A, sk: A}
`,
			want: []string{`m.yaml:6:7: table.gsis[0].non_key_attributes: non_key_attributes need projection INCLUDE`},
		},
		{
			name: "gsi with unknown projection",
			yaml: `
table:
  name: shop
  gsis:
    - name: GSI1
      partition_key: GSI1PK
      projection: all
entities:
  A: {source: {table: a}, pk: A, sk: A}
`,
			want: []string{`m.yaml:6:19: table.gsis[0].projection: unknown projection "all": expected ALL, KEYS_ONLY or INCLUDE`},
		},
		{
			name: "gsi problems",
			yaml: `
table:
  name: shop
  gsis:
    - {name: G1, partition_key: A}
    - {name: Dup, partition_key: A, sort_key: A}
    - {name: Dup}
entities:
  A: {source: {table: a}, pk: A, sk: A}
`,
			want: []string{
				`m.yaml:4:14: table.gsis[0].name: invalid index name "G1": expected 3-255 characters of a-z, A-Z, 0-9, '_', '-', '.'`,
				`m.yaml:5:47: table.gsis[1].sort_key: the sort key attribute "A" is also the partition key`,
				`m.yaml:6:7: table.gsis[2].partition_key: missing: expected the index's partition key attribute name`,
				`m.yaml:6:14: table.gsis[2].name: duplicate index name "Dup"`,
			},
		},

		// Attributes.
		{
			name: "rename to the partition key attribute",
			yaml: `
table:
  name: shop
entities:
  Order:
    source: {table: orders}
    pk: O
    sk: O
    attributes:
      rename:
        id: PK
`,
			want: []string{`m.yaml:10:13: entities.Order.attributes.rename.id: attribute name "PK" is a key or type attribute of the table: choose another name`},
		},
		{
			name: "rename to a gsi key, the type attribute, and nothing",
			yaml: `
table:
  name: shop
  gsis: [{name: GSI1, partition_key: GSI1PK}]
type_attribute: kind
entities:
  Order:
    source: {table: orders}
    pk: O
    sk: O
    attributes:
      rename: {a: GSI1PK, b: kind, c: "", d: type}
`,
			want: []string{
				`m.yaml:11:19: entities.Order.attributes.rename.a: attribute name "GSI1PK" is a key or type attribute of the table: choose another name`,
				`m.yaml:11:30: entities.Order.attributes.rename.b: attribute name "kind" is a key or type attribute of the table: choose another name`,
				`m.yaml:11:39: entities.Order.attributes.rename.c: empty attribute name: expected the new name of column "c"`,
			},
		},
		{
			name: "empty column names in select and exclude",
			yaml: `
table:
  name: shop
entities:
  Order:
    source: {table: orders}
    pk: O
    sk: O
    attributes:
      select: [a, ""]
      exclude: ["", b]
`,
			want: []string{
				`m.yaml:9:19: entities.Order.attributes.select[1]: empty column name`,
				`m.yaml:10:17: entities.Order.attributes.exclude[0]: empty column name`,
			},
		},

		// Table.
		{
			name: "invalid table name",
			yaml: `
table:
  name: my shop
entities:
  A: {source: {table: a}, pk: A, sk: A}
`,
			want: []string{`m.yaml:2:9: table.name: invalid table name "my shop": expected 3-255 characters of a-z, A-Z, 0-9, '_', '-', '.'`},
		},
		{
			name: "missing table",
			yaml: `
entities:
  A: {source: {table: a}, pk: A, sk: A}
`,
			want: []string{`m.yaml: table.name: missing: expected the DynamoDB table name`},
		},
		{
			name: "missing table name",
			yaml: `
table:
  partition_key: pk
entities:
  A: {source: {table: a}, pk: A, sk: A}
`,
			want: []string{`m.yaml:1:1: table.name: missing: expected the DynamoDB table name`},
		},
		{
			name: "sort key equal to partition key",
			yaml: `
table:
  name: shop
  sort_key: PK
entities:
  A: {source: {table: a}, pk: A, sk: A}
`,
			want: []string{`m.yaml:3:13: table.sort_key: the sort key attribute "PK" is also the partition key: expected two different attribute names`},
		},
		{
			name: "PROVISIONED without capacities",
			yaml: `
table:
  name: shop
  billing_mode: PROVISIONED
entities:
  A: {source: {table: a}, pk: A, sk: A}
`,
			want: []string{`m.yaml:3:17: table.billing_mode: PROVISIONED needs read_capacity and write_capacity above 0`},
		},
		{
			name: "PROVISIONED with one capacity and a gsi without",
			yaml: `
table:
  name: shop
  billing_mode: PROVISIONED
  read_capacity: 5
  gsis:
    - name: GSI1
      partition_key: GSI1PK
      read_capacity: 1
entities:
  A: {source: {table: a}, pk: A, sk: A}
`,
			want: []string{
				`m.yaml:3:17: table.billing_mode: PROVISIONED needs read_capacity and write_capacity above 0`,
				`m.yaml:6:7: table.gsis[0]: billing_mode PROVISIONED needs read_capacity and write_capacity above 0 on every GSI`,
			},
		},
		{
			name: "capacities without PROVISIONED",
			yaml: `
table:
  name: shop
  read_capacity: 5
  gsis:
    - {name: GSI1, partition_key: GSI1PK, write_capacity: 1}
entities:
  A: {source: {table: a}, pk: A, sk: A}
`,
			want: []string{
				`m.yaml:1:1: table.billing_mode: read_capacity and write_capacity need billing_mode PROVISIONED`,
				`m.yaml:5:7: table.gsis[0]: read_capacity and write_capacity need billing_mode PROVISIONED`,
			},
		},
		{
			name: "unknown billing mode",
			yaml: `
table:
  name: shop
  billing_mode: on-demand
entities:
  A: {source: {table: a}, pk: A, sk: A}
`,
			want: []string{`m.yaml:3:17: table.billing_mode: unknown billing mode "on-demand": expected PAY_PER_REQUEST or PROVISIONED`},
		},
		{
			name: "unsupported version",
			yaml: `
version: 2
table:
  name: shop
entities:
  A: {source: {table: a}, pk: A, sk: A}
`,
			want: []string{`m.yaml:1:10: version: unsupported version 2: expected 1`},
		},

		// Several at once: sorted by line, then column, whatever order the
		// checks run in (table, then entities in file order).
		{
			name: "several errors sorted by line",
			yaml: `
entities:
  Zeta:
    source: {table: z, query: q}
    pk: "${}"
  Alpha:
    pk: A
    sk: A
    indexes: {Nope: {pk: X}}
version: 3
table:
  name: t
  billing_mode: PROVISIONED
`,
			want: []string{
				`m.yaml:2:3: entities.Zeta.sk: missing: expected the sort key template, e.g. "ORDER#${order_id}"`,
				`m.yaml:3:5: entities.Zeta.source: both table and query given: expected exactly one`,
				`m.yaml:4:10: entities.Zeta.pk: template "${}": empty placeholder: expected "${column}" (at character 1)`,
				`m.yaml:5:3: entities.Alpha.source: missing: expected source.table or source.query`,
				`m.yaml:8:15: entities.Alpha.indexes.Nope: unknown index "Nope": the table declares no gsis; declare it under table.gsis`,
				`m.yaml:9:10: version: unsupported version 3: expected 1`,
				`m.yaml:11:9: table.name: invalid table name "t": expected 3-255 characters of a-z, A-Z, 0-9, '_', '-', '.'`,
				`m.yaml:12:17: table.billing_mode: PROVISIONED needs read_capacity and write_capacity above 0`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse("m.yaml", yml(tt.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded with entities %v, want errors:\n%s", entityNames(m), strings.Join(tt.want, "\n"))
			}
			if m != nil {
				t.Errorf("Parse returned a mapping along with the error")
			}
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error is %T (%v), want Errors", err, err)
			}
			got := strings.Split(errs.Error(), "\n")
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("errors mismatch (-want +got):\n%s", d)
			}
			for i, e := range errs {
				if e.File != "m.yaml" {
					t.Errorf("errs[%d].File = %q, want m.yaml", i, e.File)
				}
				if i > 0 && (e.Line < errs[i-1].Line || e.Line == errs[i-1].Line && e.Column < errs[i-1].Column) {
					t.Errorf("errs[%d] at %d:%d comes after errs[%d] at %d:%d", i, e.Line, e.Column, i-1, errs[i-1].Line, errs[i-1].Column)
				}
			}
		})
	}
}

func TestErrorsUnwrap(t *testing.T) {
	_, err := Parse("m.yaml", yml(`
table:
  name: t
entities:
  Order: {source: {table: orders}, pk: "O#${id", sk: O}
`))
	var es Errors
	if !errors.As(err, &es) || len(es) != 2 {
		t.Fatalf("want Errors with 2 errors, got %T: %v", err, err)
	}
	var first *Error
	if !errors.As(err, &first) {
		t.Fatalf("errors.As(*Error) failed on %v", err)
	}
	want := &Error{File: "m.yaml", Line: 2, Column: 9, Path: "table.name",
		Msg: `invalid table name "t": expected 3-255 characters of a-z, A-Z, 0-9, '_', '-', '.'`}
	if d := cmp.Diff(want, first); d != "" {
		t.Errorf("first error mismatch (-want +got):\n%s", d)
	}
	if es[1].Path != "entities.Order.pk" || es[1].Line != 4 {
		t.Errorf("second error = %+v, want entities.Order.pk on line 4", *es[1])
	}
}

func TestErrorString(t *testing.T) {
	tests := []struct {
		name string
		err  Error
		want string
	}{
		{"located with path", Error{File: "m.yaml", Line: 3, Column: 7, Path: "entities.A.pk", Msg: "bad"}, "m.yaml:3:7: entities.A.pk: bad"},
		{"located without path", Error{File: "m.yaml", Line: 1, Column: 1, Msg: "bad"}, "m.yaml:1:1: bad"},
		{"not located", Error{File: "m.yaml", Path: "table.name", Msg: "missing"}, "m.yaml: table.name: missing"},
		{"nothing but a message", Error{File: "m.yaml", Msg: "EOF"}, "m.yaml: EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
	if got, want := (Errors{&tests[0].err, &tests[2].err}).Error(), "m.yaml:3:7: entities.A.pk: bad\nm.yaml: table.name: missing"; got != want {
		t.Errorf("Errors.Error() = %q, want %q", got, want)
	}
	if got := Path("entities", "Order", "pk"); got != "entities.Order.pk" {
		t.Errorf("Path = %q", got)
	}
}

// TestParseEdgeCases holds inputs Parse once got wrong (found by review and
// FuzzParse); bug says what went wrong.
func TestParseEdgeCases(t *testing.T) {
	const ent = "    source: {table: a}\n    pk: A#${id}\n    sk: A\n"
	const head = "table:\n  name: shop\nentities:\n"
	tests := []struct {
		name  string
		bug   string
		yaml  string
		check func(t *testing.T, m *Mapping, err error)
	}{
		{
			name: "alias entity shares the aliased entity",
			bug:  "Parse (load.go, the entityOrder loop) takes the *Entity pointers of raw.Entities as they are; go-yaml decodes `B: *a` to the same pointer as A, so e.Name = \"B\" renames A and Entities holds one entity twice",
			yaml: head + "  A: &a\n" + ent + "  B: *a\n",
			check: func(t *testing.T, m *Mapping, err error) {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if d := cmp.Diff([]string{"A", "B"}, entityNames(m)); d != "" {
					t.Errorf("entities mismatch (-want +got):\n%s", d)
				}
				if m.Entities[0] == m.Entities[1] {
					t.Errorf("both entities are the same *Entity")
				}
				if a := m.Entity("A"); a == nil || a.Type != "A" {
					t.Errorf("Entity(A) = %+v, want Type A", a)
				}
			},
		},
		{
			name: "second YAML document duplicates an entity",
			bug:  "indexPositions (load.go) walks every document for entityOrder but the decoder reads only the first, so an entity named in both appears twice",
			yaml: head + "  A:\n" + ent + "---\nentities:\n  A: {}\n",
			check: func(t *testing.T, m *Mapping, err error) {
				if err == nil {
					if d := cmp.Diff([]string{"A"}, entityNames(m)); d != "" {
						t.Errorf("entities mismatch (-want +got):\n%s", d)
					}
				}
			},
		},
		{
			name: "second YAML document adds a phantom entity",
			bug:  "indexPositions and Parse (load.go): an entity only in the second document becomes an empty entity with three \"missing\" errors",
			yaml: head + "  A:\n" + ent + "---\nentities:\n  C: {source: {table: c}, pk: C, sk: C}\n",
			check: func(t *testing.T, m *Mapping, err error) {
				if err != nil && strings.Contains(err.Error(), "missing: expected source.table") {
					t.Errorf("errors claim a source is missing:\n%v", err)
				}
			},
		},
		{
			name: "null entity name",
			bug:  "walkPair (load.go) names the entity fmt.Sprint(nil) = \"<nil>\", which the decoded map does not have, so its fields are reported missing",
			yaml: head + "  ~:\n" + ent,
			check: func(t *testing.T, m *Mapping, err error) {
				if err == nil {
					t.Fatalf("Parse accepted an entity without a name: %v", entityNames(m))
				}
				if strings.Contains(err.Error(), "<nil>") || strings.Contains(err.Error(), "missing: expected source") {
					t.Errorf("error reports a phantom entity:\n%v", err)
				}
			},
		},
		{
			name: "empty entity name",
			bug:  "validateEntity (load.go) does not reject an empty entity name; items would get an empty type",
			yaml: head + "  \"\":\n" + ent,
			check: func(t *testing.T, m *Mapping, err error) {
				if err == nil {
					t.Errorf("Parse accepted entity %q with type %q", m.Entities[0].Name, m.Entities[0].Type)
				}
			},
		},
		{
			name: "type attribute is the partition key",
			bug:  "validate (load.go) does not check type_attribute against the key attributes; every item's type would overwrite its PK",
			yaml: "type_attribute: PK\n" + head + "  A:\n" + ent,
			check: func(t *testing.T, m *Mapping, err error) {
				want := "m.yaml:1:17: type_attribute: "
				if err == nil || !strings.HasPrefix(err.Error(), want) {
					t.Errorf("error = %v, want one starting %q", err, want)
				}
			},
		},
		{
			name: "UTF-8 byte order mark",
			bug:  "Parse does not strip a leading BOM: the first key becomes \"\\ufefftable\", reported as an unknown field that looks exactly like a known one",
			yaml: "\ufeff" + head + "  A:\n" + ent,
			check: func(t *testing.T, m *Mapping, err error) {
				if err != nil {
					t.Errorf("Parse: %v", err)
				}
			},
		},
	}
	t.Run("every unknown field is reported, in file order, every time", func(t *testing.T) {
		// go-yaml reports a random one of several unknown fields (map
		// iteration); Parse reports all, in file order. Regression:
		// testdata/fuzz/FuzzParse/4c3ee3cc5c2444ce.
		data := []byte("tables:\n  name: shop\nentitys:\n  A: {source: {table: a}, pk: A, sk: A}\n")
		want := `m.yaml:1:1: tables: unknown field "tables"; expected one of: version, name, table, type_attribute, library, entities, access_patterns` + "\n" +
			`m.yaml:3:1: entitys: unknown field "entitys"; expected one of: version, name, table, type_attribute, library, entities, access_patterns`
		for range 200 {
			if _, err := Parse("m.yaml", data); err == nil || err.Error() != want {
				t.Fatalf("error:\n%v\nwant:\n%s", err, want)
			}
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse("m.yaml", []byte(tt.yaml))
			tt.check(t, m, err)
		})
	}
}

func TestSourceString(t *testing.T) {
	tests := []struct {
		src  Source
		want string
	}{
		{Source{Table: "orders"}, "orders"},
		{Source{Schema: "sales", Table: "orders"}, "sales.orders"},
		{Source{Query: "SELECT 1"}, "the query"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.src.String(); got != tt.want {
				t.Errorf("%+v.String() = %q, want %q", tt.src, got, tt.want)
			}
			if got := tt.src.IsQuery(); got != (tt.src.Query != "") {
				t.Errorf("IsQuery() = %v", got)
			}
		})
	}
}

func TestValidTableName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"abc", true},
		{"my_table-v2.prod", true},
		{strings.Repeat("x", 255), true},
		{"ab", false},
		{"", false},
		{strings.Repeat("x", 256), false},
		{"my table", false},
		{"tâble", false},
		{"orders\n", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%.20q", tt.name), func(t *testing.T) {
			if got := ValidTableName(tt.name); got != tt.want {
				t.Errorf("ValidTableName(%q) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}
