package app

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// A table nothing identifies is named, on stderr and in the draft, with
// what to do: the statement that gives it a key, on a column the data
// shows distinct and never NULL, else an identity column. Run as printed,
// each statement makes the next init draft the table. A UNIQUE index on
// NOT NULL columns identifies rows as a constraint does.
func TestInitSaysWhatToDoWithKeylessTables(t *testing.T) {
	t.Parallel()
	src := testenv.NewDatabase(t)
	testenv.Exec(t, src, `CREATE TABLE author (author_id integer PRIMARY KEY, name text NOT NULL);
CREATE TABLE audit_log (id integer NOT NULL, at timestamptz NOT NULL, note text);
CREATE TABLE page_view (author_id integer, viewed date);
CREATE TABLE tag (tag text NOT NULL, label text);
CREATE UNIQUE INDEX tag_tag ON tag (tag);
INSERT INTO author VALUES (1, 'Ann'), (2, 'Bo');
INSERT INTO audit_log VALUES (1, '2024-01-01', 'a'), (2, '2024-01-02', NULL), (3, '2024-01-03', 'a');
INSERT INTO page_view VALUES (1, '2024-01-01'), (1, '2024-01-01'), (NULL, '2024-01-02');
INSERT INTO tag VALUES ('go', 'Go'), ('sql', NULL);`)
	file := filepath.Join(t.TempDir(), "mapping.yaml")
	r := runCLI(t, "init", "--source", src, "--out", file)
	if r.code != ExitOK {
		t.Fatalf("init: exit %d\n%s", r.code, r.stderr)
	}
	m, err := mapping.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if !entityNames(m)["Tag"] {
		t.Errorf("tag, keyed by a UNIQUE index on a NOT NULL column, is not drafted: %v", entityNames(m))
	}
	draft, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fix := regexp.MustCompile(`ALTER TABLE [^;]*`)
	for table, want := range map[string]string{
		"audit_log": `ALTER TABLE "public"."audit_log" ADD PRIMARY KEY ("id")`,
		"page_view": `ALTER TABLE "public"."page_view" ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY`,
	} {
		_, line, ok := strings.Cut(r.stderr, "left out "+table+": ")
		line, _, _ = strings.Cut(line, "\n")
		if got := fix.FindString(line); !ok || got != want {
			t.Errorf("%s: stderr says %q, want %q:\n%s", table, got, want, r.stderr)
			continue
		}
		if !strings.Contains(strings.Join(strings.Fields(strings.ReplaceAll(string(draft), "#", "")), " "), want) {
			t.Errorf("the draft's list of tables left out does not say %q:\n%s", want, draft)
		}
		testenv.Exec(t, src, want)
	}
	if strings.Contains(r.stderr, "(so are at)") == false {
		t.Errorf("stderr does not name the other column distinct and never NULL (at):\n%s", r.stderr)
	}
	file2 := filepath.Join(t.TempDir(), "mapping.yaml")
	if r := runCLI(t, "init", "--source", src, "--out", file2); r.code != ExitOK || strings.Contains(r.stderr, "left out") {
		t.Fatalf("init after the statements: exit %d, or still leaves a table out:\n%s", r.code, r.stderr)
	}
	m2, err := mapping.Load(file2)
	if err != nil {
		t.Fatal(err)
	}
	if names := entityNames(m2); !names["AuditLog"] || !names["PageView"] {
		t.Errorf("after the statements, the entities are %v: want AuditLog and PageView among them", entityNames(m2))
	}
}

// Every entity is found by its own id: Pagila's payment, partitioned by
// payment_date and so keyed by (payment_date, payment_id), is found by
// payment_id alone through GSI2, since the data shows it distinct and
// never NULL; a shipment whose shipment_id repeats across dates is found
// by its whole key. As in Pagila, only one partition declares the foreign
// key to customer: every payment has its customer in the data, so the
// draft keeps payments in their customer's collection, saying why. verify
// runs every drafted pattern against the migrated table, each returning
// the item of every row sampled.
func TestInitFindsEachEntityByItsOwnID(t *testing.T) {
	parallel(t)
	src := testenv.NewDatabase(t)
	testenv.Exec(t, src, `CREATE TABLE customer (customer_id integer PRIMARY KEY, name text NOT NULL);
CREATE TABLE payment (payment_id integer NOT NULL, customer_id integer NOT NULL, amount numeric(5,2) NOT NULL,
  payment_date timestamptz NOT NULL, PRIMARY KEY (payment_date, payment_id)) PARTITION BY RANGE (payment_date);
CREATE TABLE payment_p2022_01 PARTITION OF payment FOR VALUES FROM ('2022-01-01') TO ('2022-02-01');
CREATE TABLE payment_p2022_02 PARTITION OF payment FOR VALUES FROM ('2022-02-01') TO ('2022-03-01');
ALTER TABLE ONLY payment_p2022_01 ADD CONSTRAINT payment_p2022_01_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES customer;
INSERT INTO customer SELECT i, 'c' || i FROM generate_series(1, 5) i;
CREATE TABLE shipment (shipped_on date NOT NULL, shipment_id integer NOT NULL, PRIMARY KEY (shipped_on, shipment_id));
INSERT INTO payment SELECT i, i % 5 + 1, i % 7 + 0.99, '2022-01-01'::timestamptz + i * interval '9 hours' FROM generate_series(1, 100) i;
INSERT INTO shipment SELECT '2022-01-01'::date + i % 3, i % 5 FROM generate_series(1, 15) i;`)
	file := filepath.Join(t.TempDir(), "mapping.yaml")
	r := runCLI(t, "init", "--source", src, "--out", file)
	if r.code != ExitOK {
		t.Fatalf("init: exit %d\n%s", r.code, r.stderr)
	}
	m, err := mapping.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{"GetPayment": {"payment_id"}, "GetShipment": {"shipment_id", "shipped_on"}} {
		i := slices.IndexFunc(m.AccessPatterns, func(ap *mapping.AccessPattern) bool { return ap.Name == name })
		if i < 0 {
			t.Errorf("no pattern %s", name)
			continue
		}
		if got := sortedCopy(m.AccessPatterns[i].Condition.Columns()); !slices.Equal(got, want) {
			t.Errorf("%s takes %v, want %v", name, got, want)
		}
	}
	if p := m.Entity("Payment"); p == nil || p.PK != "CUSTOMER#${customer_id}" {
		t.Errorf("payment: %+v, want in its customer's collection", p)
	}
	if want := "suggested relation payment.customer_id → customer (customer_id), declared by some of its partitions only: drafted as a foreign key"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
	}
	table := testenv.TableName("ownid")
	if r := runCLI(t, migrateArgs(t, file, src, table, "--create-table")...); r.code != ExitOK {
		t.Fatalf("migrate: exit %d\n%s", r.code, r.stderr)
	}
	checkDraftedPatterns(t, file, src, table)
}

// suggestedSQL is shaped like the Rebrickable lego database, which
// declares no foreign key: columns named after another table (theme_id
// and themes keyed by id) or as its key (set_num and sets keyed by
// set_num). A review's customer_id has values no customer has.
const suggestedSQL = `
CREATE TABLE themes (id integer PRIMARY KEY, name text NOT NULL, parent_id integer);
CREATE TABLE sets (set_num text PRIMARY KEY, name text NOT NULL, theme_id integer NOT NULL);
CREATE TABLE inventories (id integer PRIMARY KEY, version integer NOT NULL, set_num text NOT NULL);
CREATE TABLE customer (customer_id integer PRIMARY KEY, name text NOT NULL);
CREATE TABLE review (review_id integer PRIMARY KEY, customer_id integer, body text NOT NULL);
INSERT INTO themes SELECT i, 'theme ' || i, NULLIF(i % 3, 0) FROM generate_series(1, 6) i;
INSERT INTO sets SELECT 's-' || i, 'set ' || i, i % 6 + 1 FROM generate_series(1, 40) i;
INSERT INTO inventories SELECT i, 1, 's-' || (i % 40 + 1) FROM generate_series(1, 60) i;
INSERT INTO customer SELECT i, 'c' || i FROM generate_series(1, 5) i;
INSERT INTO review SELECT i, i % 7, 'ok' FROM generate_series(1, 20) i;`

// A database without foreign keys gets relations suggested by its column
// names, each with its evidence in the draft: drafted as foreign keys
// (sets found by theme through GSI1, inventories embedded in their set) when
// every value has a parent row, named only when some have none. The draft
// migrates, and verify runs every access pattern it declares.
func TestInitSuggestsRelationsFromColumnNames(t *testing.T) {
	parallel(t)
	src := testenv.NewDatabase(t)
	testenv.Exec(t, src, suggestedSQL)
	file := filepath.Join(t.TempDir(), "mapping.yaml")
	r := runCLI(t, "init", "--source", src, "--out", file)
	if r.code != ExitOK {
		t.Fatalf("init: exit %d\n%s", r.code, r.stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	draft := strings.Join(strings.Fields(strings.ReplaceAll(string(data), "#", "")), " ")
	for _, want := range []string{
		"Suggested relation, drafted as a foreign key: theme_id → themes (id): no foreign key declares it, but the column is named after themes, keyed by id, of its type, and each of its 6 distinct values has a theme row",
		"Suggested relation, drafted as a foreign key: set_num → sets (set_num): no foreign key declares it, but the column is named as sets's key set_num",
		"Suggested relation, not drafted: customer_id → customer (customer_id): named as customer's key customer_id, of its type, but 2 of its 7 distinct values have no customer row",
		"owned by themes (theme_id, NOT NULL, suggested by its name: no foreign key declares it;",
	} {
		if !strings.Contains(draft, want) {
			t.Errorf("the draft does not say %q:\n%s", want, data)
		}
	}
	if strings.Contains(draft, "parent_id →") {
		t.Errorf("parent_id, named after no table, is suggested:\n%s", data)
	}
	for _, want := range []string{"suggested relation sets.theme_id → themes (id)", "suggested relation review.customer_id → customer (customer_id), from the column's name (no foreign key declares it): not drafted: 2 of its 7 values have no parent row"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
		}
	}
	m, err := mapping.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	set := m.Entity("Set")
	if set == nil || set.Indexes["GSI1"].PK != "THEME#${theme_id}" || set.Embed["inventories"] == nil {
		t.Errorf("sets: %+v: want found by theme through GSI1, its inventories embedded", set)
	}
	table := testenv.TableName("suggested")
	if r := runCLI(t, migrateArgs(t, file, src, table, "--create-table")...); r.code != ExitOK {
		t.Fatalf("migrate: exit %d\n%s", r.code, r.stderr)
	}
	checkDraftedPatterns(t, file, src, table)
}

// init checks its draft as plan --with-source does, reading every row
// through it: a row whose item would pass DynamoDB's 400 KB is named with
// its key and reason, the draft is written, and init exits 5; plan
// --with-source on that draft counts the same reject.
func TestInitChecksItsDraftAsPlanDoes(t *testing.T) {
	t.Parallel()
	src := testenv.NewDatabase(t)
	testenv.Exec(t, src, `CREATE TABLE note (note_id integer PRIMARY KEY, body text NOT NULL);
INSERT INTO note SELECT i, repeat(md5(i::text), CASE WHEN i = 2 THEN 14000 ELSE 3 END) FROM generate_series(1, 3) i;`)
	file := filepath.Join(t.TempDir(), "mapping.yaml")
	r := runCLI(t, "init", "--source", src, "--out", file)
	if r.code != ExitUnbound {
		t.Fatalf("init: exit %d, want %d:\n%s", r.code, ExitUnbound, r.stderr)
	}
	for _, want := range []string{"the draft is written, but it would reject 1 row (as plan --with-source and migrate would)", "entity Note: 1 of 3 rows", "first row note_id=2"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
		}
	}
	p := runCLI(t, "plan", "--mapping", file, "--with-source", "--source", src, "--format", "json")
	if p.code != ExitOK {
		t.Fatalf("plan: exit %d\n%s", p.code, p.stderr)
	}
	if !strings.Contains(p.stdout, `"rejected": 1`) {
		t.Errorf("plan --with-source does not count the rejected row:\n%.2000s", p.stdout)
	}
}

// A primary key of a type whose key text cannot sort as PostgreSQL orders
// it (numeric without precision, floats, an enum, interval, inet, money,
// oid, time with time zone) is written as ${col:0}, its exact text, in its
// own keys and in those of the tables that refer to it; a bytea key, which
// no string key holds, leaves its table out, listed with why. The other
// tables are drafted, migrated and verified.
func TestInitDraftsKeysOfEveryType(t *testing.T) {
	parallel(t)
	src := testenv.NewDatabase(t)
	testenv.Exec(t, src, `CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE good (id integer PRIMARY KEY);
CREATE TABLE legacy (id numeric PRIMARY KEY, v text);
CREATE TABLE legacy_note (id integer PRIMARY KEY, legacy_id numeric NOT NULL REFERENCES legacy);
CREATE TABLE dbl (id double precision PRIMARY KEY);
CREATE TABLE rl (id real PRIMARY KEY);
CREATE TABLE moods (m mood PRIMARY KEY);
CREATE TABLE iv (i interval PRIMARY KEY);
CREATE TABLE ip (a inet PRIMARY KEY);
CREATE TABLE mo (m money PRIMARY KEY);
CREATE TABLE oi (o oid PRIMARY KEY);
CREATE TABLE tz (t timetz PRIMARY KEY);
CREATE TABLE blob (b bytea PRIMARY KEY);
INSERT INTO good VALUES (1), (2);
INSERT INTO legacy VALUES (1.5, 'a'), (10, 'b'), (9, 'c');
INSERT INTO legacy_note VALUES (1, 1.5), (2, 10), (3, 9);
INSERT INTO dbl VALUES (1.25), (1e20);
INSERT INTO rl VALUES (0.1);
INSERT INTO moods VALUES ('sad'), ('happy');
INSERT INTO iv VALUES ('1 day'), ('2 hours');
INSERT INTO ip VALUES ('10.0.0.1'), ('::1');
INSERT INTO mo VALUES (12.5);
INSERT INTO oi VALUES (7);
INSERT INTO tz VALUES ('10:00+02');
INSERT INTO blob VALUES ('\x0102');`)
	file := filepath.Join(t.TempDir(), "mapping.yaml")
	r := runCLI(t, "init", "--source", src, "--out", file)
	if r.code != ExitOK {
		t.Fatalf("init: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "left out blob: its primary key (b) has a column of type bytea") {
		t.Errorf("stderr does not list blob as left out for its bytea key:\n%s", r.stderr)
	}
	m, err := mapping.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	for name, sk := range map[string]string{"Good": "GOOD#${id}", "Legacy": "LEGACY#${id:0}", "Dbl": "DBL#${id:0}", "Rl": "RL#${id:0}",
		"Mood": "MOOD#${m:0}", "Iv": "IV#${i:0}", "Ip": "IP#${a:0}", "Mo": "MO#${m:0}", "Oi": "OI#${o:0}", "Tz": "TZ#${t:0}"} {
		if e := m.Entity(name); e == nil || e.SK != sk {
			t.Errorf("entity %s: %+v, want sk %s", name, e, sk)
		}
	}
	if e := m.Entity("LegacyNote"); e == nil || e.Indexes["GSI1"].PK != "LEGACY#${legacy_id:0}" {
		t.Errorf("LegacyNote does not look up its legacy as Legacy's keys write it: %+v", e)
	}
	table := testenv.TableName("keytypes")
	if r := runCLI(t, migrateArgs(t, file, src, table, "--create-table")...); r.code != ExitOK {
		t.Fatalf("migrate: exit %d\n%s", r.code, r.stderr)
	}
	checkDraftedPatterns(t, file, src, table)
}
