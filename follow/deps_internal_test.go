package follow

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// The fan-out of one change, without a database: a moved, re-labelled
// address affects its own row (and its old and new keys) and the
// customers that embed it before and after; a NULL or unsent join value
// joins nothing; a table the graph does not know is ignored.
func TestGraphFansOut(t *testing.T) {
	m, err := mapping.Parse("m.yaml", []byte(`name: fanout
table: {name: fanout}
entities:
  Customer:
    source: {table: customers}
    pk: C#${customer_id}
    sk: C
    embed:
      addresses: {source: {table: addresses}, join: {customer_id: customer_id}}
  Address:
    source: {table: addresses}
    pk: C#${customer_id}
    sk: A#${label}
`))
	if err != nil {
		t.Fatal(err)
	}
	customers := []extract.Column{{Name: "customer_id", Type: "int8", PrimaryKey: true, KeyPos: 1}, {Name: "name", Type: "text"}}
	addresses := []extract.Column{{Name: "address_id", Type: "int8", PrimaryKey: true, KeyPos: 1},
		{Name: "customer_id", Type: "int8"}, {Name: "label", Type: "text"}, {Name: "city", Type: "text"}}
	plans := make([]*transform.Plan, 2)
	if plans[0], err = transform.Compile(m, 0, transform.Sources{Columns: customers, Embed: map[string][]extract.Column{"addresses": addresses}}); err != nil {
		t.Fatal(err)
	}
	if plans[1], err = transform.Compile(m, 1, transform.Sources{Columns: addresses}); err != nil {
		t.Fatal(err)
	}
	g := &Graph{plans: plans, keyCols: [][]string{{"customer_id"}, {"customer_id", "label"}}, tables: map[string]*table{
		"public.customers": {schema: "public", name: "customers", rel: extract.Relation{OID: 101}, effects: []effect{{kind: own, entity: 0, on: [][2]string{{"customer_id", "customer_id"}}}}},
		"public.addresses": {schema: "public", name: "addresses", rel: extract.Relation{OID: 102}, effects: []effect{
			{kind: own, entity: 1, on: [][2]string{{"address_id", "address_id"}}},
			{kind: child, entity: 0, on: [][2]string{{"customer_id", "customer_id"}}}}},
	}, byOID: map[uint32]*table{}}
	for _, t := range g.tables {
		g.byOID[t.rel.OID] = t
	}
	if d := cmp.Diff([]string{"address_id", "customer_id", "label"}, g.identity(g.tables["public.addresses"])); d != "" {
		t.Errorf("addresses' identity (-want +got):\n%s", d)
	}

	str := func(s string) *string { return &s }
	a := newAffected()
	g.add(a, Change{Rel: 102, Schema: "public", Table: "addresses", Kind: 'U',
		Old: map[string]*string{"address_id": str("5"), "customer_id": str("1"), "label": str("home"), "city": str("x")},
		New: map[string]*string{"address_id": str("5"), "customer_id": str("2"), "label": str("work"), "city": str("x")}})
	g.add(a, Change{Rel: 102, Schema: "public", Table: "addresses", Kind: 'I', New: map[string]*string{"address_id": str("6"), "customer_id": nil}})
	g.add(a, Change{Rel: 103, Schema: "public", Table: "other", Kind: 'I', New: map[string]*string{"id": str("1")}})
	// An update that leaves the key columns as they were: one image.
	g.add(a, Change{Rel: 102, Schema: "public", Table: "addresses", Kind: 'U',
		Old: map[string]*string{"address_id": str("7"), "customer_id": str("3"), "label": str("home"), "city": str("x")},
		New: map[string]*string{"address_id": str("7"), "customer_id": str("3"), "label": str("home"), "city": str("y")}})

	got := map[string][]string{}
	for _, mt := range a.matches {
		for _, vals := range mt.values {
			got[plans[mt.entity].Entity().Name+" by "+mt.cols[0]] = append(got[plans[mt.entity].Entity().Name+" by "+mt.cols[0]], *vals[0])
		}
	}
	for k := range got {
		slices.Sort(got[k])
	}
	want := map[string][]string{
		"Address by address_id":   {"5", "6", "7"}, // the moved row, the new one and the updated one, each once
		"Customer by customer_id": {"1", "2", "3"}, // the embed before and after; NULL joins nothing
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rows derived again (-want +got):\n%s", d)
	}
	if a.changes != 3 || len(a.images[1]) != 4 || len(a.images[0]) != 0 {
		t.Errorf("%d changes counted, %d Address images, %d Customer images; want 3 (the unknown table ignored), 4 (old, new, inserted, updated in place once), 0",
			a.changes, len(a.images[1]), len(a.images[0]))
	}
	// The old image renders the key the move leaves behind.
	var b = transform.NewBuilder()
	keys, err := b.TableKeys(plans[1], []any{int64(5), int64(1), "home", "x"})
	if err != nil || len(keys) != 1 || keys[0] != [2]string{"C#0000000000000000001", "A#home"} {
		t.Errorf("old keys %v, %v", keys, err)
	}
}

// CheckIdentity reads each followed table's replica identity by OID and
// names those whose identity lacks columns the graph needs: DEFAULT
// carries the primary key, USING INDEX that index's columns, NOTHING
// none; FULL always suffices. A partitioned table's leaf partitions are
// checked too: pgoutput builds their old rows from their own identity.
func TestCheckIdentityNamesWhatIsMissing(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE d (id int PRIMARY KEY, owner text);
CREATE TABLE f (id int PRIMARY KEY, owner text); ALTER TABLE f REPLICA IDENTITY FULL;
CREATE TABLE i (id int NOT NULL, owner text NOT NULL); CREATE UNIQUE INDEX i_idx ON i (id, owner); ALTER TABLE i REPLICA IDENTITY USING INDEX i_idx;
CREATE TABLE n (id int PRIMARY KEY, owner text); ALTER TABLE n REPLICA IDENTITY NOTHING;
CREATE TABLE p (id int PRIMARY KEY, owner text) PARTITION BY RANGE (id); ALTER TABLE p REPLICA IDENTITY FULL;
CREATE TABLE p1 PARTITION OF p FOR VALUES FROM (0) TO (10); CREATE TABLE p2 PARTITION OF p FOR VALUES FROM (10) TO (20);
ALTER TABLE p2 REPLICA IDENTITY FULL`)
	ctx := context.Background()
	conn := testenv.Connect(t, url)
	g := &Graph{tables: map[string]*table{}, byOID: map[uint32]*table{}}
	for _, name := range []string{"d", "f", "i", "n", "p"} {
		rel, err := extract.NewCatalog(conn).Relation(ctx, pgx.Identifier{name})
		if err != nil {
			t.Fatal(err)
		}
		tb := &table{schema: rel.Schema, name: rel.Name, rel: rel, identity: []string{"id", "owner"}}
		g.tables["public."+name], g.byOID[rel.OID] = tb, tb
	}
	err := g.CheckIdentity(ctx, conn)
	want := "--follow cannot find what every change affects:\n" +
		"  \"public\".\"d\": its replica identity lacks owner, which the old row of a change must carry (); run: ALTER TABLE \"public\".\"d\" REPLICA IDENTITY FULL\n" +
		"  \"public\".\"n\": its replica identity lacks id, owner, which the old row of a change must carry (); run: ALTER TABLE \"public\".\"n\" REPLICA IDENTITY FULL\n" +
		"  p1, a partition of \"public\".\"p\": its replica identity lacks owner, which the old row of a change must carry (); run: ALTER TABLE p1 REPLICA IDENTITY FULL"
	if err == nil || err.Error() != want {
		t.Errorf("CheckIdentity: %v\nwant: %s", err, want)
	}
	testenv.Exec(t, url, "DROP TABLE n")
	if err := g.CheckIdentity(ctx, conn); err == nil || !strings.Contains(err.Error(), "public.n: the table no longer exists") {
		t.Errorf("CheckIdentity after DROP TABLE n: %v, want it named as gone", err)
	}
}
