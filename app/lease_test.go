package app

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// tableTags reads the tags of table.
func tableTags(t *testing.T, c *dynamodb.Client, table string) map[string]string {
	t.Helper()
	td, err := load.DescribeTable(context.Background(), c, table)
	if err != nil || td == nil {
		t.Fatalf("describe %s: %v", table, err)
	}
	tags, err := load.TableTags(context.Background(), c, aws.ToString(td.TableArn))
	if err != nil {
		t.Fatal(err)
	}
	return tags
}

// itemTexts is the table's items as text, sorted by key: two reads that
// compare equal found the same items with the same attributes.
func itemTexts(t *testing.T, c *dynamodb.Client, table string) []string {
	t.Helper()
	var out []string
	for _, it := range scanAll(t, c, table) {
		out = append(out, testenv.CanonicalItem(it))
	}
	return out
}

// Two mappings of one file base name (fixtures/mappings/tickets.yaml and
// fixtures/mappings/strategies/tickets.yaml) and different declared names
// are two owners: a plain migrate of the one into the other's table is
// refused (exit 2), its items unchanged. A table an older pg2dynamo
// tagged with the file's base name is taken by the mapping that declares
// that name (the tags upgraded to it) and refused to the other; a mapping
// without a name creates no table.
func TestOwnershipByDeclaredName(t *testing.T) {
	parallel(t)
	url, _ := fixtureSource(t, "tickets", 0.05)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(root, "fixtures", "mappings", "tickets.yaml")
	strategies := filepath.Join(root, "fixtures", "mappings", "strategies", "tickets.yaml")
	table := testenv.TableName("byname")
	c := dynamoClient(t)
	if r := runCLI(t, migrateArgs(t, strategies, url, table, "--create-table")...); r.code != ExitOK {
		t.Fatalf("migrate the strategies mapping: exit %d\n%s", r.code, r.stderr)
	}
	if tags := tableTags(t, c, table); tags[load.TagName] != "tickets-strategies" || tags[load.TagTypes] != "Org Ticket User" {
		t.Fatalf("tags of the table created: %v; want name tickets-strategies and types Org Ticket User", tags)
	}
	before := itemTexts(t, c, table)

	r := runCLI(t, migrateArgs(t, plain, url, table)...)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "belongs to mapping tickets-strategies") || !strings.Contains(r.stderr, "--allow-other-mapping") {
		t.Fatalf("the other mapping of base name tickets.yaml: exit %d, want %d naming mapping tickets-strategies\n%s", r.code, ExitUsage, r.stderr)
	}
	if d := cmp.Diff(before, itemTexts(t, c, table)); d != "" {
		t.Errorf("the refused run changed the table (-before +after):\n%s", d)
	}

	// As an older pg2dynamo tagged it: the file's base name, no name tag.
	td, err := load.DescribeTable(context.Background(), c, table)
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(td.TableArn)
	if _, err := c.UntagResource(context.Background(), &dynamodb.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: []string{load.TagName, load.TagTypes}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TagResource(context.Background(), &dynamodb.TagResourceInput{ResourceArn: aws.String(arn),
		Tags: []types.Tag{{Key: aws.String(load.TagMapping), Value: aws.String("tickets")}}}); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, migrateArgs(t, strategies, url, table)...)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "belongs to mapping file tickets") {
		t.Fatalf("tickets-strategies into a table tagged for file tickets: exit %d, want %d\n%s", r.code, ExitUsage, r.stderr)
	}
	if d := cmp.Diff(before, itemTexts(t, c, table)); d != "" {
		t.Errorf("the refused run changed the table (-before +after):\n%s", d)
	}
	r = runCLI(t, migrateArgs(t, plain, url, table, "--no-verify")...)
	if r.code != ExitOK || !strings.Contains(r.stderr, "tagged by an older pg2dynamo for mapping file tickets, the name this mapping declares") {
		t.Fatalf("mapping tickets into a table tagged for file tickets: exit %d, want 0 and a note\n%s", r.code, r.stderr)
	}
	if tags := tableTags(t, c, table); tags[load.TagName] != "tickets" || tags[load.TagMapping] != "" {
		t.Errorf("tags after the upgrade: %v; want name tickets and no %s", tags, load.TagMapping)
	}

	unnamed := writeNamedMapping(t, "tickets.yaml", strings.Replace(testenv.ReadFile(t, plain), "\nname: tickets\n", "\n", 1))
	fresh := testenv.TableName("unnamed")
	r = runCLI(t, migrateArgs(t, unnamed, url, fresh, "--create-table")...)
	if r.code != ExitUsage || !strings.Contains(r.stderr, `declares no name`) || !strings.Contains(r.stderr, `add "name: tickets"`) {
		t.Errorf("--create-table with a mapping without a name: exit %d, want %d saying to add a name\n%s", r.code, ExitUsage, r.stderr)
	}
	if tableExists(t, fresh) {
		t.Error("the refused run created the table")
	}
}

// leaseSQL is a small source a follow can stream: the orders' key reads
// customer_id, which the default replica identity does not carry.
const leaseSQL = pruneSQL + `
ALTER TABLE customers REPLICA IDENTITY FULL;
ALTER TABLE orders REPLICA IDENTITY FULL;`

// runningFollow is a migrate --follow run in the background.
type runningFollow struct {
	out   *syncBuffer
	stop  context.CancelFunc
	done  chan int
	ended chan struct{}
	args  []string
}

// startFollow starts migrate --follow with args and waits until it
// streams; the test's end stops it and drops its slot.
func startFollow(t *testing.T, mappingFile, url string, args []string) *runningFollow {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	f := &runningFollow{out: &syncBuffer{}, stop: stop, done: make(chan int, 1), ended: make(chan struct{}), args: args}
	go func() { f.done <- RunContext(ctx, args, f.out, f.out); close(f.ended) }()
	t.Cleanup(func() {
		stop()
		<-f.ended
		runCLI(t, "drop-slot", "--mapping", mappingFile, "--source", url, "--table", args[indexOf(args, "--table")+1])
	})
	f.await(t, "following slot", "the full load to end and the follow to stream")
	return f
}

func indexOf(args []string, flag string) int {
	for i, a := range args {
		if a == flag {
			return i
		}
	}
	return -1
}

// await waits for text in the follow's output (testenv.Poll); it fails
// when the run ends first or after eventWait.
func (f *runningFollow) await(t *testing.T, text, what string) {
	t.Helper()
	if err := testenv.Poll(fmt.Sprintf("%s (%q)", what, text), eventWait, f.ended, func() bool {
		return strings.Contains(f.out.String(), text)
	}); err != nil {
		t.Fatalf("%v\n%s", err, f.out.String())
	}
}

// halt stops the follow as SIGINT does and returns its exit code: 0, or
// 130 when the stop came before its stream was under way; both are a
// clean stop, every deferred step run.
func (f *runningFollow) halt() int {
	f.stop()
	return <-f.done
}

// cleanStop is an exit code of a follow stopped as SIGINT stops it.
func cleanStop(code int) bool { return code == ExitOK || code == ExitInterrupted }

// logicalSource is a new database holding leaseSQL, on a server with
// wal_level=logical.
func logicalSource(t *testing.T) string {
	t.Helper()
	url := testenv.NewDatabase(t)
	var level string
	if err := testenv.Connect(t, url).QueryRow(context.Background(), "SHOW wal_level").Scan(&level); err != nil {
		t.Fatal(err)
	}
	if level != "logical" {
		t.Fatalf("wal_level is %s: following changes needs logical (scripts/test.sh sets it)", level)
	}
	testenv.Exec(t, url, leaseSQL)
	return url
}

// planted is an item of a mapped type that no row derives: stale.
var planted = map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "CUSTOMER#0000000999"},
	"SK": &types.AttributeValueMemberS{Value: "CUSTOMER#0000000999"}, "type": &types.AttributeValueMemberS{Value: "Customer"},
	"name": &types.AttributeValueMemberS{Value: "planted"}}

// While a follow streams into a table, its lease (slot, heartbeat) is on
// the table's tags, and every other writer is refused with exit 2 before
// it writes: plain migrate, --changes-only, --prune, import and a second
// follow from another slot, each naming the follow's slot. The table
// holds a stale item and an item changed behind the follow's back, which
// any of them would have deleted or rewritten: it is unchanged after
// each. Once the follow stops cleanly the lease is gone, and
// --changes-only repairs both.
func TestLeaseRefusesOtherWriters(t *testing.T) {
	parallel(t)
	url := logicalSource(t)
	file := writeMapping(t, pruneMapping)
	table := testenv.TableName("lease")
	slot := follow.DefaultName(table)
	f := startFollow(t, file, url, migrateArgs(t, file, url, table, "--create-table", "--follow"))
	c := dynamoClient(t)
	tags := tableTags(t, c, table)
	if tags[load.TagLeaseSlot] != slot || tags[load.TagLeaseHeartbeat] == "" || tags[load.TagLeaseEvery] != "30s" {
		t.Fatalf("tags while the follow streams: %v; want the lease of slot %s, a heartbeat every 30s", tags, slot)
	}
	if _, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: planted}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(table),
		Key:                       map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "CUSTOMER#0000000001"}, "SK": &types.AttributeValueMemberS{Value: "CUSTOMER#0000000001"}},
		UpdateExpression:          aws.String("SET #n = :v"),
		ExpressionAttributeNames:  map[string]string{"#n": "name"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberS{Value: "tampered"}}}); err != nil {
		t.Fatal(err)
	}
	before := itemTexts(t, c, table)

	// An export to import, made while the follow streams (export reads
	// only the source).
	s3URL, s3c := s3Server(t, "exports")
	if r := runCLI(t, "export", "--mapping", file, "--source", url, "--table", table, "--to", "s3://exports/run/",
		"--s3-endpoint-url", s3URL, "--region", "us-east-1", "--progress", "none", "--rejects", filepath.Join(t.TempDir(), "r.jsonl")); r.code != ExitOK {
		t.Fatalf("export: exit %d\n%s", r.code, r.stderr)
	}
	t.Cleanup(func() { // the second follow's, had it not been refused
		runCLI(t, "drop-slot", "--mapping", file, "--source", url, "--slot", "lease_second")
	})
	em := newImportEmulator(t, s3c, "")
	ts := httptest.NewServer(em)
	t.Cleanup(ts.Close)

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"migrate", migrateArgs(t, file, url, table)},
		{"migrate --changes-only", migrateArgs(t, file, url, table, "--changes-only")},
		{"migrate --prune", migrateArgs(t, file, url, table, "--prune")},
		{"import", []string{"import", "--mapping", file, "--source", url, "--table", table, "--from", "s3://exports/run/",
			"--endpoint-url", ts.URL, "--s3-endpoint-url", s3URL, "--region", "us-east-1", "--poll-interval", "10ms",
			"--rejects", filepath.Join(t.TempDir(), "rejects.jsonl")}},
		{"migrate --follow", migrateArgs(t, file, url, table, "--follow", "--slot", "lease_second", "--until-caught-up")},
	} {
		r := runCLI(t, tc.args...)
		want := tc.name + ": a follow streams into table " + table + ": replication slot " + slot + " holds its lease"
		if r.code != ExitUsage || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "stop that follow first") {
			t.Errorf("%s while the follow streams: exit %d, want %d and %q\n%s", tc.name, r.code, ExitUsage, want, r.stderr)
		}
		if d := cmp.Diff(before, itemTexts(t, c, table)); d != "" {
			t.Errorf("%s, refused, changed the table (-before +after):\n%s", tc.name, d)
		}
		t.Logf("%s: exit %d, %s", tc.name, r.code, lastLine(r.stderr))
	}
	if n := len(em.requests["StartBulkPutItems"]); n != 0 {
		t.Errorf("the refused import sent %d StartBulkPutItems requests", n)
	}
	var pubs int
	if err := testenv.Connect(t, url).QueryRow(context.Background(), "SELECT count(*) FROM pg_publication WHERE pubname = 'lease_second'").Scan(&pubs); err != nil {
		t.Fatal(err)
	}
	if pubs != 0 {
		t.Error("the refused second follow created its publication")
	}

	if code := f.halt(); !cleanStop(code) {
		t.Fatalf("the follow: exit %d\n%s", code, f.out.String())
	}
	if tags := tableTags(t, c, table); tags[load.TagLeaseSlot] != "" || tags[load.TagLeaseHeartbeat] != "" {
		t.Errorf("tags after the follow stopped: %v; want no lease", tags)
	}
	r := runCLI(t, migrateArgs(t, file, url, table, "--changes-only")...)
	if r.code != ExitOK {
		t.Fatalf("--changes-only after the follow stopped: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, it := range scanAll(t, c, table) {
		if pk := str(it["PK"]); pk == "CUSTOMER#0000000999" || str(it["name"]) == "tampered" {
			t.Errorf("after --changes-only: %s is still in the table", testenv.CanonicalItem(it))
		}
	}
}

// verify, run while a follow streams into a table that holds a stale
// item, fails (exit 4) and its advice names the running follow and its
// slot, never a run that writes beside it (--changes-only, --prune).
func TestVerifyAdviceWhileAFollowRuns(t *testing.T) {
	parallel(t)
	url := logicalSource(t)
	file := writeMapping(t, pruneMapping)
	table := testenv.TableName("advice")
	startFollow(t, file, url, migrateArgs(t, file, url, table, "--create-table", "--follow"))
	c := dynamoClient(t)
	if _, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: planted}); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "verify", "--mapping", file, "--source", url, "--endpoint-url", dynalite(t).Endpoint, "--table", table)
	slot := follow.DefaultName(table)
	if r.code != ExitMismatch || !strings.Contains(r.stderr, "a follow streams into table "+table+": replication slot "+slot+" holds its lease") {
		t.Fatalf("verify with a stale item while the follow streams: exit %d, want %d naming the follow\n%s\n%s", r.code, ExitMismatch, r.stdout, r.stderr)
	}
	t.Logf("verify: exit %d, %s", r.code, r.stderr)
	for _, bad := range []string{"--changes-only", "--prune", "changes-only", "prune"} {
		if strings.Contains(r.stdout+r.stderr, bad) {
			t.Errorf("verify's output while the follow streams recommends %s:\n%s\n%s", bad, r.stdout, r.stderr)
		}
	}
}

// A follow that crashed leaves its lease: fresh, it refuses a plain
// migrate, and migrate --follow --resume of its own slot, which no
// process streams from, takes it over (and removes it when it stops). A
// stale lease of another slot refuses nothing.
func TestLeaseLeftByACrashedFollow(t *testing.T) {
	parallel(t)
	url := logicalSource(t)
	file := writeMapping(t, pruneMapping)
	table := testenv.TableName("crashed")
	slot := follow.DefaultName(table)
	args := migrateArgs(t, file, url, table, "--create-table", "--follow")
	f := startFollow(t, file, url, args)
	if code := f.halt(); !cleanStop(code) {
		t.Fatalf("the follow: exit %d\n%s", code, f.out.String())
	}
	c := dynamoClient(t)
	td, err := load.DescribeTable(context.Background(), c, table)
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(td.TableArn)
	// The lease as the follow left it when it was killed, a moment ago.
	if err := load.WriteLease(context.Background(), c, arn, load.Lease{Slot: slot, Heartbeat: time.Now(), Every: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, migrateArgs(t, file, url, table)...)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "replication slot "+slot+" holds its lease") || !strings.Contains(r.stderr, "goes stale 1m30s after its last heartbeat") {
		t.Fatalf("migrate into a table a crashed follow leased: exit %d, want %d\n%s", r.code, ExitUsage, r.stderr)
	}
	resume := append(args[:len(args):len(args)], "--resume", "--until-caught-up")
	r = runCLI(t, resume...)
	if r.code != ExitOK || !strings.Contains(r.stderr, "taking over the lease of replication slot "+slot) {
		t.Fatalf("--follow --resume of the lease's slot: exit %d, want 0 taking the lease over\n%s", r.code, r.stderr)
	}
	if tags := tableTags(t, c, table); tags[load.TagLeaseSlot] != "" {
		t.Errorf("tags after the resumed follow stopped: %v; want no lease", tags)
	}
	if err := load.WriteLease(context.Background(), c, arn, load.Lease{Slot: "pg2dynamo_gone", Heartbeat: time.Now().Add(-time.Hour), Every: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, migrateArgs(t, file, url, table)...)
	if r.code != ExitOK || !strings.Contains(r.stderr, "the lease of replication slot pg2dynamo_gone is stale") {
		t.Errorf("migrate into a table with a stale lease: exit %d, want 0 and a note\n%s", r.code, r.stderr)
	}
}

// lastLine is the last line of s that is not empty.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
