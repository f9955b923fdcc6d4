package draft

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// shop is a catalog of customers, their orders and the orders' lines.
func shop() *Catalog {
	col := func(name, typ string, notNull bool) Column { return Column{Name: name, Type: typ, NotNull: notNull} }
	customers := &Table{Schema: "public", Name: "customers", PrimaryKey: []string{"customer_id"}, Rows: 3, Columns: []Column{
		col("customer_id", "integer", true), col("email", "text", true), col("nickname", "text", false)}}
	orders := &Table{Schema: "public", Name: "orders", PrimaryKey: []string{"order_id"}, Rows: 5, Columns: []Column{
		col("order_id", "integer", true), col("customer_id", "integer", true), col("placed_at", "timestamp with time zone", true)}}
	lines := &Table{Schema: "public", Name: "order_lines", PrimaryKey: []string{"order_id", "line_no"}, Rows: 9, Columns: []Column{
		col("order_id", "integer", true), col("line_no", "integer", true), col("sku", "text", true)}}
	orders.ForeignKeys = []*ForeignKey{{Name: "orders_customer", Columns: []string{"customer_id"}, RefSchema: "public", RefTable: "customers",
		RefColumns: []string{"customer_id"}, columnsNotNull: true, valid: true, Fanout: Fanout{Children: 5, Parents: 3, Max: 2}}}
	lines.ForeignKeys = []*ForeignKey{{Name: "lines_order", Columns: []string{"order_id"}, RefSchema: "public", RefTable: "orders",
		RefColumns: []string{"order_id"}, columnsNotNull: true, valid: true, Fanout: Fanout{Children: 9, Parents: 5, Max: 3}}}
	tags := &Table{Schema: "public", Name: "order_tags", PrimaryKey: []string{"order_id", "tag"}, Rows: 4, Columns: []Column{
		col("order_id", "integer", true), col("tag", "text", true)}}
	tags.ForeignKeys = []*ForeignKey{{Name: "tags_order", Columns: []string{"order_id"}, RefSchema: "public", RefTable: "orders",
		RefColumns: []string{"order_id"}, columnsNotNull: true, valid: true, Fanout: Fanout{Children: 4, Parents: 2, Max: 2}}}
	return &Catalog{Database: "shop", Schemas: []string{"public"}, Tables: []*Table{customers, orders, lines, tags}}
}

const shopDesign = `{"tables": [{
  "table_config": {"table_name": "Shop", "partition_key": "PK", "sort_key": "SK"},
  "gsi_list": [{"name": "ByEmail", "partition_key": "GSI1PK"}],
  "entities": {
    "CustomerOrder": {"entity_type": "CUSTOMER_ORDER", "pk_template": "CUSTOMER#{customer_id}", "sk_template": "ORDER#{placed_at}#{order_id}",
      "fields": [{"name": "customer_id", "type": "integer"}, {"name": "order_id", "type": "integer"}, {"name": "placed_at", "type": "string"},
        {"name": "customer_email", "type": "string"}, {"name": "line_count", "type": "integer"}, {"name": "lines", "type": "array", "item_type": "object"},
        {"name": "tags", "type": "array", "item_type": "string"}],
      "access_patterns": [
        {"pattern_id": 1, "name": "history", "operation": "Query", "parameters": [{"name": "customer_id", "type": "integer"}]},
        {"pattern_id": 2, "name": "since", "operation": "Query", "range_condition": ">=", "parameters": [{"name": "customer_id", "type": "integer"}, {"name": "t", "type": "string"}]},
        {"pattern_id": 3, "name": "until", "operation": "Query", "range_condition": "<", "parameters": [{"name": "customer_id", "type": "integer"}, {"name": "t", "type": "string"}]},
        {"pattern_id": 4, "name": "window", "operation": "Query", "range_condition": "between", "parameters": [{"name": "customer_id", "type": "integer"}, {"name": "a", "type": "string"}, {"name": "b", "type": "string"}]},
        {"pattern_id": 5, "name": "month", "operation": "Query", "range_condition": "begins_with", "parameters": [{"name": "customer_id", "type": "integer"}, {"name": "m", "type": "string"}]},
        {"pattern_id": 6, "name": "place", "operation": "PutItem", "parameters": []}]},
    "Customer": {"entity_type": "CUSTOMER", "pk_template": "CUSTOMER#{customer_id}", "sk_template": "PROFILE",
      "gsi_mappings": [{"name": "ByEmail", "pk_template": "EMAIL#{email}"}],
      "fields": [{"name": "customer_id", "type": "integer"}, {"name": "email", "type": "string"}, {"name": "order_count", "type": "integer"},
        {"name": "customer_nickname", "type": "string"}, {"name": "points", "type": "integer"}],
      "access_patterns": [
        {"pattern_id": 7, "name": "get", "operation": "GetItem", "parameters": [{"name": "customer_id", "type": "integer"}]},
        {"pattern_id": 8, "name": "by_email", "operation": "Query", "index_name": "ByEmail", "parameters": [{"name": "email", "type": "string"}]}]}
  }}]}`

// BindDesign puts each designed entity over the table of its key and
// fields (the order history over orders), fills the other fields with a
// duplicate, a count, a list embed and a set embed, translates the range
// conditions, lists the field nothing fills, and writes a mapping that
// loads.
func TestBindDesign(t *testing.T) {
	d := parseBrief(t, shopDesign)
	if got := []string{d.Tables[0].Entities[0].Name, d.Tables[0].Entities[1].Name}; !cmp.Equal(got, []string{"CustomerOrder", "Customer"}) {
		t.Errorf("entities in order %v, want the file's", got)
	}
	b := BindDesign(shop(), d.Tables[0], "")
	var out bytes.Buffer
	if err := WriteBound(&out, b, "schema.json"); err != nil {
		t.Fatal(err)
	}
	y := out.String()
	for _, want := range []string{
		// The design's key text: numbers as plain digits (CUSTOMER#1), as
		// the design's generated code writes them, never zero-padded.
		"  CustomerOrder:\n    source: {query: \"SELECT \\\"order_id\\\", \\\"customer_id\\\", \\\"placed_at\\\"::text AS \\\"placed_at\\\" FROM \\\"public\\\".\\\"orders\\\"\"}\n    pk: \"CUSTOMER#${customer_id:0}\"\n    sk: \"ORDER#${placed_at}#${order_id:0}\"",
		// placed_at, a string over a timestamptz in a key, is read as
		// PostgreSQL's text: its key text and its attribute are the same.
		"TYPE: placed_at is a string in the design over a column of type timestamp with time zone: the query source reads it as PostgreSQL's text",
		"\n    type: CUSTOMER_ORDER\n    embed:\n",
		"attributes: {select: [email], rename: {email: customer_email}}",
		"line_count: {function: count, source: {table: order_lines}, join: {order_id: order_id}}",
		"order_count: {function: count, source: {table: orders}, join: {customer_id: customer_id}}",
		"      lines:\n        source: {table: order_lines}\n        join: {order_id: order_id}\n        order_by: [line_no]\n        attributes: {exclude: [order_id]}",
		"      tags:\n        source: {table: order_tags}\n        join: {order_id: order_id}\n        # an array of values: a set of tag (no duplicates, no order)\n        as: set\n        attributes: {select: [tag]}",
		"rename: {nickname: customer_nickname}",
		`ByEmail: {pk: "EMAIL#${email}"}`,
		`"PK = CUSTOMER#${customer_id:0} AND begins_with(SK, ORDER#)"`,
		`"PK = CUSTOMER#${customer_id:0} AND SK >= ORDER#${placed_at}"`,
		`"PK = CUSTOMER#${customer_id:0} AND SK < ORDER#${placed_at}#${order_id:0}"`,
		`"PK = CUSTOMER#${customer_id:0} AND SK BETWEEN ORDER#${placed_at} AND ORDER#${placed_at}#${order_id:0}"`,
		`"PK = CUSTOMER#${customer_id:0} AND begins_with(SK, ORDER#${placed_at})"`,
		`"PK = CUSTOMER#${customer_id:0} AND SK = PROFILE"`,
		`    index: ByEmail` + "\n" + `    key_condition: "GSI1PK = EMAIL#${email}"`,
		"ORDER: sort key SK holds {order_id}, a number written as plain digits",
		"# - place (entity CustomerOrder): a write (PutItem)",
		"# UNBOUND field points: customers has no column points",
	} {
		if !strings.Contains(y, want) {
			t.Errorf("the draft lacks\n%s\n---\n%s", want, y)
		}
	}
	if want := []Unbound{{"entity Customer, field points", "customers has no column points, no parent reached by a foreign key has one (there is none), and no child table counts or fills it"}}; !cmp.Equal(b.Unbound, want) {
		t.Errorf("unbound %v, want %v", b.Unbound, want)
	}
	if _, err := mapping.ParseContext(context.Background(), "draft", out.Bytes()); err != nil {
		t.Errorf("the draft does not load: %v\n%s", err, y)
	}
}

// A template's literal '$' is escaped, a field no column gives is
// reported, a number is written as plain digits (${c:0}) or with the
// design's zero-padding ({n:05d} → ${c:5}), an enum as its text (${c:0},
// which a sort key accepts), and a format spec pg2dynamo cannot render is
// reported.
func TestTranslateTemplate(t *testing.T) {
	place := func(f string) (keyColumn, bool) {
		return keyColumn{Name: "c_" + f, Number: f == "n" || f == "m", Plain: f == "s"}, f != "y"
	}
	for _, c := range []struct {
		tpl, want            string
		missing, unsupported []string
	}{
		{"A$#{x}#{y}", "A$$#${c_x}#${c_y}", []string{"y"}, nil},
		{"CUSTOMER#{n}", "CUSTOMER#${c_n:0}", nil, nil},
		{"STATUS#{s}#{x}", "STATUS#${c_s:0}#${c_x}", nil, nil},
		{"S#{n:05d}#{m:d}#{x}", "S#${c_n:5}#${c_m:0}#${c_x}", nil, nil},
		{"P#{n:.2f}#{x:>10}", "P#${c_n}#${c_x}", nil, []string{"{n:.2f}", "{x:>10}"}},
	} {
		got, missing, unsupported := translateTemplate(c.tpl, place)
		if got != c.want || !cmp.Equal(missing, c.missing) || !cmp.Equal(unsupported, c.unsupported) {
			t.Errorf("%s: got %q, missing %v, unsupported %v; want %q, %v, %v", c.tpl, got, missing, unsupported, c.want, c.missing, c.unsupported)
		}
	}
	if p := templatePrefix("ORDER#{a}#{b}"); p != "ORDER#{a}" {
		t.Errorf("templatePrefix: %q", p)
	}
	if p := literalPrefix("{a}#X"); p != "" {
		t.Errorf("literalPrefix: %q", p)
	}
}

// ParseMCPDesign reports every problem of the file, each at its place.
func TestParseMCPDesignErrors(t *testing.T) {
	_, err := ParseMCPDesign([]byte(`{"tables": [{"table_config": {"table_name": "T", "partition_key": "PK"},
	  "entities": {"E": {"pk_template": "E#{id}", "fields": [{"name": "x", "type": "string"}],
	    "gsi_mappings": [{"name": "G", "pk_template": "G"}],
	    "access_patterns": [{"name": "p", "operation": "Query", "index_name": "H", "range_condition": "~"}]}}}]}`))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`tables[0].entities.E.pk_template.id: template parameter "id" is not a field of entity E`,
		`tables[0].entities.E.gsi_mappings[0].name: GSI "G" is not in the table's gsi_list`,
		`tables[0].entities.E.access_patterns[0].index_name: access pattern reads GSI "H", which is not in the table's gsi_list`,
		`tables[0].entities.E.access_patterns[0].range_condition: invalid range_condition "~"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if _, err := ParseMCPDesign([]byte(`{"tables": []}`)); err == nil || !strings.Contains(err.Error(), "tables: tables cannot be empty") {
		t.Errorf("empty design: %v", err)
	}
}

// A design whose key attribute is a field ("partition_key": "customer_id",
// pk_template "{customer_id}") writes the field as that key attribute only;
// a field named like another key attribute is renamed, and a field named
// "type" moves the entity type to entity_type.
func TestBindDesignKeyAttributeFields(t *testing.T) {
	d := parseBrief(t, `{"tables": [{
	  "table_config": {"table_name": "Customers", "partition_key": "customer_id", "sort_key": "email"},
	  "entities": {"Customer": {"entity_type": "CUSTOMER", "pk_template": "{customer_id}", "sk_template": "PROFILE#{email}",
	    "fields": [{"name": "customer_id", "type": "integer"}, {"name": "email", "type": "string"}, {"name": "nickname", "type": "string"}, {"name": "type", "type": "string"}]}}}]}`)
	cat := shop()
	cat.Tables[0].Columns = append(cat.Tables[0].Columns, Column{Name: "type", Type: "text"})
	b := BindDesign(cat, d.Tables[0], "")
	var out bytes.Buffer
	if err := WriteBound(&out, b, "schema.json"); err != nil {
		t.Fatal(err)
	}
	e := b.Entities[0]
	if b.TypeAttribute != "entity_type" {
		t.Errorf("type attribute %q, want entity_type", b.TypeAttribute)
	}
	if !cmp.Equal(e.Select, []string{"email", "nickname", "type"}) || !cmp.Equal(e.Rename, map[string]string{"email": "email_"}) || !cmp.Equal(e.Dropped, []string{"customer_id"}) {
		t.Errorf("select %v, rename %v, dropped %v", e.Select, e.Rename, e.Dropped)
	}
	if _, err := mapping.ParseContext(context.Background(), "draft", out.Bytes()); err != nil {
		t.Errorf("the draft does not load: %v\n%s", err, out.String())
	}
}

// parseBrief parses a design written for a binding test, which leaves out
// for brevity what the format requires but binding does not read (each
// field's required, each pattern's description and return_type): only
// such omissions are tolerated.
func parseBrief(t *testing.T, s string) *MCPDesign {
	t.Helper()
	d, err := ParseMCPDesign([]byte(s))
	var errs DesignErrors
	if err != nil && !errors.As(err, &errs) {
		t.Fatal(err)
	}
	for _, e := range errs {
		k := e.Path[strings.LastIndexByte(e.Path, '.')+1:]
		if !strings.HasPrefix(e.Msg, "missing required field") || !slices.Contains([]string{"required", "description", "return_type", "entity_type"}, k) {
			t.Fatalf("the design has a mistake: %v", e)
		}
	}
	return d
}

// A field whose type its column cannot hold is unbound, naming the field,
// the column and its type: an integer on text, a boolean on text, an
// array on a scalar, an integer on a numeric with a fraction. A string
// over a number column binds: read as text through a query source, so
// that its attribute is an S, unless a join of the entity compares the
// column (customer_id, which order_count's count joins on): that one
// keeps its type, with a note.
func TestBindDesignFieldTypes(t *testing.T) {
	d := parseBrief(t, `{"tables": [{
	  "table_config": {"table_name": "Shop", "partition_key": "PK", "sort_key": "SK"},
	  "entities": {"Customer": {"entity_type": "CUSTOMER", "pk_template": "CUSTOMER#{customer_id}", "sk_template": "PROFILE",
	    "fields": [{"name": "customer_id", "type": "string"}, {"name": "email", "type": "integer"},
	               {"name": "nickname", "type": "boolean"}, {"name": "tier", "type": "array", "item_type": "string"},
	               {"name": "balance", "type": "integer"}, {"name": "joined", "type": "string"},
	               {"name": "zip", "type": "string"}, {"name": "order_count", "type": "integer"}]}}}]}`)
	cat := shop()
	cat.Tables[0].Columns = append(cat.Tables[0].Columns, Column{Name: "tier", Type: "text"}, Column{Name: "balance", Type: "numeric(10,2)"},
		Column{Name: "joined", Type: "date"}, Column{Name: "zip", Type: "integer"})
	b := BindDesign(cat, d.Tables[0], "")
	want := []Unbound{
		{"entity Customer, field email", "customers.email: field email is typed integer in the design, but the column is text: the generated code could not parse its values as integer; change the field's type or the column"},
		{"entity Customer, field nickname", "customers.nickname: field nickname is typed boolean in the design, but the column is text: the generated code could not parse its values as boolean; change the field's type or the column"},
		{"entity Customer, field tier", "customers.tier: field tier is typed array in the design, but the column is text: the generated code could not parse its values as array; change the field's type or the column"},
		{"entity Customer, field balance", "customers.balance: field balance is typed integer in the design, but the column is numeric(10,2): the generated code could not parse its values as integer; change the field's type or the column"},
	}
	if d := cmp.Diff(want, b.Unbound); d != "" {
		t.Errorf("unbound (-want +got):\n%s", d)
	}
	e := b.Entities[0]
	if e.Table == nil || !slices.Contains(e.Select, "joined") || e.PK != "CUSTOMER#${customer_id:0}" {
		t.Fatalf("entity %+v", e)
	}
	if !cmp.Equal(e.Casts, []string{"zip"}) {
		t.Errorf("casts %v, want [zip]", e.Casts)
	}
	wantQuery := `SELECT "customer_id", "email", "nickname", "tier", "balance", "joined", "zip"::text AS "zip" FROM "public"."customers"`
	if got := entitySource(e); got.Query != wantQuery {
		t.Errorf("source %+v, want the query %s", got, wantQuery)
	}
	for _, n := range []string{
		"TYPE: zip is a string in the design over a column of type integer: the query source reads it as PostgreSQL's text, so that its attribute is that S and its keys the same text",
		"TYPE: customer_id is a string in the design over a column of type integer, which a join of this entity compares with another table's",
	} {
		if !slices.ContainsFunc(e.Notes, func(s string) bool { return strings.HasPrefix(s, n) }) {
			t.Errorf("no note %q: %q", n, e.Notes)
		}
	}
	var out bytes.Buffer
	if err := WriteBound(&out, b, "schema.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := mapping.ParseContext(context.Background(), "draft", out.Bytes()); err != nil {
		t.Errorf("the draft does not load: %v\n%s", err, out.String())
	}
}

// Table choice: among the tables holding an entity's key fields, the one
// named exactly as the entity, then alike but for case and singular or
// plural (Titles → titles, not archived_titles with the same columns);
// without a name match, the most fields; a tie is unbound, listing the
// candidates with their evidence.
func TestBindDesignTableChoice(t *testing.T) {
	cols := []string{"show_id integer!", "title text!", "country text"}
	catalog := func(names ...string) *Catalog {
		c := &Catalog{Database: "films", Schemas: []string{"public"}}
		for _, n := range names {
			c.Tables = append(c.Tables, table(n, 10, []string{"show_id"}, cols...))
		}
		return c
	}
	design := func(entity string) *MCPTable {
		return parseBrief(t, `{"tables": [{"table_config": {"table_name": "Films", "partition_key": "PK", "sort_key": "SK"},
		  "entities": {"`+entity+`": {"entity_type": "TITLE", "pk_template": "TITLE#{show_id}", "sk_template": "TITLE",
		    "fields": [{"name": "show_id", "type": "integer"}, {"name": "title", "type": "string"}]}}}]}`).Tables[0]
	}
	for _, c := range []struct {
		entity string
		tables []string
		want   string
		why    string
	}{
		{"Titles", []string{"archived_titles", "titles"}, "titles", "named alike; "},
		{"titles", []string{"Titles", "titles", "archived_titles"}, "titles", "named exactly so; "},
		{"Title", []string{"archived_titles", "TITLES"}, "TITLES", "named alike; "},
		{"Show", []string{"archived_titles", "titles"}, "", `2 tables hold its key fields (show_id) equally well: archived_titles (2 of its 2 fields are columns, not named alike); titles (2 of its 2 fields are columns, not named alike)`},
		{"Title", []string{"title", "titles"}, "", `2 tables hold its key fields (show_id) equally well: title (2 of its 2 fields are columns, named alike (case, singular or plural)); titles (2 of its 2 fields are columns, named alike (case, singular or plural))`},
	} {
		b := BindDesign(catalog(c.tables...), design(c.entity), "")
		e := b.Entities[0]
		switch {
		case c.want == "":
			if e.Table != nil || len(b.Unbound) != 1 || !strings.HasPrefix(b.Unbound[0].Why, c.why) {
				t.Errorf("%s over %v: table %v, unbound %v; want unbound: %s", c.entity, c.tables, e.Table, b.Unbound, c.why)
			}
		case e.Table == nil || e.Table.Name != c.want || !strings.HasPrefix(e.Why, c.why):
			t.Errorf("%s over %v: %v (%s), unbound %v; want %s (%s…)", c.entity, c.tables, e.Table, e.Why, b.Unbound, c.want, c.why)
		}
	}
}

// A GSI key attribute that is one of the table's is written once, from the
// item's own key: its template is left out of the index when it renders
// the same text, and the mapping is unbound when it does not. An entity
// whose key field is unbound (a type its column cannot hold) is unbound
// too, rather than drafted with a key that does not render.
func TestBindDesignGSIOnTableKeys(t *testing.T) {
	d := parseBrief(t, `{"tables": [{
	  "table_config": {"table_name": "Shop", "partition_key": "PK", "sort_key": "SK"},
	  "gsi_list": [{"name": "BySK", "partition_key": "EMAIL", "sort_key": "SK"}, {"name": "Other", "partition_key": "X", "sort_key": "SK"}],
	  "entities": {
	    "Customer": {"entity_type": "CUSTOMER", "pk_template": "CUSTOMER#{customer_id}", "sk_template": "PROFILE",
	      "gsi_mappings": [{"name": "BySK", "pk_template": "{email}", "sk_template": "PROFILE"},
	                       {"name": "Other", "pk_template": "{email}", "sk_template": "P#{customer_id}"}],
	      "fields": [{"name": "customer_id", "type": "integer"}, {"name": "email", "type": "string"}]},
	    "CustomerOrder": {"entity_type": "ORDER", "pk_template": "CUSTOMER#{customer_id}", "sk_template": "ORDER#{order_id}",
	      "fields": [{"name": "customer_id", "type": "integer"}, {"name": "order_id", "type": "boolean"}]}}}]}`)
	b := BindDesign(shop(), d.Tables[0], "")
	c := b.Entities[0]
	if ix := c.index("BySK"); ix == nil || ix.PK != "${email}" || ix.SK != "" {
		t.Errorf("BySK %+v, want pk ${email} and no sk", ix)
	}
	want := []Unbound{
		{"entity Customer, GSI Other", `its key attribute SK is the table's, which the item's own key writes as "PROFILE", but its template gives "P#${customer_id:0}": one attribute holds one value`},
		{"entity CustomerOrder, field order_id", "orders.order_id: field order_id is typed boolean in the design, but the column is integer: the generated code could not parse its values as boolean; change the field's type or the column"},
		{"entity CustomerOrder", "its key templates hold order_id, which are unbound (listed with its fields)"},
	}
	if d := cmp.Diff(want, b.Unbound); d != "" {
		t.Errorf("unbound (-want +got):\n%s", d)
	}
	if b.Entities[1].Table != nil {
		t.Errorf("CustomerOrder bound over %s", b.Entities[1].Table.Name)
	}
}

// A design table without a sort key binds (sort_key: "" in the mapping,
// a GetItem on the partition key alone), and a GSI with multi-attribute
// keys binds as partition_keys/sort_keys when each template is its field
// alone: numbers typed N, its Query patterns as equalities on the
// partition key attributes, then the sort key attributes from the left,
// the range on the last one the parameters reach. A template with text
// leaves the entity out of the index, unbound.
func TestBindDesignNoSortKeyMultiAttribute(t *testing.T) {
	d := parseBrief(t, `{"tables": [{
	  "table_config": {"table_name": "Orders", "partition_key": "order_id"},
	  "gsi_list": [{"name": "ByCustomer", "partition_key": "customer_id", "sort_key": ["placed_at"]},
	               {"name": "ByOrder", "partition_key": ["customer_id"], "sort_key": ["placed_at", "order_id"]},
	               {"name": "Tagged", "partition_key": ["customer_id"]}],
	  "entities": {
	    "Order": {"entity_type": "ORDER", "pk_template": "{order_id}",
	      "gsi_mappings": [{"name": "ByCustomer", "pk_template": "{customer_id}", "sk_template": ["{placed_at}"]},
	                       {"name": "ByOrder", "pk_template": ["{customer_id}"], "sk_template": ["{placed_at}", "{order_id}"]},
	                       {"name": "Tagged", "pk_template": ["C#{customer_id}"]}],
	      "fields": [{"name": "order_id", "type": "integer"}, {"name": "customer_id", "type": "integer"}, {"name": "placed_at", "type": "string"}],
	      "access_patterns": [
	        {"pattern_id": 1, "name": "get", "operation": "GetItem", "parameters": [{"name": "order_id", "type": "integer"}]},
	        {"pattern_id": 2, "name": "all", "operation": "Query", "index_name": "ByCustomer", "parameters": [{"name": "customer_id", "type": "integer"}]},
	        {"pattern_id": 3, "name": "since", "operation": "Query", "index_name": "ByCustomer", "range_condition": ">=",
	         "parameters": [{"name": "customer_id", "type": "integer"}, {"name": "since", "type": "string"}]}]}}}]}`)
	b := BindDesign(shop(), d.Tables[0], "")
	want := []Unbound{
		{"GSI ByOrder", "its key attribute order_id is the table's, which pg2dynamo renders from key templates; its multi-attribute keys are the items' own attributes"},
		{"entity Order, GSI Tagged", `template "C#{customer_id}" of key attribute customer_id: a multi-attribute key attribute holds one field's value itself ({field})`},
	}
	if d := cmp.Diff(want, b.Unbound); d != "" {
		t.Errorf("unbound (-want +got):\n%s", d)
	}
	conds := map[string]string{}
	for _, p := range b.Patterns {
		conds[p.Name] = p.KeyCondition
	}
	wantConds := map[string]string{"get": "order_id = ${order_id}", "all": "customer_id = ${customer_id}",
		"since": "customer_id = ${customer_id} AND placed_at >= ${placed_at}"}
	if d := cmp.Diff(wantConds, conds); d != "" {
		t.Errorf("key conditions (-want +got):\n%s", d)
	}
	var out bytes.Buffer
	if err := WriteBound(&out, b, "design.json"); err != nil {
		t.Fatal(err)
	}
	m, err := mapping.Parse("draft.yaml", out.Bytes())
	if err != nil {
		t.Fatalf("the draft does not load: %v\n%s", err, out.String())
	}
	g := m.Table.GSI("ByCustomer")
	if m.Table.SortKey != "" || g == nil || fmt.Sprint(g.PartitionKeys, g.SortKeys) != "[{customer_id N}] [{placed_at S}]" {
		t.Errorf("table sort key %q, ByCustomer %+v\n%s", m.Table.SortKey, g, out.String())
	}
}

// A mixed_data Query reads the item collection, on the partition key
// alone, while an entity_list Query keeps to its entity's sort key prefix;
// the GSIs keep the design's projections; a cross-table TransactGet is
// unbound by name, a cross-table TransactWrite is a write not translated.
func TestBindDesignCollectionProjectionCrossTable(t *testing.T) {
	d := parseBrief(t, `{"tables": [{
	  "table_config": {"table_name": "Shop", "partition_key": "PK", "sort_key": "SK"},
	  "gsi_list": [{"name": "ByEmail", "partition_key": "GSI1PK", "projection": "KEYS_ONLY"},
	               {"name": "ByNick", "partition_key": "GSI2PK", "projection": "INCLUDE", "included_attributes": ["email"]},
	               {"name": "ByAll", "partition_key": "GSI3PK"}],
	  "entities": {
	    "Customer": {"entity_type": "CUSTOMER", "pk_template": "CUSTOMER#{customer_id}", "sk_template": "#PROFILE",
	      "gsi_mappings": [{"name": "ByEmail", "pk_template": "EMAIL#{email}"}, {"name": "ByNick", "pk_template": "N#{email}"},
	                       {"name": "ByAll", "pk_template": "A#{email}"}],
	      "fields": [{"name": "customer_id", "type": "integer", "required": true}, {"name": "email", "type": "string", "required": true}],
	      "access_patterns": [
	        {"pattern_id": 1, "name": "customer_and_orders", "operation": "Query", "return_type": "mixed_data", "parameters": [{"name": "customer_id", "type": "integer"}]},
	        {"pattern_id": 2, "name": "customer_and_orders_by_email", "operation": "Query", "index_name": "ByEmail", "return_type": "mixed_data", "parameters": [{"name": "email", "type": "string"}]}]},
	    "CustomerOrder": {"entity_type": "ORDER", "pk_template": "CUSTOMER#{customer_id}", "sk_template": "ORDER#{order_id}",
	      "fields": [{"name": "customer_id", "type": "integer", "required": true}, {"name": "order_id", "type": "integer", "required": true}],
	      "access_patterns": [
	        {"pattern_id": 3, "name": "orders", "operation": "Query", "return_type": "entity_list", "parameters": [{"name": "customer_id", "type": "integer"}]}]}}},
	  {"table_config": {"table_name": "Other", "partition_key": "PK"},
	   "entities": {"Thing": {"entity_type": "THING", "pk_template": "T#{id}", "fields": [{"name": "id", "type": "string", "required": true}]}}}],
	  "cross_table_access_patterns": [
	    {"pattern_id": 100, "name": "read_both", "description": "d", "operation": "TransactGet", "return_type": "object", "parameters": [],
	     "entities_involved": [{"table": "Shop", "entity": "Customer", "action": "Get"}, {"table": "Other", "entity": "Thing", "action": "Get"}]},
	    {"pattern_id": 101, "name": "write_both", "description": "d", "operation": "TransactWrite", "return_type": "boolean", "parameters": [],
	     "entities_involved": [{"table": "Shop", "entity": "Customer", "action": "Put"}, {"table": "Other", "entity": "Thing", "action": "Put"}]},
	    {"pattern_id": 102, "name": "elsewhere", "description": "d", "operation": "TransactGet", "return_type": "object", "parameters": [],
	     "entities_involved": [{"table": "Other", "entity": "Thing", "action": "Get"}]}]}`)
	b := BindDesign(shop(), d.Tables[0], "")
	conds := map[string]string{}
	for _, p := range b.Patterns {
		conds[p.Name] = p.KeyCondition
	}
	want := map[string]string{
		"customer_and_orders":          "PK = CUSTOMER#${customer_id:0}",
		"customer_and_orders_by_email": "GSI1PK = EMAIL#${email}",
		"orders":                       "PK = CUSTOMER#${customer_id:0} AND begins_with(SK, ORDER#)",
	}
	if diff := cmp.Diff(want, conds); diff != "" {
		t.Errorf("key conditions (-want +got):\n%s", diff)
	}
	wantUnbound := []Unbound{{"access pattern read_both", "a cross-table TransactGet (pattern 100) over tables Shop, Other reads Other, another table of the design: a mapping is one table, so verify cannot run it; bind each table with its own init --from-design --design-table, and read them apart"}}
	if diff := cmp.Diff(wantUnbound, b.Unbound); diff != "" {
		t.Errorf("unbound (-want +got):\n%s", diff)
	}
	if want := []string{"write_both: a cross-table TransactWrite (pattern 101) over tables Shop, Other; the draft migrates and verifies reads"}; !cmp.Equal(want, b.Untranslated) {
		t.Errorf("untranslated %q, want %q", b.Untranslated, want)
	}
	m, _ := buildBound(b, "schema.json")
	type proj struct{ Projection, Included string }
	got := map[string]proj{}
	for _, g := range m.Table.GSIs {
		got[g.Name] = proj{g.Projection, strings.Join(g.NonKeyAttributes, ",")}
	}
	if diff := cmp.Diff(map[string]proj{"ByEmail": {"KEYS_ONLY", ""}, "ByNick": {"INCLUDE", "email"}, "ByAll": {"", ""}}, got); diff != "" {
		t.Errorf("GSI projections (-want +got):\n%s", diff)
	}
	roundTripBound(t, b)
}

// A design's filter_expression becomes the pattern's filter over the
// entity's attributes, each parameter the column of the field it is
// compared with; a size() filter, whose parameter is a count no column
// holds, leaves the pattern unbound.
func TestBindDesignFilters(t *testing.T) {
	d := parseBrief(t, `{"tables": [{
	  "table_config": {"table_name": "Shop", "partition_key": "PK", "sort_key": "SK"},
	  "entities": {
	    "Customer": {"entity_type": "CUSTOMER", "pk_template": "CUSTOMER#{customer_id}", "sk_template": "PROFILE",
	      "fields": [{"name": "customer_id", "type": "integer", "required": true}, {"name": "email", "type": "string", "required": true},
	        {"name": "customer_nickname", "type": "string", "required": false}, {"name": "tags", "type": "array", "item_type": "string", "required": false}],
	      "access_patterns": [
	        {"pattern_id": 1, "name": "by_mail", "operation": "Query", "return_type": "entity_list",
	         "parameters": [{"name": "customer_id", "type": "integer"}, {"name": "a", "type": "string"}, {"name": "b", "type": "string"}, {"name": "p", "type": "string"}],
	         "filter_expression": {"logical_operator": "OR", "conditions": [{"field": "email", "operator": "between", "param": "a", "param2": "b"},
	           {"field": "customer_nickname", "function": "begins_with", "param": "p"}, {"field": "email", "operator": "in", "params": ["a", "b"]}]}},
	        {"pattern_id": 2, "name": "named", "operation": "Query", "return_type": "entity_list", "parameters": [{"name": "customer_id", "type": "integer"}],
	         "filter_expression": {"conditions": [{"field": "customer_nickname", "function": "attribute_exists"}, {"field": "email", "function": "attribute_not_exists"}]}},
	        {"pattern_id": 3, "name": "tagged", "operation": "Query", "return_type": "entity_list", "parameters": [{"name": "customer_id", "type": "integer"}, {"name": "n", "type": "integer"}],
	         "filter_expression": {"conditions": [{"field": "tags", "function": "size", "operator": ">", "param": "n"}]}}]}}}]}`)
	b := BindDesign(shop(), d.Tables[0], "")
	got := map[string]string{}
	for _, p := range b.Patterns {
		got[p.Name] = p.Filter + "|" + p.Why
	}
	want := map[string]string{
		"by_mail": "email BETWEEN ${email} AND ${email} OR begins_with(customer_nickname, ${nickname}) OR email IN (${email}, ${email})|",
		"named":   "attribute_exists(customer_nickname) AND attribute_not_exists(email)|",
		"tagged":  "|its filter compares size(tags) with a count, which no column gives for verify to take from a row",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("filters|why (-want +got):\n%s", diff)
	}
	roundTripBound(t, b)
}

// A field named as the key attribute of a GSI its entity has no mapping
// for is written under its own name, as the design's code writes it: the
// entity is put in that index (DynamoDB indexes any item with its key
// attributes), never renamed, which the generated model would not parse.
// One that holds only part of the index's key is unbound.
func TestBindDesignFieldNamedAsAGSIKey(t *testing.T) {
	d := parseBrief(t, `{"tables": [{
	  "table_config": {"table_name": "App", "partition_key": "pk", "sort_key": "sk"},
	  "gsi_list": [{"name": "ByEmail", "partition_key": "email"}, {"name": "ByNick", "partition_key": "nickname", "sort_key": "joined"}],
	  "entities": {
	    "User": {"entity_type": "USER", "pk_template": "USER#{user_id}", "sk_template": "PROFILE",
	      "gsi_mappings": [{"name": "ByEmail", "pk_template": "{email}"}, {"name": "ByNick", "pk_template": "{nickname}", "sk_template": "{user_id}"}],
	      "fields": [{"name": "user_id", "type": "integer", "required": true}, {"name": "email", "type": "string", "required": true},
	                 {"name": "nickname", "type": "string", "required": false}]},
	    "Invite": {"entity_type": "INVITE", "pk_template": "USER#{user_id}", "sk_template": "INVITE#{invite_id}",
	      "fields": [{"name": "user_id", "type": "integer", "required": true}, {"name": "invite_id", "type": "integer", "required": true},
	                 {"name": "email", "type": "string", "required": true}, {"name": "nickname", "type": "string", "required": false}]}}}]}`)
	users := table("users", 3, []string{"user_id"}, "user_id integer!", "email text!", "nickname text")
	invites := table("invites", 4, []string{"user_id", "invite_id"}, "user_id integer!", "invite_id integer!", "email text!", "nickname text")
	fk(invites, users, []string{"user_id"}, 4, 2, 2)
	b := BindDesign(&Catalog{Database: "app", Schemas: []string{"public"}, Tables: []*Table{users, invites}}, d.Tables[0], "")
	inv := b.Entities[1]
	if inv.Table == nil {
		t.Fatalf("Invite unbound: %v", b.Unbound)
	}
	if ix := inv.index("ByEmail"); ix == nil || ix.PK != "${email}" || ix.Sparse {
		t.Errorf("Invite in ByEmail: %+v, want pk ${email}", ix)
	}
	if len(inv.Rename) > 0 || slices.Contains(inv.Select, "email") || slices.Contains(inv.Select, "nickname") {
		t.Errorf("Invite select %v, rename %v: want email written as ByEmail's key and nickname unbound, neither renamed", inv.Select, inv.Rename)
	}
	want := []Unbound{{"entity Invite, field nickname", "it is a key attribute of GSI ByNick, which the entity has no mapping for and whose key attribute joined it lacks: the design's code writes it under its own name, which the mapping keeps for the index's keys; map the entity into ByNick, or rename the field"}}
	if d := cmp.Diff(want, b.Unbound); d != "" {
		t.Errorf("unbound (-want +got):\n%s", d)
	}
	var out bytes.Buffer
	if err := WriteBound(&out, b, "schema.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := mapping.ParseContext(context.Background(), "draft", out.Bytes()); err != nil {
		t.Errorf("the draft does not load: %v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "email_") {
		t.Errorf("the draft renames email:\n%s", out.String())
	}
}

// An enum field in a sort key template is written ${status:0}: its text,
// as the design's code writes it, in a form the loader accepts in a sorted
// key (an enum does not sort by its text).
func TestBindDesignEnumInSortKey(t *testing.T) {
	d := parseBrief(t, `{"tables": [{
	  "table_config": {"table_name": "Desk", "partition_key": "PK", "sort_key": "SK"},
	  "entities": {"Ticket": {"entity_type": "TICKET", "pk_template": "ORG#{org_id}", "sk_template": "STATUS#{status}#{ticket_id}",
	    "fields": [{"name": "org_id", "type": "integer"}, {"name": "ticket_id", "type": "integer"}, {"name": "status", "type": "string"}]}}}]}`)
	tickets := table("tickets", 5, []string{"ticket_id"}, "ticket_id integer!", "org_id integer!", "status ticket_status!")
	b := BindDesign(&Catalog{Database: "desk", Schemas: []string{"public"}, Tables: []*Table{tickets}}, d.Tables[0], "")
	if e := b.Entities[0]; e.SK != "STATUS#${status:0}#${ticket_id:0}" {
		t.Errorf("sk %q, want STATUS#${status:0}#${ticket_id:0} (unbound %v)", e.SK, b.Unbound)
	}
}
