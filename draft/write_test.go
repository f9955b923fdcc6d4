package draft

import (
	stdcmp "cmp"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// loaded ignores what Parse derives from a mapping file rather than reads
// from it: parsed templates, the file name, positions.
var loaded = cmp.Options{
	cmpopts.IgnoreUnexported(mapping.Mapping{}),
	cmpopts.IgnoreFields(mapping.Mapping{}, "File"),
	cmpopts.IgnoreFields(mapping.Entity{}, "PKTemplate", "SKTemplate", "IndexTemplate"),
	cmpopts.IgnoreFields(mapping.Mirror{}, "PKTemplate", "SKTemplate"),
	cmpopts.IgnoreFields(mapping.AccessPattern{}, "Condition", "FilterExpr"),
}

// withDefaults sets in m, as Load does, what the file leaves to defaults.
func withDefaults(m *mapping.Mapping) *mapping.Mapping {
	t := &m.Table
	t.PartitionKey = stdcmp.Or(t.PartitionKey, mapping.DefaultPartitionKey)
	t.SortKey = stdcmp.Or(t.SortKey, mapping.DefaultSortKey)
	t.BillingMode = stdcmp.Or(t.BillingMode, mapping.PayPerRequest)
	for i := range t.GSIs {
		t.GSIs[i].Projection = stdcmp.Or(t.GSIs[i].Projection, mapping.ProjectAll)
	}
	m.TypeAttribute = stdcmp.Or(m.TypeAttribute, mapping.DefaultTypeAttribute)
	for _, e := range m.Entities {
		e.Type = stdcmp.Or(e.Type, e.Name)
		for _, em := range e.Embed {
			em.As = stdcmp.Or(em.As, mapping.EmbedList)
		}
	}
	return m
}

// roundTrip writes d and requires the file to load to the mapping build
// drafts, defaults applied.
func roundTrip(t *testing.T, d *Design) []byte {
	t.Helper()
	text, got := write(t, d)
	want, _ := build(d)
	if diff := cmp.Diff(withDefaults(want), got, loaded); diff != "" {
		t.Errorf("the draft loads to another mapping than the one built (-built +loaded):\n%s\n%s", diff, text)
	}
	return []byte(text)
}

// TestWriteRoundTrip drafts catalogs of every shape Propose knows (owned,
// child, embedded, join, counted, duplicated, left out, a type column,
// another schema, names YAML must quote) and requires each file to load
// to the mapping built.
func TestWriteRoundTrip(t *testing.T) {
	customers := table("customers", 100, []string{"id"}, "id integer!", "name text!", "type text", "password text")
	shippers := table("shippers", 3, []string{"id"}, "id integer!", "name text!")
	orders := table("orders", 1000, []string{"id"}, "id integer!", "customer_id integer!", "shipper_id integer!")
	fk(orders, shippers, []string{"shipper_id"}, 1000, 3, 400)
	fk(orders, customers, []string{"customer_id"}, 1000, 90, 30)
	lines := table("order_lines", 3000, []string{"id"}, "id integer!", "order_id integer!", "product_id integer!")
	products := table("products", 3000, []string{"id"}, "id integer!", "title varchar(60)!")
	fk(lines, products, []string{"product_id"}, 3000, 2900, 2)
	fk(lines, orders, []string{"order_id"}, 3000, 1000, 8)
	addresses := table("addresses", 150, []string{"id"}, "id integer!", "customer_id integer!", "city text", "api_token text")
	fk(addresses, customers, []string{"customer_id"}, 150, 90, EmbedMaxChildren)
	tags := table("product_tags", 80, []string{"product_id", "tag_id"}, "product_id integer!", "tag_id integer!")
	tagsT := table("tags", 10, []string{"id"}, "id integer!", "name text!")
	fk(tags, products, []string{"product_id"}, 80, 40, 3)
	fk(tags, tagsT, []string{"tag_id"}, 80, 10, 20)
	logs := table("logs", 5, nil, "message text")
	shop := &Catalog{Database: "shop", Schemas: []string{"public"}, Exclude: []string{"tmp_*"},
		Tables: []*Table{addresses, customers, logs, lines, orders, tags, products, shippers, tagsT}}

	// Names YAML must quote, in a schema not the default.
	odd := table("line\nbreak", 2, []string{"a$b"}, "a$b integer!", "yes text")
	odd.Schema = "sales"
	menu := table("Café Menü", 3, []string{"id"}, "id integer!", "Order Item integer")
	menu.Schema = "sales"
	items := table("日本語テーブル", 12, []string{"Item ID"}, "Item ID integer!", "no integer!", "y text")
	items.Schema = "sales"
	fk(items, menu, []string{"no"}, 12, 3, 4)
	fk(menu, odd, []string{"Order Item"}, 2, 2, 1)
	names := &Catalog{Database: "names\"db", Schemas: []string{"sales"}, Tables: []*Table{odd, menu, items}}

	for _, c := range []struct {
		name string
		cat  *Catalog
		opts Options
	}{
		{"shop", shop, Options{DuplicateNames: true}},
		{"names", names, Options{Table: "names"}},
	} {
		t.Run(c.name, func(t *testing.T) { roundTrip(t, Propose(c.cat, c.opts)) })
	}
}

// TestMarshalGoldens marshals the mapping of each init golden file and
// requires the output to load to that mapping again.
func TestMarshalGoldens(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "app", "testdata", "init", "*.yaml.golden"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want, err := mapping.Parse(f, data)
			if err != nil {
				t.Fatal(err)
			}
			out, err := marshal(want, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := mapping.Parse("marshalled", out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if diff := cmp.Diff(want, got, loaded); diff != "" {
				t.Errorf("(-golden +marshalled):\n%s\n%s", diff, out)
			}
		})
	}
}
