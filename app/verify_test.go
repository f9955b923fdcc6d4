package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	neturl "net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/fixtures"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/tools/reporttest"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// readReport decodes a --report-json file.
func readReport(t *testing.T, path string) report.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// listed returns the entries of a report's list.
func listed[T any](t *testing.T, l outcome.List[T]) []T {
	t.Helper()
	out, err := l.Slice()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func refKeys(t *testing.T, l outcome.List[outcome.ItemRef]) []string {
	refs := listed(t, l)
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.PK + " / " + r.SK
	}
	return out
}

func keyOf(it map[string]types.AttributeValue) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]}
}

// After a migration, verify passes; after one item is deleted, one
// attribute changed and one stray item added by hand (with the AWS SDK,
// outside pg2dynamo), verify fails naming exactly those three keys. On each
// fixture domain and on Northwind.
func TestVerifyFindsHandChanges(t *testing.T) {
	ctx := context.Background()
	datasets := []struct{ name, mapping string }{
		{"customers", testenv.RepoFile(t, "fixtures", "mappings", "strategies", "customers.yaml")},
		{"tickets", testenv.RepoFile(t, "fixtures", "mappings", "strategies", "tickets.yaml")},
		{"attendance", testenv.RepoFile(t, "fixtures", "mappings", "strategies", "attendance.yaml")},
		{"northwind", testenv.RepoFile(t, "examples", "northwind", "mapping.yaml")},
	}
	t.Parallel()
	for _, ds := range datasets {
		t.Run(ds.name, func(t *testing.T) {
			parallel(t)
			var url string
			if ds.name == "northwind" {
				url = testenv.NewDatabase(t)
				psqlFile(t, url, testenv.RepoFile(t, "examples", "northwind", "northwind.sql"))
			} else {
				url, _ = fixtureSource(t, ds.name, 0.2)
			}
			table := testenv.TableName(ds.name)
			// migrate verifies at the end: exit 0 means verify passed.
			r := runCLI(t, migrateArgs(t, ds.mapping, url, table, "--create-table")...)
			if r.code != ExitOK || !strings.Contains(r.stdout, "verify PASSED") {
				t.Fatalf("migrate exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}

			c := dynamoClient(t)
			items := scanAll(t, c, table)
			deleted, changed := items[len(items)/3], items[2*len(items)/3]
			var attr string // a non-key attribute of the changed item
			for _, a := range slices.Sorted(func(yield func(string) bool) {
				for k := range changed {
					if !yield(k) {
						return
					}
				}
			}) {
				if !strings.HasSuffix(a, "PK") && !strings.HasSuffix(a, "SK") && a != "type" {
					attr = a
					break
				}
			}
			if _, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: keyOf(deleted)}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: keyOf(changed),
				UpdateExpression:          aws.String("SET #a = :v"),
				ExpressionAttributeNames:  map[string]string{"#a": attr},
				ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberS{Value: "changed by hand"}},
			}); err != nil {
				t.Fatal(err)
			}
			stray := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "STRAY#1"},
				"SK": &types.AttributeValueMemberS{Value: "STRAY"}, "note": &types.AttributeValueMemberS{Value: "added by hand"}}
			if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: stray}); err != nil {
				t.Fatal(err)
			}

			// --gsi-wait 0: a pattern on a GSI that reaches the deleted or
			// changed item mismatches for good; re-querying it for the
			// default 10 s (TestVerifyWaitsForGSILag tests that) would
			// only make the test wait.
			reportFile := filepath.Join(t.TempDir(), "report.json")
			r = runCLI(t, "verify", "--mapping", ds.mapping, "--source", url, "--endpoint-url", dynalite(t).Endpoint,
				"--table", table, "--report-json", reportFile, "--gsi-wait", "0")
			if r.code != ExitMismatch {
				t.Fatalf("verify exit %d, want %d\n%s%s", r.code, ExitMismatch, r.stdout, r.stderr)
			}
			rep := readReport(t, reportFile)
			key := func(it map[string]types.AttributeValue) string { return str(it["PK"]) + " / " + str(it["SK"]) }
			if d := cmp.Diff([]string{key(deleted)}, refKeys(t, rep.Missing)); d != "" {
				t.Errorf("missing (-want +got):\n%s", d)
			}
			if d := cmp.Diff([]string{"STRAY#1 / STRAY"}, refKeys(t, rep.Extra)); d != "" {
				t.Errorf("extra (-want +got):\n%s", d)
			}
			var gotChanged []string
			for _, ch := range listed(t, rep.Changed) {
				for _, a := range ch.Changes {
					gotChanged = append(gotChanged, ch.PK+" / "+ch.SK+" "+a.Attribute+" "+compact(a.Before))
				}
			}
			if d := cmp.Diff([]string{key(changed) + " " + attr + ` {"S":"changed by hand"}`}, gotChanged); d != "" {
				t.Errorf("changed (-want +got):\n%s", d)
			}
		})
	}
}

// diff after one insert, one update and one delete in PostgreSQL reports
// exactly one new, one changed (with the changed attribute) and one stale
// item; it only reads from DynamoDB, and the table is untouched.
func TestDiffReportsSourceChanges(t *testing.T) {
	parallel(t)
	ctx := context.Background()
	url := testenv.NewDatabase(t)
	conn := testenv.Connect(t, url)
	if _, err := fixtures.Load(ctx, conn, "tickets", 0.2, 1); err != nil {
		t.Fatal(err)
	}
	mappingFile := testenv.RepoFile(t, "fixtures", "mappings", "strategies", "tickets.yaml")
	table := testenv.TableName("tickets")
	if r := runCLI(t, migrateArgs(t, mappingFile, url, table, "--create-table", "--no-verify")...); r.code != ExitOK {
		t.Fatalf("migrate exit %d\n%s", r.code, r.stderr)
	}
	before := testenv.CanonicalItems(scanAll(t, dynamoClient(t), table))
	if _, err := conn.Exec(ctx, `
		INSERT INTO tickets (ticket_id, org_id, user_id, subject, status, priority, created_at, tags, metadata)
		  SELECT 999999, org_id, user_id, 'new ticket', 'open', 1, '2026-01-01 00:00:00+00', '{}', '{}' FROM tickets WHERE ticket_id = 1;
		UPDATE tickets SET subject = 'subject changed' WHERE ticket_id = 2;
		DELETE FROM tickets WHERE ticket_id = 3;`); err != nil {
		t.Fatal(err)
	}

	rec := testenv.NewRecorder(t, dynalite(t).Endpoint)
	dir := t.TempDir()
	r := runCLI(t, "diff", "--mapping", mappingFile, "--source", url, "--endpoint-url", rec.URL, "--table", table,
		"--report-json", filepath.Join(dir, "diff.json"), "--html", filepath.Join(dir, "diff.html"))
	if r.code != ExitOK {
		t.Fatalf("diff exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	rep := readReport(t, filepath.Join(dir, "diff.json"))
	if rep.Totals.Missing != 1 || rep.Totals.Changed != 1 || rep.Stale != 1 || rep.Unmanaged != 0 {
		t.Errorf("diff totals: %d new, %d changed, %d stale, %d unmanaged; want 1, 1, 1, 0", rep.Totals.Missing, rep.Totals.Changed, rep.Stale, rep.Unmanaged)
	}
	var changes []string
	for _, ch := range listed(t, rep.Changed) {
		for _, a := range ch.Changes {
			changes = append(changes, ch.SK+" "+a.Attribute+" "+compact(a.After))
		}
	}
	if len(changes) != 1 || !strings.HasSuffix(changes[0], `#0000000000000000002 subject {"S":"subject changed"}`) {
		t.Errorf("%d changes: %s; want ticket 2's subject changed", len(changes), testenv.Few(changes))
	}
	if missing := listed(t, rep.Missing); len(missing) != 1 || !strings.HasSuffix(missing[0].SK, "#0000000000000999999") {
		t.Errorf("%d new items: %s; want ticket 999999", len(missing), testenv.Few(missing))
	}
	for _, op := range rec.Operations() {
		if name := strings.TrimPrefix(op, "DynamoDB_20120810."); !slices.Contains([]string{"DescribeTable", "Scan", "Query", "GetItem"}, name) {
			t.Errorf("diff sent %s: it must only read", op)
		}
	}
	if len(rec.Operations()) == 0 {
		t.Error("the proxy saw no request: diff did not read through it")
	}
	if d := cmp.Diff(before, testenv.CanonicalItems(scanAll(t, dynamoClient(t), table))); d != "" {
		t.Errorf("diff changed the table (-before +after):\n%s", d)
	}
	checkRun(t, rep, mappingFile, url, rec.URL)
	if c := rep.Cost; c == nil || c.ChangeItems != 2 || c.ChangeWriteUnits < 2 || c.ChangeWriteUnits >= c.WriteUnits || c.StaleItems != 1 || c.StaleWriteUnits < 1 {
		t.Errorf("cost %+v; want the 2 items changed priced apart, below the full run, and 1 stale item's delete", rep.Cost)
	}
	checkHTMLReport(t, filepath.Join(dir, "diff.html"), rep)
}

// checkRun checks a report's run: the mapping file and the SHA-256 of
// its bytes, the source without its password, the endpoint, a time in
// RFC 3339 UTC and a version.
func checkRun(t *testing.T, rep report.Report, mappingFile, source, endpoint string) {
	t.Helper()
	run := rep.Run
	if run == nil {
		t.Fatal("the JSON report has no run")
	}
	b, err := os.ReadFile(mappingFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%x", sha256.Sum256(b)); run.MappingSHA256 != want || run.Mapping != mappingFile {
		t.Errorf("run mapping %s, SHA-256 %s; want %s, %s", run.Mapping, run.MappingSHA256, mappingFile, want)
	}
	if at, err := time.Parse(time.RFC3339, run.Time); err != nil || !strings.HasSuffix(run.Time, "Z") || time.Since(at) > time.Hour {
		t.Errorf("run time %q: want RFC 3339 UTC, now", run.Time)
	}
	u, err := neturl.Parse(source)
	if err != nil {
		t.Fatal(err)
	}
	if pw, ok := u.User.Password(); ok && strings.Contains(run.Source, pw) || !strings.Contains(run.Source, u.Host) {
		t.Errorf("run source %q: want %s's host, without its password", run.Source, source)
	}
	if run.Endpoint != endpoint || run.Table != rep.Table || run.Version == "" {
		t.Errorf("run %+v: want endpoint %s, table %s, a version", run, endpoint, rep.Table)
	}
}

// checkHTMLReport opens the HTML report in headless Chromium, with
// JavaScript disabled, and checks that the page shows the JSON report's
// counts, its cost, its changed items and its run.
func checkHTMLReport(t *testing.T, path string, rep report.Report) {
	t.Helper()
	dom, ok := renderHTML(t, path)
	if !ok {
		return
	}
	re := regexp.MustCompile(`(?s)<tr data-entity="total">(.*?)</tr>`)
	m := re.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the rendered page has no total row:\n%.2000s", dom)
	}
	cell := regexp.MustCompile(`data-count="(\w+)">(\d+)<`)
	got := map[string]string{}
	for _, c := range cell.FindAllStringSubmatch(m[1], -1) {
		got[c[1]] = c[2]
	}
	t0 := rep.Totals
	want := map[string]string{"source_rows": itoa(t0.SourceRows), "rejected": itoa(t0.Rejected), "expected": itoa(t0.Expected),
		"table": itoa(t0.Table), "new": itoa(t0.Missing), "changed": itoa(t0.Changed), "unchanged": itoa(t0.Unchanged),
		"stale": itoa(t0.Stale), "write_units": itoa(t0.WriteUnits), "change_write_units": itoa(t0.ChangeWriteUnits)}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("HTML counts (-JSON +page):\n%s", d)
	}
	n := rep.Summary
	for key, v := range map[string]int64{"new": n.New, "changed": n.Changed, "stale": n.Stale, "unchanged": n.Unchanged} {
		if !strings.Contains(dom, `data-summary="`+key+`">`+itoa(v)+"<") {
			t.Errorf("the page does not show %d %s items", v, key)
		}
	}
	for key, v := range map[string]int64{"write_units": rep.Cost.WriteUnits, "change_write_units": rep.Cost.ChangeWriteUnits} {
		if !strings.Contains(dom, `data-cost="`+key+`">`+itoa(v)+"<") {
			t.Errorf("the page does not show the cost estimate's %s, %d", key, v)
		}
	}
	if changed := listed(t, rep.Changed); len(changed) > 0 && !strings.Contains(dom, `data-changed="`+changed[0].PK+" "+changed[0].SK+`"`) {
		t.Errorf("the page does not show changed item %s / %s side by side", changed[0].PK, changed[0].SK)
	}
	if !strings.Contains(dom, `<dd data-run="mapping_sha256">`+rep.Run.MappingSHA256+"<") {
		t.Errorf("the page does not show the mapping's SHA-256 %s", rep.Run.MappingSHA256)
	}
}

// renderHTML opens the page at path in headless Chromium with JavaScript
// disabled and returns its DOM; false when there is no Chromium and
// PG2DYNAMO_SKIP_BROWSER allows skipping.
func renderHTML(t *testing.T, path string) (string, bool) {
	t.Helper()
	return reporttest.RenderStatic(t, path)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// compact removes the indentation the JSON report adds.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// migrate --dry-run against a table that does not exist writes nothing,
// says so, and counts every item as new, with the cost of the run.
func TestDryRunAgainstMissingTable(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, shopSQL)
	table := testenv.TableName("shop")
	dir := t.TempDir()
	args := append(migrateArgs(t, writeMapping(t, planMapping), url, table, "--dry-run"), "--report-json", filepath.Join(dir, "r.json"))
	r := runCLI(t, args...)
	if r.code != ExitOK {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "table "+table+" does not exist: every item is new") {
		t.Errorf("the report does not say the table is missing:\n%s", r.stdout)
	}
	rep := readReport(t, filepath.Join(dir, "r.json"))
	if rep.Totals.Expected != 7 || rep.Totals.Missing != 7 || rep.Cost == nil || rep.Cost.WriteUnits < 7 {
		t.Errorf("totals %+v, cost %+v; want 7 items, all new, at least 7 write units", rep.Totals, rep.Cost)
	}
	if tableExists(t, table) {
		t.Error("--dry-run created the table")
	}
}

// verify, diff and migrate --dry-run ask DynamoDB first, with the bounded
// preflight migrate uses: a DynamoDB that cannot be reached fails the
// command with that message (exit 1), before the source is counted or
// read, not after the client's full retry budget. Orders are read through
// a view that raises an error when it is read at all.
func TestReadCommandsFailFastWhenDynamoDBIsUnreachable(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, shopSQL+`
CREATE FUNCTION read_guard() RETURNS boolean LANGUAGE plpgsql VOLATILE AS
  $$ BEGIN RAISE EXCEPTION 'orders read before DynamoDB was asked'; END $$;
CREATE VIEW orders_guarded AS SELECT * FROM orders WHERE read_guard();`)
	mappingFile := writeMapping(t, strings.Replace(planMapping, "source: {table: orders}", "source: {table: orders_guarded}", 1))
	common := []string{"--mapping", mappingFile, "--source", url, "--endpoint-url", "http://127.0.0.1:1"}
	for name, args := range map[string][]string{
		"verify": append([]string{"verify"}, common...),
		"diff":   append([]string{"diff"}, common...),
		"migrate --dry-run": append([]string{"migrate", "--dry-run", "--progress", "none", "--rejects", filepath.Join(t.TempDir(), "r.jsonl"),
			"--checkpoint", filepath.Join(t.TempDir(), "c.json")}, common...),
	} {
		t.Run(name, func(t *testing.T) {
			r := runCLI(t, args...)
			if r.code != ExitFailed || !strings.Contains(r.stderr, "pg2dynamo: cannot reach DynamoDB (DescribeTable shop, at most 3 attempts in 20s)") {
				t.Fatalf("exit %d, want %d with a message that DynamoDB cannot be reached:\n%s%s", r.code, ExitFailed, r.stdout, r.stderr)
			}
		})
	}
}
