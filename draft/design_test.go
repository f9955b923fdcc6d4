package draft

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// table builds a catalog table; cols are "name type" with a trailing "!"
// for NOT NULL.
func table(name string, rows int64, pk []string, cols ...string) *Table {
	t := &Table{Schema: "public", Name: name, PrimaryKey: pk, Rows: rows, AvgRowBytes: 100}
	for _, c := range cols {
		notNull := strings.HasSuffix(c, "!")
		n, typ, _ := strings.Cut(strings.TrimSuffix(c, "!"), " ")
		t.Columns = append(t.Columns, Column{Name: n, Type: typ, NotNull: notNull})
	}
	return t
}

// fk adds a measured foreign key child.cols → parent.key.
func fk(child, parent *Table, cols []string, children, parents, max int64) *ForeignKey {
	f := &ForeignKey{Name: child.Name + "_" + strings.Join(cols, "_") + "_fkey", Columns: cols,
		RefSchema: parent.Schema, RefTable: parent.Name, RefColumns: parent.PrimaryKey,
		Fanout: Fanout{Children: children, Parents: parents, Max: max}, columnsNotNull: true, valid: true}
	for _, c := range cols {
		if col, _ := child.Column(c); !col.NotNull {
			f.columnsNotNull = false
		}
	}
	child.ForeignKeys = append(child.ForeignKeys, f)
	return f
}

func entity(t *testing.T, d *Design, name string) *Entity {
	t.Helper()
	for _, e := range d.Entities {
		if e.Table.Name == name {
			return e
		}
	}
	t.Fatalf("no entity for table %s", name)
	return nil
}

// TestProposeRules checks each drafting rule on a catalog built by hand:
// the owner ranking, the category threshold, embedding, a join table, a
// table without a key, and a column that clashes with the type attribute.
func TestProposeRules(t *testing.T) {
	customers := table("customers", 100, []string{"id"}, "id integer!", "name text!", "type text")
	shippers := table("shippers", 3, []string{"id"}, "id integer!", "name text!")
	orders := table("orders", 1000, []string{"id"}, "id integer!", "customer_id integer!", "shipper_id integer!")
	fk(orders, shippers, []string{"shipper_id"}, 1000, 3, 400) // avg 333: a category
	fk(orders, customers, []string{"customer_id"}, 1000, 90, 30)
	lines := table("order_lines", 3000, []string{"id"}, "id integer!", "order_id integer!", "product_id integer!")
	products := table("products", 3000, []string{"id"}, "id integer!", "title varchar(60)!")
	fk(lines, products, []string{"product_id"}, 3000, 2900, 2) // avg 1.03: fewer per parent
	fk(lines, orders, []string{"order_id"}, 3000, 1000, 8)     // avg 3, but its name starts order_lines
	addresses := table("addresses", 150, []string{"id"}, "id integer!", "customer_id integer!", "city text")
	fk(addresses, customers, []string{"customer_id"}, 150, 90, EmbedMaxChildren)
	tags := table("product_tags", 80, []string{"product_id", "tag_id"}, "product_id integer!", "tag_id integer!")
	tagsT := table("tags", 10, []string{"id"}, "id integer!", "name text!")
	fk(tags, products, []string{"product_id"}, 80, 40, 3)
	fk(tags, tagsT, []string{"tag_id"}, 80, 10, 20)
	logs := table("logs", 5, nil, "message text")
	cat := &Catalog{Database: "shop", Schemas: []string{"public"},
		Tables: []*Table{addresses, customers, logs, lines, orders, tags, products, shippers, tagsT}}

	d := Propose(cat, Options{DuplicateNames: true})

	if o := entity(t, d, "orders"); o.Role != Owned || o.Owner.RefTable != "customers" || o.Index == nil || o.Index.PK != "CUSTOMER#${customer_id}" {
		t.Errorf("orders: role %v, owner %v, index %+v: want owned by customers (shippers is a category), reached through GSI1", o.Role, o.Owner, o.Index)
	}
	if l := entity(t, d, "order_lines"); l.Role != Child || l.Owner.RefTable != "orders" || l.PK != "ORDER#${order_id}" || l.SK != "ORDER_LINE#${id}" {
		t.Errorf("order_lines: role %v owner %s keys %s %s: want a child in ORDER#<order_id>, owned by the table its name starts with", l.Role, l.Owner.RefTable, l.PK, l.SK)
	}
	if a := entity(t, d, "addresses"); a.Role != Embedded || a.As != "addresses" {
		t.Errorf("addresses: role %v as %q: want embedded (max %d children)", a.Role, a.As, EmbedMaxChildren)
	}
	if j := entity(t, d, "product_tags"); j.Role != Join || j.PK != "PRODUCT#${product_id}" || j.SK != "TAG#${tag_id}" ||
		j.Index.PK != "TAG#${tag_id}" || j.Index.SK != "PRODUCT#${product_id}" {
		t.Errorf("product_tags: %+v: want adjacency-list items inverted in GSI1", j)
	}
	if len(d.Skipped) != 1 || d.Skipped[0].Table != logs {
		t.Errorf("skipped %+v: want logs (no key)", d.Skipped)
	}
	if d.TypeAttribute != "entity_type" {
		t.Errorf("type attribute %q: customers has a column named type", d.TypeAttribute)
	}
	if c := entity(t, d, "customers"); len(c.Counts) != 1 || c.Counts[0].Attr != "order_count" {
		t.Errorf("customers counts %+v: want order_count", c.Counts)
	}
	if l := entity(t, d, "order_lines"); len(l.Duplicates) != 0 {
		t.Errorf("order_lines duplicates %+v: orders has no name column", l.Duplicates)
	}
	if o := entity(t, d, "orders"); len(o.Duplicates) != 1 || o.Duplicates[0].As != "customer_name" {
		t.Errorf("orders duplicates %+v: want customers.name as customer_name", o.Duplicates)
	}
	// Parents come before what they own, join tables last.
	pos := map[string]int{}
	for i, e := range d.Entities {
		pos[e.Table.Name] = i
	}
	if !(pos["customers"] < pos["orders"] && pos["orders"] < pos["order_lines"] && pos["product_tags"] == len(d.Entities)-1) {
		t.Errorf("entity order %v", pos)
	}

	var buf bytes.Buffer
	if err := Write(&buf, d); err != nil {
		t.Fatal(err)
	}
	m, err := mapping.Parse("drafted", buf.Bytes())
	if err != nil {
		t.Fatalf("the drafted mapping does not load: %v\n%s", err, buf.String())
	}
	if len(m.AccessPatterns) != len(d.Patterns) || len(m.Entities) != len(d.Entities)-1 {
		t.Errorf("loaded %d patterns and %d entities, drafted %d and %d (one embedded)", len(m.AccessPatterns), len(m.Entities), len(d.Patterns), len(d.Entities))
	}
}

func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"categories": "category", "addresses": "address", "order_details": "order_detail", "status": "status",
		"boxes": "box", "album": "album", "employee_territories": "employee_territory", "us_states": "us_state",
	} {
		if got := singular(in); got != want {
			t.Errorf("singular(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"category": "categories", "address": "addresses", "line": "lines", "day": "days"} {
		if got := plural(in); got != want {
			t.Errorf("plural(%q) = %q, want %q", in, got, want)
		}
	}
	if got := under("invoice", "invoice_line"); got != "lines" {
		t.Errorf(`under("invoice", "invoice_line") = %q, want "lines"`, got)
	}
	for in, want := range map[string]string{
		"order_items": "order_items", "Order Items": "Order_Items", "CustomerOrders": "Customer_Orders", "HTTPLog": "HTTP_Log",
		"customerID": "customer_ID", "Café Menü": "Cafe_Menu", "日本語テーブル": "", "テーブル_2": "2", `it's "x"`: "it_s_x", "ß": "ss",
	} {
		if got := asciiSnake(in); got != want {
			t.Errorf("asciiSnake(%q) = %q, want %q", in, got, want)
		}
	}
}

// A foreign key only some of a partitioned table's partitions declare
// owns nothing and indexes nothing: rows of the other partitions may have
// no parent. The draft says why.
func TestProposePartialForeignKey(t *testing.T) {
	customers := table("customers", 10, []string{"id"}, "id integer!", "name text!")
	payments := table("payments", 40, []string{"paid_on", "id"}, "id integer!", "paid_on date!", "customer_id integer!")
	fk(payments, customers, []string{"customer_id"}, 40, 10, 6).partial = true
	d := Propose(&Catalog{Database: "shop", Schemas: []string{"public"}, Tables: []*Table{customers, payments}}, Options{})

	if p := entity(t, d, "payments"); p.Role != Root || p.Owner != nil || p.Index != nil {
		t.Errorf("payments: role %v, owner %v, index %+v: want its own collection, not indexed", p.Role, p.Owner, p.Index)
	}
	var buf bytes.Buffer
	if err := Write(&buf, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "Not indexed: customers (customer_id, NOT NULL; 40 rows over 10 parents, per parent avg 4.0, max 6): only some of the table's partitions declare it") {
		t.Errorf("the draft does not say why the foreign key is not used:\n%s", buf.String())
	}
}

// write renders d and loads it as plan and migrate do.
func write(t *testing.T, d *Design) (string, *mapping.Mapping) {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, d); err != nil {
		t.Fatal(err)
	}
	m, err := mapping.Parse("drafted", buf.Bytes())
	if err != nil {
		t.Fatalf("the drafted mapping does not load: %v\n%s", err, buf.String())
	}
	return buf.String(), m
}

// reachable fails t unless every entity with items of its own (all but
// embedded ones and join tables, whose key is their partition and sort
// key) of a table with rows has a Get pattern naming exactly its key
// columns: a Query of its own item by its key alone.
func reachable(t *testing.T, d *Design) {
	t.Helper()
	for _, e := range d.Entities {
		if e.Role == Embedded || e.Role == Join || e.Table.Rows == 0 {
			continue
		}
		i := slices.IndexFunc(d.Patterns, func(p *Pattern) bool { return p.Name == "Get"+e.Name })
		if i < 0 {
			t.Errorf("%s (%v): no Get pattern; patterns: %v", e.Table.Name, e.Role, d.Patterns)
			continue
		}
		kc, err := mapping.ParseKeyCondition(d.Patterns[i].KeyCondition)
		if err != nil {
			t.Fatal(err)
		}
		want := e.Key
		if e.Table.OwnID != "" {
			want = []string{e.Table.OwnID}
		}
		if cols := kc.Columns(); !slices.Equal(sorted(cols), sorted(want)) {
			t.Errorf("%s: Get pattern %q takes %v, want its key %v", e.Table.Name, d.Patterns[i].KeyCondition, cols, e.Key)
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// A one-to-one foreign key outside the table's key is a reference, not an
// ownership: the row has its parent (a customer has an address, a store a
// manager), measured (no parent with two) or declared (a unique key). Both
// sides keep their own collections. Inside the key, one to one extends the
// parent (customer_profile keyed by customer_id): that stays ownership.
func TestProposeOneToOne(t *testing.T) {
	address := table("address", 30, []string{"address_id"}, "address_id integer!", "line text!")
	staff := table("staff", 2, []string{"staff_id"}, "staff_id integer!", "address_id integer!")
	fk(staff, address, []string{"address_id"}, 2, 2, 1)
	store := table("store", 2, []string{"store_id"}, "store_id integer!", "manager_staff_id integer!", "address_id integer!")
	store.Uniques = [][]string{{"manager_staff_id"}}
	fk(store, staff, []string{"manager_staff_id"}, 2, 2, 1)
	fk(store, address, []string{"address_id"}, 2, 2, 1)
	customer := table("customer", 26, []string{"customer_id"}, "customer_id integer!", "address_id integer!", "name text!")
	fk(customer, address, []string{"address_id"}, 26, 26, 1)
	profile := table("customer_profile", 20, []string{"customer_id"}, "customer_id integer!", "bio text")
	fk(profile, customer, []string{"customer_id"}, 20, 20, 1)
	// Declared unique, and no row yet: still one to one.
	badge := table("badge", 0, []string{"badge_id"}, "badge_id integer!", "staff_id integer!")
	badge.Uniques = [][]string{{"staff_id"}}
	fk(badge, staff, []string{"staff_id"}, 0, 0, 0)
	d := Propose(&Catalog{Database: "rental", Schemas: []string{"public"}, Tables: []*Table{address, badge, customer, profile, staff, store}}, Options{})

	for _, name := range []string{"address", "badge", "customer", "staff", "store"} {
		if e := entity(t, d, name); e.Role != Root || e.PK != e.Prefix+"#${"+e.Key[0]+"}" {
			t.Errorf("%s: role %v, owner %v, pk %s: want its own collection", name, e.Role, e.Owner, e.PK)
		}
	}
	if c := entity(t, d, "customer"); c.Index == nil || c.Index.FK.RefTable != "address" {
		t.Errorf("customer index %+v: want the address lookup in GSI1, the only foreign key left", c.Index)
	}
	if p := entity(t, d, "customer_profile"); p.Role != Embedded || p.Owner.RefTable != "customer" {
		t.Errorf("customer_profile: role %v: want it embedded in its customer (one to one inside its key)", p.Role)
	}
	text, _ := write(t, d)
	for _, want := range []string{
		"Not owned by address (address_id): one to one, no parent has two in the data; each row refers to its address, it does not belong to it.",
		"Not owned by staff (manager_staff_id): one to one, its columns hold a unique key; each row refers to its staff, it does not belong to it.",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the draft does not say %q:\n%s", want, text)
		}
	}
	reachable(t, d)
}

// A table with several owners goes to the one at the root of the
// ownership tree: a rental to its customer, not to its inventory item
// (which a film owns), though an item has fewer rentals than a customer.
// A child not keyed by its owner's key is found by its own key through
// GSI2; a table other tables refer to is not embedded, however small.
func TestProposeOwnerAndReach(t *testing.T) {
	film := table("film", 40, []string{"film_id"}, "film_id integer!", "title text!")
	inventory := table("inventory", 80, []string{"inventory_id"}, "inventory_id integer!", "film_id integer!")
	fk(inventory, film, []string{"film_id"}, 80, 40, 2)
	customer := table("customer", 50, []string{"customer_id"}, "customer_id integer!", "name text!")
	rental := table("rental", 200, []string{"rental_id"}, "rental_id integer!", "inventory_id integer!", "customer_id integer!")
	fk(rental, inventory, []string{"inventory_id"}, 200, 80, 4)
	fk(rental, customer, []string{"customer_id"}, 200, 50, 6)
	lines := table("rental_lines", 300, []string{"rental_id", "line_no"}, "rental_id integer!", "line_no integer!", "note text", "x1 text", "x2 text")
	lines.AvgRowBytes = 10_000 // too big to embed
	fk(lines, rental, []string{"rental_id"}, 300, 200, 3)
	d := Propose(&Catalog{Database: "rental", Schemas: []string{"public"}, Tables: []*Table{customer, film, inventory, lines, rental}}, Options{})

	r := entity(t, d, "rental")
	if r.Role != Owned || r.Owner.RefTable != "customer" || r.Index.PK != "CUSTOMER#${customer_id}" {
		t.Errorf("rental: role %v, owner %v, index %+v: want owned by customer (a root), reached through GSI1", r.Role, r.Owner, r.Index)
	}
	inv := entity(t, d, "inventory")
	if inv.Role != Child || inv.PK != "FILM#${film_id}" || inv.ByKey != "INVENTORY#${inventory_id}" {
		t.Errorf("inventory: role %v, pk %s, GSI2 %q: want a child of film, found by its key through GSI2", inv.Role, inv.PK, inv.ByKey)
	}
	if !strings.Contains(inv.whyNotEmbedded, "rows of rental refer to its rows by key") {
		t.Errorf("inventory is not embedded because %q: want because rental refers to it", inv.whyNotEmbedded)
	}
	l := entity(t, d, "rental_lines")
	if l.Role != Child || l.PK != "RENTAL#${rental_id}" || l.ByKey != "" {
		t.Errorf("rental_lines: role %v, pk %s, GSI2 %q: want a child of rental, found by its key in the table (the key holds rental_id)", l.Role, l.PK, l.ByKey)
	}
	if i := slices.IndexFunc(d.Patterns, func(p *Pattern) bool { return p.Name == "GetInventory" }); i < 0 || d.Patterns[i].Index != KeyGSI ||
		d.Patterns[i].KeyCondition != "GSI2PK = INVENTORY#${inventory_id}" {
		t.Errorf("no GetInventory pattern on GSI2: %v", d.Patterns)
	}
	if i := slices.IndexFunc(d.Patterns, func(p *Pattern) bool { return p.Name == "GetRentalLine" }); i < 0 || d.Patterns[i].Index != "" ||
		d.Patterns[i].KeyCondition != "PK = RENTAL#${rental_id} AND SK = RENTAL_LINE#${rental_id}#${line_no}" {
		t.Errorf("no GetRentalLine pattern on the table: %v", d.Patterns)
	}
	_, m := write(t, d)
	if g := m.Table.GSI(KeyGSI); g == nil || g.PartitionKey != KeyGSIPK || g.SortKey != "" {
		t.Errorf("GSI2 %+v: want a partition key only", g)
	}
	reachable(t, d)
}

// Secret-looking columns and tsvectors are left out of the items, with
// why, but for those a key renders; embedded rows lose them too.
func TestProposeLeavesOutSecrets(t *testing.T) {
	users := table("users", 10, []string{"user_id"}, "user_id integer!", "email text!", "Password_Hash text!", "api_token text",
		"salt bytea", "search tsvector", "passwd text", "client_secret text", "hashtag text")
	sessions := table("sessions", 10, []string{"token"}, "token text!", "user_id integer!", "refresh_token text")
	fk(sessions, users, []string{"user_id"}, 10, 10, 1)
	keys := table("api_keys", 20, []string{"key_id"}, "key_id integer!", "user_id integer!", "secret text!", "label text")
	fk(keys, users, []string{"user_id"}, 20, 10, 2)
	pins := table("user_pins", 5, []string{"user_id"}, "user_id integer!", "pin_hash text!") // every column left out
	fk(pins, users, []string{"user_id"}, 5, 5, 1)
	d := Propose(&Catalog{Database: "auth", Schemas: []string{"public"}, Tables: []*Table{keys, sessions, users, pins}}, Options{})

	u := entity(t, d, "users")
	if got := columnsOf(u.Exclude); !slices.Equal(got, []string{"Password_Hash", "api_token", "salt", "search", "passwd", "client_secret", "hashtag"}) {
		t.Errorf("users exclude %v", got)
	}
	s := entity(t, d, "sessions")
	if got := columnsOf(s.Exclude); !slices.Equal(got, []string{"refresh_token"}) {
		t.Errorf("sessions exclude %v: want refresh_token (token is its key)", got)
	}
	text, m := write(t, d)
	for _, want := range []string{
		"# search left out: a tsvector, PostgreSQL's full-text index of other columns",
		"# Password_Hash left out: named like a secret (password)",
		"exclude: [Password_Hash, api_token, salt, search, passwd, client_secret, hashtag]",
		"Kept token, though named like a secret (token), which every reader of the table could read: a key renders it",
		`attributes: {exclude: [user_id, secret]}`,
		`attributes: {exclude: [user_id, pin_hash]}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the draft lacks %q:\n%s", want, text)
		}
	}
	for _, e := range m.Entities {
		if e.Source.Table == "users" && !slices.Contains(e.Attributes.Exclude, "passwd") {
			t.Errorf("users loads with exclude %v", e.Attributes.Exclude)
		}
	}
}

// Any name PostgreSQL allows drafts a mapping that loads: entity names,
// types and key prefixes are ASCII made from the name (or from the table's
// place, when it has no ASCII letter or digit), unique, and the source
// keeps the exact name. A comment cannot be broken by a line break in a
// name, and a key whose column no template can name is left out, saying
// why.
func TestProposeNames(t *testing.T) {
	tables := []*Table{
		table("日本語テーブル", 3, []string{"id"}, "id integer!", "名前 text!"),
		{Schema: "public", Name: "Order Items", PrimaryKey: []string{"Item ID"}, Rows: 3, AvgRowBytes: 100, Columns: []Column{
			{Name: "Item ID", Type: "integer", NotNull: true}, {Name: "日本語テーブル_id", Type: "integer", NotNull: true}, {Name: `it's "quoted"`, Type: "text"}}},
		table("CustomerOrders", 3, []string{"OrderID"}, "OrderID integer!"),
		table("2024_sales", 3, []string{"id"}, "id integer!"),
		table("Café Menü", 3, []string{"id"}, "id integer!"),
		table("orders", 3, []string{"id"}, "id integer!"),
		table("Orders", 3, []string{"id"}, "id integer!"),
		table("line\nbreak", 3, []string{"a$b"}, "a$b integer!"),
		table("weird", 3, []string{"a:b"}, "a:b integer!"),
		table("ünïcödé_テーブル", 3, []string{"id"}, "id integer!"),
	}
	fk(tables[1], tables[0], []string{"日本語テーブル_id"}, 3, 2, 2)
	d := Propose(&Catalog{Database: "名前", Schemas: []string{"public"}, Tables: tables}, Options{})

	want := map[string][2]string{
		"日本語テーブル":        {"Table1", "TABLE_1"},
		"Order Items":    {"OrderItem", "ORDER_ITEM"},
		"CustomerOrders": {"CustomerOrder", "CUSTOMER_ORDER"},
		"2024_sales":     {"T2024Sale", "2024_SALE"},
		"Café Menü":      {"CafeMenu", "CAFE_MENU"},
		"orders":         {"Order", "ORDER"},
		"Orders":         {"Order2", "ORDER2"},
		"line\nbreak":    {"LineBreak", "LINE_BREAK"},
		"ünïcödé_テーブル":   {"Unicode", "UNICODE"},
	}
	got := map[string][2]string{}
	for _, e := range d.Entities {
		got[e.Table.Name] = [2]string{e.Name, e.Prefix}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if len(d.Skipped) != 1 || d.Skipped[0].Table.Name != "weird" {
		t.Errorf("skipped %v: want weird, whose key column a:b no template can name", d.Skipped)
	}
	if e := entity(t, d, "line\nbreak"); e.PK != "LINE_BREAK#${a$b}" {
		t.Errorf("pk %q: a '$' in a placeholder's name is written as it is", e.PK)
	}
	if e := entity(t, d, "Order Items"); e.Role != Child || e.PK != "TABLE_1#${日本語テーブル_id}" || e.ByKey != "ORDER_ITEM#${Item ID}" {
		t.Errorf("Order Items: role %v, pk %q, GSI2 %q: want a child of 日本語テーブル (order_by cannot name Item ID), found by its key through GSI2", e.Role, e.PK, e.ByKey)
	}
	if d.Table != "pg2dynamo" {
		t.Errorf("table name %q for database 名前", d.Table)
	}
	text, m := write(t, d)
	if !strings.Contains(text, `# line\nbreak: 3 rows`) || !strings.Contains(text, `source: {table: "line\nbreak"}`) {
		t.Errorf("the name with a line break is not escaped in its comment, or not exact in its source:\n%s", text)
	}
	for _, e := range m.Entities {
		if e.Source.Table == "日本語テーブル" && e.Name != "Table1" {
			t.Errorf("日本語テーブル loads as %s", e.Name)
		}
	}
	reachable(t, d)
}

// Two join tables of the same parents (Neon's employees schema:
// department_employee and department_manager, both keyed by employee and
// department) get distinct sort keys, each starting with its own prefix,
// in the table and in GSI1, and access patterns named after their own
// table, none numbered; the draft loads.
func TestProposeJoinsOfTheSameParents(t *testing.T) {
	employees := table("employee", 100, []string{"id"}, "id integer!", "first_name text!")
	departments := table("department", 9, []string{"id"}, "id integer!", "dept_name text!")
	var joins []*Table
	for _, n := range []string{"department_employee", "department_manager"} {
		j := table(n, 120, []string{"employee_id", "department_id"}, "employee_id integer!", "department_id integer!", "from_date date!")
		fk(j, employees, []string{"employee_id"}, 120, 100, 2)
		fk(j, departments, []string{"department_id"}, 120, 9, 30)
		joins = append(joins, j)
	}
	d := Propose(&Catalog{Database: "employees", Schemas: []string{"public"}, Tables: append([]*Table{employees, departments}, joins...)}, Options{})
	de, dm := entity(t, d, "department_employee"), entity(t, d, "department_manager")
	if de.Role != Join || dm.Role != Join {
		t.Fatalf("roles %v, %v, want joins", de.Role, dm.Role)
	}
	for _, c := range []struct{ got, want string }{
		{de.SK, "DEPARTMENT_EMPLOYEE#DEPARTMENT#${department_id}"},
		{dm.SK, "DEPARTMENT_MANAGER#DEPARTMENT#${department_id}"},
		{de.Index.SK, "DEPARTMENT_EMPLOYEE#EMPLOYEE#${employee_id}"},
		{dm.Index.SK, "DEPARTMENT_MANAGER#EMPLOYEE#${employee_id}"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
	names := map[string]string{}
	for _, p := range d.Patterns {
		if _, dup := names[p.Name]; dup || strings.ContainsAny(p.Name, "0123456789") {
			t.Errorf("pattern name %s repeated or numbered", p.Name)
		}
		names[p.Name] = p.KeyCondition
	}
	for name, cond := range map[string]string{
		"EmployeeDepartmentEmployees":   "PK = EMPLOYEE#${employee_id} AND begins_with(SK, DEPARTMENT_EMPLOYEE#DEPARTMENT#)",
		"EmployeeDepartmentManagers":    "PK = EMPLOYEE#${employee_id} AND begins_with(SK, DEPARTMENT_MANAGER#DEPARTMENT#)",
		"DepartmentDepartmentManagers":  "GSI1PK = DEPARTMENT#${department_id} AND begins_with(GSI1SK, DEPARTMENT_MANAGER#EMPLOYEE#)",
		"DepartmentDepartmentEmployees": "GSI1PK = DEPARTMENT#${department_id} AND begins_with(GSI1SK, DEPARTMENT_EMPLOYEE#EMPLOYEE#)",
	} {
		if got, ok := names[name]; !ok || got != cond {
			t.Errorf("pattern %s: %q, want %q (patterns %v)", name, got, cond, names)
		}
	}
	var out bytes.Buffer
	if err := Write(&out, d); err != nil {
		t.Fatal(err)
	}
	if _, err := mapping.Parse("draft", out.Bytes()); err != nil {
		t.Errorf("the draft does not load: %v\n%s", err, out.String())
	}
}

// A join's items inverted in GSI1 do not share keys with another entity's
// GSI1 lookup: player is owned by team, reached through GSI1 as TEAM#t /
// PLAYER#p, and so would player_team_history's inverted items be; the
// join's GSI1 sort keys start with its own prefix, and its pattern by team
// reads only its items.
func TestProposeJoinBesideALookup(t *testing.T) {
	team := table("team", 4, []string{"id"}, "id integer!")
	player := table("player", 40, []string{"id"}, "id integer!", "team_id integer!")
	fk(player, team, []string{"team_id"}, 40, 4, 12)
	stat := table("player_stat", 80, []string{"id"}, "id integer!", "player_id integer!")
	fk(stat, player, []string{"player_id"}, 80, 40, 3)
	hist := table("player_team_history", 60, []string{"player_id", "team_id"}, "player_id integer!", "team_id integer!")
	fk(hist, player, []string{"player_id"}, 60, 40, 2)
	fk(hist, team, []string{"team_id"}, 60, 4, 20)
	d := Propose(&Catalog{Database: "league", Schemas: []string{"public"}, Tables: []*Table{team, player, stat, hist}}, Options{})
	p, h := entity(t, d, "player"), entity(t, d, "player_team_history")
	if p.Role != Owned || p.Index == nil || p.Index.PK != "TEAM#${team_id}" || h.Role != Join || h.Index == nil {
		t.Fatalf("player %v %+v, player_team_history %v %+v: want player owned by team through GSI1, the history a join inverted in GSI1", p.Role, p.Index, h.Role, h.Index)
	}
	if h.Index.SK != "PLAYER_TEAM_HISTORY#PLAYER#${player_id}" || h.SK != "PLAYER_TEAM_HISTORY#TEAM#${team_id}" {
		t.Errorf("player_team_history keys SK %s, GSI1SK %s: want its own prefix first, as player's GSI1 keys are TEAM# / PLAYER#", h.SK, h.Index.SK)
	}
	for _, ap := range d.Patterns {
		if ap.Index == GSI && strings.Contains(ap.KeyCondition, "begins_with(GSI1SK, PLAYER#)") && !strings.HasPrefix(ap.Name, "PlayersBy") {
			t.Errorf("pattern %s reads player's GSI1 keys: %s", ap.Name, ap.KeyCondition)
		}
	}
	write(t, d)
}

// Two child tables named alike (Orders and orders, both owned by
// customers) are Order and Order2, and their counts on the customer are
// order_count and order2_count: neither overwrites the other.
func TestProposeCountsOfChildrenNamedAlike(t *testing.T) {
	customers := table("customers", 10, []string{"id"}, "id integer!")
	var kids []*Table
	for _, n := range []string{"Orders", "orders"} {
		o := table(n, 30, []string{"id"}, "id integer!", "customer_id integer!", "note text")
		fk(o, customers, []string{"customer_id"}, 30, 10, EmbedMaxChildren+5)
		kids = append(kids, o)
	}
	d := Propose(&Catalog{Database: "shop", Schemas: []string{"public"}, Tables: append([]*Table{customers}, kids...)}, Options{})
	var attrs []string
	for _, c := range entity(t, d, "customers").Counts {
		attrs = append(attrs, c.Attr+"="+c.Child.Name)
	}
	if want := []string{"order_count=Order", "order2_count=Order2"}; !slices.Equal(attrs, want) {
		t.Errorf("counts %v, want %v", attrs, want)
	}
	_, m := write(t, d)
	if n := len(m.Entity("Customer").Aggregates); n != 2 {
		t.Errorf("the draft's Customer has %d aggregates, want 2", n)
	}
}

// A foreign key to a unique column that is not its parent's key (tx.from_code
// → acct.code, acct keyed by id) is not indexed because no key renders the
// parent's code, and its comment says so, not that GSI1 is taken.
func TestProposeForeignKeyToANonKeyColumn(t *testing.T) {
	acct := table("acct", 3, []string{"id"}, "id integer!", "code text!")
	acct.Uniques = [][]string{{"code"}}
	tx := table("tx", 10, []string{"id"}, "id integer!", "from_code text!")
	f := fk(tx, acct, []string{"from_code"}, 10, 3, 5)
	f.RefColumns = []string{"code"}
	d := Propose(&Catalog{Database: "bank", Schemas: []string{"public"}, Tables: []*Table{acct, tx}}, Options{})
	if e := entity(t, d, "tx"); e.Index != nil || e.Owner != nil {
		t.Fatalf("tx: owner %v, index %+v: want neither", e.Owner, e.Index)
	}
	out, _ := write(t, d)
	want := "Not indexed: acct (from_code, NOT NULL; 10 rows over 3 parents, per parent avg 3.3, max 5): it refers to acct (code), not to its key (id), which Acct's keys hold."
	if !strings.Contains(out, want) {
		t.Errorf("the draft does not say %q:\n%s", want, out)
	}
}

// The hot-partition rule holds for adjacency lists too (issue 36, on
// Neon's employees schema: 331,000 department_employee items inverted
// into GSI1 under 9 department keys). A join table of a category (a
// department averaging over NestMaxAvg employees) lives in the other
// end's collection whatever its key's column order, and is not inverted
// by the category; one of two categories is no adjacency list at all.
func TestProposeJoinsOfACategory(t *testing.T) {
	employees := table("employee", 1000, []string{"id"}, "id integer!", "first_name text!")
	departments := table("department", 9, []string{"id"}, "id integer!", "dept_name text!")
	titles := table("title", 7, []string{"id"}, "id integer!", "title text!")
	// Keyed department first: the order alone would put 1,100 items
	// under 9 partition keys.
	de := table("department_employee", 1100, []string{"department_id", "employee_id"}, "department_id integer!", "employee_id integer!")
	fk(de, departments, []string{"department_id"}, 1100, 9, 140)
	fk(de, employees, []string{"employee_id"}, 1100, 1000, 2)
	dm := table("department_manager", 24, []string{"employee_id", "department_id"}, "employee_id integer!", "department_id integer!")
	fk(dm, employees, []string{"employee_id"}, 24, 24, 1)
	fk(dm, departments, []string{"department_id"}, 24, 9, 4)
	dt := table("department_title", 1000, []string{"department_id", "title_id"}, "department_id integer!", "title_id integer!")
	fk(dt, departments, []string{"department_id"}, 1000, 9, 120)
	fk(dt, titles, []string{"title_id"}, 1000, 7, 160)
	d := Propose(&Catalog{Database: "employees", Schemas: []string{"public"}, Tables: []*Table{employees, departments, titles, de, dm, dt}}, Options{})

	e := entity(t, d, "department_employee")
	if e.Role != Join || e.PK != "EMPLOYEE#${employee_id}" || e.Index != nil {
		t.Errorf("department_employee: role %v, PK %s, index %+v: want a join in each employee's collection, not inverted", e.Role, e.PK, e.Index)
	}
	if m := entity(t, d, "department_manager"); m.Role != Join || m.Index == nil || m.Index.PK != "DEPARTMENT#${department_id}" {
		t.Errorf("department_manager: role %v, index %+v: want a join inverted by department (2.7 a department)", m.Role, m.Index)
	}
	if x := entity(t, d, "department_title"); x.Role != Root || x.Index != nil || x.PK != "DEPARTMENT_TITLE#${department_id}#${title_id}" {
		t.Errorf("department_title: role %v, PK %s, index %+v: want its own collection, no GSI1", x.Role, x.PK, x.Index)
	}
	out, _ := write(t, d)
	for _, p := range d.Patterns {
		if p.Index == GSI && strings.Contains(p.KeyCondition, "DEPARTMENT#") && strings.Contains(p.KeyCondition, "EMPLOYEE#") && !strings.Contains(p.KeyCondition, "DEPARTMENT_MANAGER#") {
			t.Errorf("pattern %s queries department_employee by department in %s: %s", p.Name, GSI, p.KeyCondition)
		}
	}
	for _, want := range []string{"not inverted in GSI1: department (department_id, NOT NULL; 1,100 rows over 9 parents, per parent avg 122.2, max 140) is a category",
		"Not an adjacency list: both department (department_id"} {
		if !strings.Contains(strings.Join(strings.Fields(strings.ReplaceAll(out, "#", "")), " "), want) {
			t.Errorf("the draft does not say %q:\n%s", want, out)
		}
	}
}
