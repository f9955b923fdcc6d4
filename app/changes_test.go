package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/fixtures"
	"github.com/pg2dynamo/pg2dynamo/tools/faultproxy"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// changedTickets changes the tickets fixture's source after a migration:
// 50 tickets updated, 10 deleted, 10 inserted and 5 given another key
// (ticket_id), which on the strategies mapping is 50 changed items, 15 new
// and 15 stale.
const changedTickets = `
UPDATE tickets SET subject = subject || ' (edited)' WHERE ticket_id IN (SELECT ticket_id FROM tickets ORDER BY ticket_id LIMIT 50);
DELETE FROM tickets WHERE ticket_id IN (SELECT ticket_id FROM tickets ORDER BY ticket_id OFFSET 50 LIMIT 10);
INSERT INTO tickets (ticket_id, org_id, user_id, subject, status, priority, created_at, updated_at, tags, metadata)
  SELECT ticket_id + 5000000, org_id, user_id, 'copy of ' || subject, status, priority, created_at, updated_at, tags, metadata
  FROM tickets ORDER BY ticket_id OFFSET 60 LIMIT 10;
UPDATE tickets SET ticket_id = ticket_id + 6000000 WHERE ticket_id IN (SELECT ticket_id FROM tickets ORDER BY ticket_id OFFSET 70 LIMIT 5);`

// changesFixture migrates the tickets fixture with the strategies mapping
// into a new table, puts an item of another writer's type in it, then
// changes the source (changedTickets). It returns the source, the mapping
// file and the table.
func changesFixture(t *testing.T) (src, mappingFile, table string) {
	t.Helper()
	ctx := context.Background()
	src = testenv.NewDatabase(t)
	if _, err := fixtures.Load(ctx, testenv.Connect(t, src), "tickets", 0.1, 1); err != nil {
		t.Fatal(err)
	}
	mappingFile = testenv.RepoFile(t, "fixtures", "mappings", "strategies", "tickets.yaml")
	table = testenv.TableName("changes")
	if r := runCLI(t, migrateArgs(t, mappingFile, src, table, "--create-table", "--no-verify")...); r.code != ExitOK {
		t.Fatalf("migrate exit %d\n%s", r.code, r.stderr)
	}
	note := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "USER#0000000000000000001"},
		"SK": &types.AttributeValueMemberS{Value: "NOTE#1"}, "type": &types.AttributeValueMemberS{Value: "Note"}}
	if _, err := dynamoClient(t).PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: note}); err != nil {
		t.Fatal(err)
	}
	testenv.Exec(t, src, changedTickets)
	return src, mappingFile, table
}

// changesReport is what the tests read of a --changes-only JSON report.
type changesReport struct {
	OK      bool
	Summary struct{ New, Changed, Stale int64 }
	Applied struct {
		Command            string
		Written, Deleted   int64
		Skipped, Rejected  int64
		WriteUnits         int64   `json:"write_units"`
		ConsumedWriteUnits float64 `json:"consumed_write_units"`
		FullWriteUnits     int64   `json:"full_write_units"`
		ReadBack           bool    `json:"read_back"`
		Counts             outcome.AppliedCounts
	}
	Written, Deleted, Unapplied []outcome.ItemRef
}

func readChangesReport(t *testing.T, path string) changesReport {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r changesReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

func refStrings(refs []outcome.ItemRef) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.PK + " " + r.SK
	}
	slices.Sort(out)
	return out
}

// After 50 tickets updated, 10 deleted, 10 inserted and 5 given another
// key, migrate --changes-only sends exactly the writes diff announced, as
// a recording proxy in front of dynalite counts them: a put of each new
// and changed item, a delete of each stale one (none of another writer's
// item), for diff's estimate of write units; it reads every write back and
// passes, verify passes, and a second run writes and deletes nothing.
func TestChangesOnlyWritesOnlyTheDifferences(t *testing.T) {
	parallel(t)
	src, mappingFile, table := changesFixture(t)
	dir := t.TempDir()
	r := runCLI(t, "diff", "--mapping", mappingFile, "--source", src, "--endpoint-url", dynalite(t).Endpoint, "--table", table,
		"--report-json", filepath.Join(dir, "diff.json"))
	if r.code != ExitOK {
		t.Fatalf("diff exit %d\n%s", r.code, r.stderr)
	}
	diff := readReport(t, filepath.Join(dir, "diff.json"))
	if n := diff.Summary; n.New != 15 || n.Changed != 50 || n.Stale != 15 || n.Other != 1 {
		t.Fatalf("diff: %+v; want 15 new, 50 changed, 15 stale and 1 other item", n)
	}
	wantPuts := refStrings(append(listed(t, diff.Missing), changedRefs(listed(t, diff.Changed))...))
	var wantDeletes []string
	for _, ref := range listed(t, diff.Extra) {
		if ref.Type != "Note" {
			wantDeletes = append(wantDeletes, ref.PK+" "+ref.SK)
		}
	}
	slices.Sort(wantDeletes)

	rec := testenv.NewWriteRecorder(t, dynalite(t).Endpoint, "PK", "SK")
	args := withEndpoint(migrateArgs(t, mappingFile, src, table, "--changes-only", "--report-json", filepath.Join(dir, "changes.json"),
		"--html", filepath.Join(dir, "changes.html")), rec.URL)
	r = runCLI(t, args...)
	if r.code != ExitOK || !strings.Contains(r.stdout, "changes-only PASSED") {
		t.Fatalf("migrate --changes-only: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if d := cmp.Diff(wantPuts, rec.Puts()); d != "" {
		t.Errorf("items put (-diff's new and changed +put):\n%s", d)
	}
	if d := cmp.Diff(wantDeletes, rec.Deletes()); d != "" {
		t.Errorf("items deleted (-diff's stale +deleted):\n%s", d)
	}
	if ops := rec.Operations(); ops["DeleteItem"] != 15 || ops["BatchWriteItem"] != 3 || ops["PutItem"] != 0 {
		t.Errorf("requests %v; want 3 BatchWriteItem (65 puts) and 15 DeleteItem", ops)
	}
	rep := readChangesReport(t, filepath.Join(dir, "changes.json"))
	a := rep.Applied
	wantUnits := diff.Cost.ChangeWriteUnits + diff.Cost.StaleWriteUnits
	if !rep.OK || a.Command != "changes-only" || a.Written != 65 || a.Deleted != 15 || a.Skipped != 0 || !a.ReadBack ||
		a.WriteUnits != wantUnits || a.FullWriteUnits != diff.Cost.WriteUnits || a.ConsumedWriteUnits < 80 {
		t.Errorf("report: OK %v, applied %+v; want written 65, deleted 15, read back, %d write units as diff estimated, a full re-put of %d",
			rep.OK, a, wantUnits, diff.Cost.WriteUnits)
	}
	if d := cmp.Diff(wantPuts, refStrings(rep.Written)); d != "" {
		t.Errorf("the report's written list (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantDeletes, refStrings(rep.Deleted)); d != "" {
		t.Errorf("the report's deleted list (-want +got):\n%s", d)
	}
	checkHTMLShows(t, filepath.Join(dir, "changes.html"), `data-applied="written">65 (the comparison found 15 new, 50 changed)<`,
		`data-applied="deleted">15 stale (Ticket 15)<`, `<h2 data-list="stale">Stale items, deleted, and other items of no mapped type, left alone (16)</h2>`)

	if r := runCLI(t, "verify", "--mapping", mappingFile, "--source", src, "--endpoint-url", dynalite(t).Endpoint, "--table", table); r.code != ExitOK {
		t.Errorf("verify after --changes-only: exit %d\n%s", r.code, r.stdout)
	}
	rec.Reset()
	r = runCLI(t, args...)
	if r.code != ExitOK || !strings.Contains(r.stdout, "0 items written (0 new and 0 changed found), 0 stale deleted; 0 write units") {
		t.Fatalf("second --changes-only: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if p, d := rec.Puts(), rec.Deletes(); len(p)+len(d) > 0 {
		t.Errorf("second --changes-only wrote %d items and deleted %d: %s %s", len(p), len(d), testenv.Few(p), testenv.Few(d))
	}
}

// changedRefs are the keys of changed items.
func changedRefs(items []outcome.ChangedItem) []outcome.ItemRef {
	out := make([]outcome.ItemRef, len(items))
	for i, c := range items {
		out[i] = c.ItemRef
	}
	return out
}

// checkHTMLShows checks that the HTML report at path holds each of shows.
func checkHTMLShows(t *testing.T, path string, shows ...string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := strings.ReplaceAll(string(b), "&#34;", `"`)
	for _, s := range shows {
		if !strings.Contains(page, s) {
			t.Errorf("%s does not show %q", path, s)
		}
	}
}

// A --changes-only run that stops (DynamoDB refuses every write after the
// first batch) leaves what it wrote; run again, its comparison finds what
// is left and finishes, and verify passes: no checkpoint is needed.
func TestChangesOnlyInterruptedFinishesOnTheNextRun(t *testing.T) {
	parallel(t)
	src, mappingFile, table := changesFixture(t)
	proxy := startProxy(t, faultproxy.Rates{Permanent: "AccessDeniedException", PermanentAfter: 1,
		Only: []string{"BatchWriteItem", "DeleteItem"}}, 1)
	r := runCLI(t, withEndpoint(migrateArgs(t, mappingFile, src, table, "--changes-only", "--concurrency", "1"), proxy.URL)...)
	if r.code != ExitFailed || !strings.Contains(r.stderr, "AccessDeniedException") || !strings.Contains(r.stderr, "run migrate --changes-only again") {
		t.Fatalf("--changes-only with writes refused: exit %d, want %d naming the error and what to do\n%s", r.code, ExitFailed, r.stderr)
	}
	rec := testenv.NewWriteRecorder(t, dynalite(t).Endpoint, "PK", "SK")
	dir := t.TempDir()
	r = runCLI(t, withEndpoint(migrateArgs(t, mappingFile, src, table, "--changes-only", "--report-json", filepath.Join(dir, "r.json")), rec.URL)...)
	if r.code != ExitOK {
		t.Fatalf("second --changes-only: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// The first batch of 25 puts was written by the first run.
	if rep := readChangesReport(t, filepath.Join(dir, "r.json")); rep.Applied.Written != 65-25 || rep.Applied.Deleted != 15 || len(rec.Puts()) != 40 {
		t.Errorf("second run: %d written, %d deleted, %d puts sent; want 40, 15, 40", rep.Applied.Written, rep.Applied.Deleted, len(rec.Puts()))
	}
	if r := runCLI(t, "verify", "--mapping", mappingFile, "--source", src, "--endpoint-url", dynalite(t).Endpoint, "--table", table); r.code != ExitOK {
		t.Errorf("verify: exit %d\n%s", r.code, r.stdout)
	}
}

// --changes-only is refused, saying why, with what it cannot be combined
// with: nothing is read or written (exit 2).
func TestChangesOnlyRefusals(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mapping.yaml")
	if err := os.WriteFile(file, []byte(pruneMapping), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		extra []string
		says  string
	}{
		{[]string{"--follow"}, "--changes-only with --follow: a follow keeps the table in step itself"},
		{[]string{"--shard", "1/2"}, "--changes-only with --shard: a shard reads only part of the source, so it cannot tell an item no row derives (stale) from another shard's"},
		{[]string{"--prune"}, "--changes-only with --prune: --changes-only deletes the stale items itself"},
		{[]string{"--resume"}, "--changes-only with --resume: --changes-only keeps no checkpoint"},
		{[]string{"--sink", "null"}, "--changes-only needs --sink dynamodb"},
	} {
		t.Run(tc.extra[0], func(t *testing.T) {
			args := append([]string{"migrate", "--mapping", file, "--source", "postgres://nobody@127.0.0.1:1/none", "--endpoint-url", "http://127.0.0.1:1",
				"--checkpoint", filepath.Join(t.TempDir(), "cp.json"), "--rejects", filepath.Join(t.TempDir(), "r.jsonl"), "--changes-only"}, tc.extra...)
			r := runCLI(t, args...)
			if r.code != ExitUsage || !strings.Contains(r.stderr, tc.says) {
				t.Errorf("exit %d, want %d saying %q\n%s", r.code, ExitUsage, tc.says, r.stderr)
			}
		})
	}
}

// --changes-only reads the source with every --readers connection, as a
// full load does (a table of 4,000 rows, with --min-range-rows 2000, is
// split into two primary-key ranges, one per reader), and shows the same
// progress lines.
func TestChangesOnlyReadsWithEveryReader(t *testing.T) {
	parallel(t)
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE t (id int PRIMARY KEY, v int);
		INSERT INTO t SELECT i, i FROM generate_series(1, 4000) i`)
	mappingFile := writeMapping(t, "name: readers\ntable: {name: readers}\nentities:\n  T: {source: {table: t}, pk: \"T#${id}\", sk: T}\n")
	table := testenv.TableName("readers")
	if r := runCLI(t, migrateArgs(t, mappingFile, url, table, "--create-table", "--no-verify")...); r.code != ExitOK {
		t.Fatalf("migrate: exit %d\n%s", r.code, r.stderr)
	}
	testenv.Exec(t, url, `UPDATE t SET v = -v WHERE id % 100 = 0`)
	conns := map[int]int64{}
	for _, readers := range []int{1, 2} {
		pg := testenv.NewStatementCounter(t, url)
		args := migrateArgs(t, mappingFile, pg.URL, table, "--changes-only", "--no-verify", "--readers", strconv.Itoa(readers), "--min-range-rows", "2000")
		args[slices.Index(args, "--progress")+1] = "lines"
		r := runCLI(t, args...)
		if r.code != ExitOK || !strings.Contains(r.stderr, "T: 4000/4000 rows done") || !strings.Contains(r.stderr, "Scan of "+table+": 4000/4000 items done") {
			t.Fatalf("--changes-only --readers %d: exit %d, want 0 and progress lines of the source and the Scan\n%s", readers, r.code, r.stderr)
		}
		conns[readers] = pg.Connections()
	}
	if conns[2] != conns[1]+1 {
		t.Errorf("--changes-only opened %d connections with --readers 1 and %d with --readers 2: want 1 more (the second reader's)", conns[1], conns[2])
	}
}
