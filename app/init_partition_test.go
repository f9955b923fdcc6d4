package app

import (
	"cmp"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// partitionedSQL is shaped like the Pagila sample database: payment is
// partitioned by payment_date and declares no foreign key; its partitions
// declare them (to customer, rental and staff), as pg_dump writes Pagila
// (ALTER TABLE ONLY public.payment_p2022_01 ADD CONSTRAINT …). One
// partition is attached, as pg_dump does, rather than created as one.
const partitionedSQL = `
CREATE TABLE customer (customer_id integer PRIMARY KEY, name text NOT NULL);
CREATE TABLE staff (staff_id integer PRIMARY KEY, name text NOT NULL);
CREATE TABLE rental (rental_id integer PRIMARY KEY, customer_id integer NOT NULL REFERENCES customer,
  rental_date timestamptz NOT NULL);
CREATE TABLE payment (payment_id integer NOT NULL, customer_id integer NOT NULL, staff_id integer NOT NULL,
  rental_id integer NOT NULL, amount numeric(5,2) NOT NULL, payment_date timestamptz NOT NULL,
  PRIMARY KEY (payment_date, payment_id)) PARTITION BY RANGE (payment_date);
CREATE TABLE payment_p2022_01 PARTITION OF payment FOR VALUES FROM ('2022-01-01') TO ('2022-02-01');
CREATE TABLE payment_p2022_02 (LIKE payment INCLUDING ALL);
ALTER TABLE payment ATTACH PARTITION payment_p2022_02 FOR VALUES FROM ('2022-02-01') TO ('2022-03-01');
ALTER TABLE ONLY payment_p2022_01 ADD CONSTRAINT payment_p2022_01_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES customer;
ALTER TABLE ONLY payment_p2022_01 ADD CONSTRAINT payment_p2022_01_rental_id_fkey FOREIGN KEY (rental_id) REFERENCES rental;
ALTER TABLE ONLY payment_p2022_01 ADD CONSTRAINT payment_p2022_01_staff_id_fkey FOREIGN KEY (staff_id) REFERENCES staff;
ALTER TABLE ONLY payment_p2022_02 ADD CONSTRAINT payment_p2022_02_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES customer;
ALTER TABLE ONLY payment_p2022_02 ADD CONSTRAINT payment_p2022_02_rental_id_fkey FOREIGN KEY (rental_id) REFERENCES rental;
ALTER TABLE ONLY payment_p2022_02 ADD CONSTRAINT payment_p2022_02_staff_id_fkey FOREIGN KEY (staff_id) REFERENCES staff;
INSERT INTO customer SELECT i, 'customer ' || i FROM generate_series(1, 20) i;
INSERT INTO staff VALUES (1, 'Mike'), (2, 'Jon');
INSERT INTO rental SELECT i, i % 20 + 1, '2022-01-01'::timestamptz + i * interval '13 hours' FROM generate_series(1, 90) i;
INSERT INTO payment SELECT i, r.customer_id, i % 2 + 1, r.rental_id, (i % 7) + 0.99, r.rental_date + interval '1 hour'
  FROM generate_series(1, 120) i JOIN rental r ON r.rental_id = (i - 1) % 90 + 1;
`

// TestInitDraftsPartitionForeignKeys drafts a schema whose partitioned
// table's foreign keys are declared on its partitions only (issue 29): the
// payments must be drafted under a parent, as for a foreign key the table
// declares, not as an isolated collection, and the partitions must not be
// entities of their own; a payment is found by payment_id alone (its key
// also holds payment_date, as a partitioned table's must), which the data
// shows distinct. The draft is the same on a second run and equal
// to its golden file; it migrates with one item per row (0 rejects) and
// verify runs every drafted access pattern.
func TestInitDraftsPartitionForeignKeys(t *testing.T) {
	parallel(t)
	src := testenv.NewDatabase(t)
	file := filepath.Join(t.TempDir(), "partitioned.sql")
	if err := os.WriteFile(file, []byte(partitionedSQL), 0o644); err != nil {
		t.Fatal(err)
	}
	psqlFile(t, src, file)

	var drafts [2]string
	for i := range drafts {
		out := filepath.Join(t.TempDir(), "mapping.yaml")
		r := runCLI(t, "init", "--source", src, "--table", "partitioned", "--out", out)
		if r.code != ExitOK {
			t.Fatalf("init exit %d\nstderr:\n%s", r.code, r.stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		drafts[i] = string(b)
		file = out
	}
	if drafts[0] != drafts[1] {
		t.Errorf("two drafts of the same database differ (-first +second):\n%s", gocmp.Diff(drafts[0], drafts[1]))
	}
	u, err := url.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "init/partitioned.yaml", strings.ReplaceAll(drafts[0], strings.TrimPrefix(u.Path, "/"), "DATABASE"))

	m, err := mapping.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, e := range m.Entities {
		types[cmp.Or(e.Type, e.Name)] = e.Source.Table
		if strings.HasPrefix(e.Source.Table, "payment_") {
			t.Errorf("entity %s drafts partition %s: partitions are read through their partitioned table", e.Name, e.Source.Table)
		}
		if e.Source.Table == "payment" && strings.HasPrefix(e.PK, "PAYMENT#") {
			t.Errorf("payment is drafted in its own item collection (pk %s): the foreign keys its partitions declare were missed", e.PK)
		}
	}
	if !slices.Contains(slices.Collect(maps.Values(types)), "payment") {
		t.Fatalf("no entity reads payment; entities: %v", types)
	}

	table := testenv.TableName("partitioned")
	r := runCLI(t, migrateArgs(t, file, src, table, "--create-table")...)
	if r.code != ExitOK {
		t.Fatalf("migrate exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	want := countRows(t, src, types)
	maps.DeleteFunc(want, func(_ string, n int64) bool { return n == 0 })
	if d := gocmp.Diff(want, countByType(scanAll(t, dynamoClient(t), table))); d != "" {
		t.Errorf("items per type differ from count(*) per table (-want +got):\n%s", d)
	}
	checkDraftedPatterns(t, file, src, table)
}
