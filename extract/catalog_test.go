package extract_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// catalogSQL has a partitioned table, payment, that declares one foreign
// key itself (to rental) and leaves the others to its partitions, as
// Pagila does: p1 is created as a partition, p2 attached, p3 is itself
// partitioned (its leaf p3a inherits p3's foreign key). Every partition
// declares the key to customer, p1 also repeats the parent's key to rental,
// and only p1 the key to staff.
const catalogSQL = `
CREATE TABLE customer (customer_id integer PRIMARY KEY, email text NOT NULL, code text, note text,
  full_name text GENERATED ALWAYS AS (email || '!') STORED, CONSTRAINT customer_email_key UNIQUE (email));
CREATE UNIQUE INDEX customer_code_idx ON customer (code) INCLUDE (note);
CREATE UNIQUE INDEX customer_partial_idx ON customer (note) WHERE note IS NOT NULL;
CREATE UNIQUE INDEX customer_lower_idx ON customer (lower(email));
CREATE VIEW customer_v AS SELECT customer_id FROM customer;
CREATE TABLE staff (staff_id integer PRIMARY KEY, name text NOT NULL);
ALTER TABLE staff REPLICA IDENTITY FULL;
CREATE TABLE rental (rental_id integer NOT NULL, store text NOT NULL, CONSTRAINT rental_uk UNIQUE (store, rental_id));
CREATE UNIQUE INDEX rental_id_idx ON rental (rental_id);
ALTER TABLE rental REPLICA IDENTITY USING INDEX rental_id_idx;
CREATE TABLE log (message text);
ALTER TABLE log REPLICA IDENTITY NOTHING;
CREATE TABLE payment (payment_id integer NOT NULL, customer_id integer NOT NULL, staff_id integer,
  rental_id integer NOT NULL REFERENCES rental (rental_id), payment_date date NOT NULL,
  PRIMARY KEY (payment_date, payment_id)) PARTITION BY RANGE (payment_date);
CREATE TABLE p1 PARTITION OF payment FOR VALUES FROM ('2022-01-01') TO ('2022-02-01');
CREATE TABLE p2 (LIKE payment INCLUDING ALL);
ALTER TABLE payment ATTACH PARTITION p2 FOR VALUES FROM ('2022-02-01') TO ('2022-03-01');
CREATE TABLE p3 PARTITION OF payment FOR VALUES FROM ('2022-03-01') TO ('2022-05-01') PARTITION BY RANGE (payment_date);
CREATE TABLE p3a PARTITION OF p3 FOR VALUES FROM ('2022-03-01') TO ('2022-05-01');
ALTER TABLE ONLY p1 ADD CONSTRAINT p1_customer_fk FOREIGN KEY (customer_id) REFERENCES customer;
ALTER TABLE ONLY p2 ADD CONSTRAINT p2_customer_fk FOREIGN KEY (customer_id) REFERENCES customer;
ALTER TABLE p3 ADD CONSTRAINT p3_customer_fk FOREIGN KEY (customer_id) REFERENCES customer;
ALTER TABLE ONLY p1 ADD CONSTRAINT p1_rental_fk FOREIGN KEY (rental_id) REFERENCES rental (rental_id);
ALTER TABLE ONLY p1 ADD CONSTRAINT p1_staff_fk FOREIGN KEY (staff_id) REFERENCES staff;
`

// TestCatalogTables reads tables (not views), partitions, columns, unique
// keys, foreign keys and replica identities, and the relation names a
// "did you mean" picks from: the foreign keys payment's
// partitions declare are payment's, once each, named as the first
// partition's, partial where a leaf partition lacks them; the one it
// declares itself is not repeated; partial, expression and INCLUDE
// columns are no key.
func TestCatalogTables(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, catalogSQL)
	ctx := context.Background()
	conn := testenv.Connect(t, url)
	cat := extract.NewCatalog(conn)
	tables, err := cat.Tables(ctx, []string{"public"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	byName := map[string]*extract.Table{}
	for _, tb := range tables {
		names = append(names, tb.Name)
		byName[tb.Name] = tb
	}
	if d := cmp.Diff([]string{"customer", "log", "p1", "p2", "p3", "p3a", "payment", "rental", "staff"}, names); d != "" {
		t.Fatalf("tables (-want +got):\n%s", d)
	}
	public := func(name string) pgx.Identifier { return pgx.Identifier{"public", name} }
	want := map[string]*extract.Table{
		"customer": {Schema: "public", Name: "customer", Kind: extract.OrdinaryTable,
			Columns: []extract.TableColumn{{Name: "customer_id", Type: "integer", TypeOID: 23, TypeMod: -1, NotNull: true},
				{Name: "email", Type: "text", TypeOID: 25, TypeMod: -1, Collation: 100, NotNull: true}, {Name: "code", Type: "text", TypeOID: 25, TypeMod: -1, Collation: 100},
				{Name: "note", Type: "text", TypeOID: 25, TypeMod: -1, Collation: 100}, {Name: "full_name", Type: "text", TypeOID: 25, TypeMod: -1, Collation: 100, Generated: true}},
			Keys: []extract.UniqueKey{{Columns: []string{"customer_id"}, Primary: true, Name: "customer_pkey", Constraint: true},
				{Columns: []string{"code"}, Name: "customer_code_idx"},
				{Columns: []string{"email"}, Name: "customer_email_key", Constraint: true}},
			ReplicaIdentity: extract.ReplicaIdentity{Kind: 'd', Columns: []string{"customer_id"}}},
		"log": {Schema: "public", Name: "log", Kind: extract.OrdinaryTable,
			Columns:         []extract.TableColumn{{Name: "message", Type: "text", TypeOID: 25, TypeMod: -1, Collation: 100}},
			ReplicaIdentity: extract.ReplicaIdentity{Kind: 'n'}},
		"rental": {Schema: "public", Name: "rental", Kind: extract.OrdinaryTable,
			Columns: []extract.TableColumn{{Name: "rental_id", Type: "integer", TypeOID: 23, TypeMod: -1, NotNull: true},
				{Name: "store", Type: "text", TypeOID: 25, TypeMod: -1, Collation: 100, NotNull: true}},
			Keys: []extract.UniqueKey{{Columns: []string{"rental_id"}, Name: "rental_id_idx"},
				{Columns: []string{"store", "rental_id"}, Name: "rental_uk", Constraint: true}},
			ReplicaIdentity: extract.ReplicaIdentity{Kind: 'i', Columns: []string{"rental_id"}}},
		"staff": {Schema: "public", Name: "staff", Kind: extract.OrdinaryTable,
			Columns: []extract.TableColumn{{Name: "staff_id", Type: "integer", TypeOID: 23, TypeMod: -1, NotNull: true},
				{Name: "name", Type: "text", TypeOID: 25, TypeMod: -1, Collation: 100, NotNull: true}},
			Keys:            []extract.UniqueKey{{Columns: []string{"staff_id"}, Primary: true, Name: "staff_pkey", Constraint: true}},
			ReplicaIdentity: extract.ReplicaIdentity{Kind: 'f', Columns: []string{"staff_id", "name"}}},
	}
	opts := cmp.Options{cmpopts.IgnoreFields(extract.Table{}, "OID", "Parent"), cmpopts.IgnoreUnexported(extract.Table{}), cmpopts.EquateEmpty()}
	for name, w := range want {
		if d := cmp.Diff(w, byName[name], opts); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}

	payment := byName["payment"]
	if payment.Kind != extract.PartitionedTable || payment.Parent != nil {
		t.Errorf("payment: kind %c, parent %v; want partitioned, no parent", payment.Kind, payment.Parent)
	}
	if d := cmp.Diff([]string{"payment_date", "payment_id"}, payment.PrimaryKey()); d != "" {
		t.Errorf("payment's primary key (-want +got):\n%s", d)
	}
	wantFKs := []extract.ForeignKey{
		{Name: "p1_customer_fk", Columns: []string{"customer_id"}, RefSchema: "public", RefTable: "customer", RefColumns: []string{"customer_id"},
			DeclaredOn: []pgx.Identifier{public("p1"), public("p2"), public("p3")}},
		{Name: "p1_staff_fk", Columns: []string{"staff_id"}, RefSchema: "public", RefTable: "staff", RefColumns: []string{"staff_id"},
			DeclaredOn: []pgx.Identifier{public("p1")}, Partial: true},
		{Name: "payment_rental_id_fkey", Columns: []string{"rental_id"}, RefSchema: "public", RefTable: "rental", RefColumns: []string{"rental_id"}},
	}
	if d := cmp.Diff(wantFKs, payment.ForeignKeys); d != "" {
		t.Errorf("payment's foreign keys (-want +got):\n%s", d)
	}
	for name, parent := range map[string]string{"p1": "payment", "p2": "payment", "p3": "payment", "p3a": "p3"} {
		if d := cmp.Diff(public(parent), byName[name].Parent); d != "" {
			t.Errorf("%s's parent (-want +got):\n%s", name, d)
		}
	}
	var p1FKs []string
	for _, fk := range byName["p1"].ForeignKeys {
		p1FKs = append(p1FKs, fk.Name)
	}
	if d := cmp.Diff([]string{"p1_customer_fk", "p1_rental_fk", "p1_staff_fk"}, p1FKs); d != "" {
		t.Errorf("p1 declares (-want +got):\n%s", d)
	}

	one, err := cat.Table(ctx, pgx.Identifier{"payment"})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(payment, one, cmpopts.IgnoreUnexported(extract.Table{})); d != "" {
		t.Errorf("Table(payment) differs from Tables' (-Tables +Table):\n%s", d)
	}
	if _, err := cat.Table(ctx, pgx.Identifier{"missing"}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Table(missing): %v, want an error naming it", err)
	}
	keys, err := cat.UniqueKeys(ctx, pgx.Identifier{"public", "customer"})
	if err != nil || len(keys) != 3 || !keys[0].Primary {
		t.Errorf("UniqueKeys(customer) = %+v, %v; want its three keys, the primary key first", keys, err)
	}
	for schema, want := range map[string][]string{"": {"customer", "customer_v", "log", "p1", "p2", "p3", "p3a", "payment", "rental", "staff"}, "pg_toast": nil} {
		names, err := cat.RelationNames(ctx, schema)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, names, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("RelationNames(%q) (-want +got):\n%s", schema, d)
		}
	}
	rel, err := cat.Relation(ctx, pgx.Identifier{"customer"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rel.Columns) != 4 || rel.Partitioned {
		t.Errorf("Relation(customer) = %+v: want 4 columns (not the generated one), not partitioned", rel)
	}
}

// TestCatalogPublicationAndSlot reads a publication's flags and tables and
// a logical replication slot; missing ones are reported as such.
func TestCatalogPublicationAndSlot(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE b (id int PRIMARY KEY); CREATE TABLE a (id int PRIMARY KEY);
CREATE PUBLICATION pub FOR TABLE b, a WITH (publish = 'insert, delete', publish_via_partition_root = true)`)
	ctx := context.Background()
	conn := testenv.Connect(t, url)
	cat := extract.NewCatalog(conn)
	p, ok, err := cat.Publication(ctx, "pub")
	if err != nil || !ok {
		t.Fatalf("Publication(pub): %v, %v", ok, err)
	}
	want := &extract.Publication{Name: "pub", Insert: true, Delete: true, ViaRoot: true,
		Tables: []pgx.Identifier{{"public", "a"}, {"public", "b"}}}
	if d := cmp.Diff(want, p); d != "" {
		t.Errorf("publication (-want +got):\n%s", d)
	}
	if !p.Publishes(pgx.Identifier{"public", "a"}) || p.Publishes(pgx.Identifier{"public", "c"}) {
		t.Errorf("Publishes: want a, not c")
	}
	if _, ok, err := cat.Publication(ctx, "nope"); ok || err != nil {
		t.Errorf("Publication(nope): %v, %v; want not found", ok, err)
	}
	// Listed by name: what ALTER PUBLICATION … DROP TABLE can take out; a
	// publication FOR ALL TABLES publishes a and b but lists neither.
	testenv.Exec(t, url, `CREATE TABLE "C" (id int PRIMARY KEY); CREATE PUBLICATION every FOR ALL TABLES`)
	var oids []uint32
	if err := conn.QueryRow(ctx, `SELECT array_agg(oid ORDER BY oid) FROM pg_class WHERE relname IN ('a', 'b', 'C') AND relkind = 'r'`).Scan(&oids); err != nil {
		t.Fatal(err)
	}
	for pub, want := range map[string][]string{"pub": {"public.a", "public.b"}, "every": nil} {
		if got, err := cat.ListedTables(ctx, pub, oids); err != nil || !slices.Equal(got, want) {
			t.Errorf("ListedTables(%s) = %q, %v; want %q", pub, got, err, want)
		}
	}

	var db string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	slot := strings.ToLower(strings.NewReplacer("-", "_").Replace(db))
	if _, err := conn.Exec(ctx, "SELECT pg_create_logical_replication_slot($1, 'pgoutput')", slot); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Exec(context.Background(), "SELECT pg_drop_replication_slot($1)", slot) })
	s, ok, err := cat.Slot(ctx, slot)
	if err != nil || !ok || s.Name != slot || s.ConfirmedFlush == 0 || s.Active {
		t.Errorf("Slot(%s) = %+v, %v, %v; want it, a confirmed position, inactive", slot, s, ok, err)
	}
	if _, ok, err := cat.Slot(ctx, "nope"); ok || err != nil {
		t.Errorf("Slot(nope): %v, %v; want not found", ok, err)
	}
}

// TestUniqueKeysProveUniqueness: an index that does not keep the rows a query
// reads unique is no unique key: an invalid one (a failed CREATE UNIQUE INDEX
// CONCURRENTLY) or an inheritance parent's, whose children's rows it reads.
func TestUniqueKeysProveUniqueness(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE u (id int PRIMARY KEY, email text);
INSERT INTO u VALUES (1, 'a@x'), (2, 'a@x');
CREATE TABLE p (id int PRIMARY KEY); CREATE TABLE c () INHERITS (p);
CREATE TABLE r (id int PRIMARY KEY, at int) PARTITION BY RANGE (id);
CREATE TABLE r1 PARTITION OF r FOR VALUES FROM (0) TO (10)`)
	conn := testenv.Connect(t, url)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "CREATE UNIQUE INDEX CONCURRENTLY u_email ON u (email)"); err == nil {
		t.Fatal("CREATE UNIQUE INDEX CONCURRENTLY over duplicates succeeded")
	}
	cat := extract.NewCatalog(conn)
	for table, want := range map[string][]string{"u": {"u_pkey"}, "p": nil, "r": {"r_pkey"}} {
		keys, err := cat.UniqueKeys(ctx, pgx.Identifier{table})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, k := range keys {
			names = append(names, k.Name)
		}
		if d := cmp.Diff(want, names); d != "" {
			t.Errorf("UniqueKeys(%s) (-want +got):\n%s", table, d)
		}
	}
}
