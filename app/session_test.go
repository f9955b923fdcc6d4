package app

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// The same rows migrate to the same items, keys included, whatever the
// settings of the sessions pg2dynamo opens: a second run after ALTER
// DATABASE … SET DateStyle, IntervalStyle, TimeZone, bytea_output and
// extra_float_digits, and with PGOPTIONS, writes item for item what the
// first wrote under PostgreSQL's defaults, and its verify (new sessions
// too) passes, access pattern included.
func TestItemsIndependentOfSessionSettings(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `
CREATE TYPE pair AS (ip inet, f double precision, b bytea, d date);
CREATE TABLE ev (id integer PRIMARY KEY, span interval NOT NULL, during tstzrange, days daterange, at timetz,
  spot point, pr pair, spans interval[]);
INSERT INTO ev VALUES
  (1, '1 day 02:00', tstzrange('2024-01-02 03:04:05.5+02', '2024-01-03'), '[2024-02-29,2024-03-02)', '13:14:15+02',
   point(0.1, 1e-7), ROW('10.1.2.3', 0.1, '\x00ff', '2024-02-29'), '{"1 mon -2 days", "-00:00:01.5"}'),
  (2, '-3 mons 4 days 00:00:00.25', NULL, NULL, NULL, NULL, NULL, NULL);`)
	mappingFile := writeMapping(t, `name: events
table: {name: events}
entities:
  Ev:
    source: {table: ev}
    pk: EV#${id}
    sk: SPAN#${span:0}
access_patterns:
  EventBySpan:
    key_condition: "PK = EV#${id} AND SK = SPAN#${span}"
`)
	migrate := func() []string {
		t.Helper()
		table := testenv.TableName("ev")
		r := runCLI(t, migrateArgs(t, mappingFile, url, table, "--create-table")...)
		// verify queries the pattern with each row's interval, sampled in
		// its text form.
		if r.code != ExitOK || !strings.Contains(r.stdout, "2 access-pattern queries, 0 wrong") {
			t.Fatalf("exit %d, want 0 with both rows' patterns checked\n%s%s", r.code, r.stdout, r.stderr)
		}
		items := testenv.CanonicalItems(scanAll(t, dynamoClient(t), table))
		slices.Sort(items)
		return items
	}
	first := migrate()

	var db string
	if err := testenv.Connect(t, url).QueryRow(context.Background(), "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	alter := "ALTER DATABASE " + pgx.Identifier{db}.Sanitize() + " SET "
	testenv.Exec(t, url, alter+"DateStyle = 'SQL, DMY'; "+alter+"TimeZone = 'America/New_York'; "+
		alter+"bytea_output = 'escape'; "+alter+"extra_float_digits = -3;")
	t.Setenv("PGOPTIONS", "-c IntervalStyle=sql_standard")
	second := migrate()

	if d := cmp.Diff(first, second); d != "" {
		t.Errorf("items under other session settings (-defaults +other):\n%s", d)
	}
	want := `{"PK":{"S":"EV#0000000001"},"SK":{"S":"SPAN#1 day 02:00:00"},"at":{"S":"13:14:15+02"},` +
		`"days":{"S":"[2024-02-29,2024-03-02)"},"during":{"S":"[\"2024-01-02 01:04:05.5+00\",\"2024-01-03 00:00:00+00\")"},` +
		`"id":{"N":"1"},"pr":{"S":"(10.1.2.3,0.1,\"\\\\x00ff\",2024-02-29)"},"span":{"S":"1 day 02:00:00"},` +
		`"spans":{"L":[{"S":"1 mon -2 days"},{"S":"-00:00:01.5"}]},"spot":{"S":"(0.1,1e-07)"},"type":{"S":"Ev"}}`
	if len(second) != 2 || second[0] != want {
		t.Errorf("items %q\nwant the first %s", second, want)
	}
}
