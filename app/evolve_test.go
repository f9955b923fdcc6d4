package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/fixtures"
	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/tools/faultproxy"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// evolveV1 is the first version of a mapping of the tickets fixture, and
// evolveV2 the next: OrgPlan removed, an attribute added to User (email,
// excluded before), Ticket's sort key template changed and GSI1 keys
// given to it, UserEmail added. Org does not change. GSI1 is in both
// (dynalite creates no GSI on an existing table: CreateGSI's requests are
// checked in package load).
const evolveV1 = `
name: tickets-evolve
table:
  name: tickets
  gsis:
    - {name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK}
entities:
  Org:
    source: {table: orgs}
    pk: ORG#${org_id}
    sk: ORG#${org_id}
  OrgPlan:
    source: {table: orgs}
    pk: PLAN#${plan}
    sk: ORG#${org_id}
  User:
    source: {table: users}
    pk: ORG#${org_id}
    sk: USER#${user_id}
    attributes: {exclude: [email]}
  Ticket:
    source: {table: tickets}
    pk: USER#${user_id}
    sk: TICKET#${ticket_id}
access_patterns:
  OrgUsers:
    key_condition: "PK = ORG#${org_id} AND begins_with(SK, USER#)"
`

var evolveV2 = strings.NewReplacer(
	"  OrgPlan:\n    source: {table: orgs}\n    pk: PLAN#${plan}\n    sk: ORG#${org_id}\n", "",
	"    attributes: {exclude: [email]}\n", "",
	"    sk: TICKET#${ticket_id}\n", "    sk: TICKET#${priority}#${ticket_id}\n    indexes:\n      GSI1: {pk: \"ORG#${org_id}\", sk: \"TICKET#${ticket_id}\"}\n",
	"access_patterns:\n", "  UserEmail:\n    source: {table: users}\n    pk: EMAIL#${email}\n    sk: EMAIL#${email}\naccess_patterns:\n",
).Replace(evolveV1) + `  OrgTickets:
    index: GSI1
    key_condition: "GSI1PK = ORG#${org_id}"
`

// evolveFixture loads the tickets fixture (20 users, 200 tickets), writes
// the two versions of the mapping, and migrates the first into a new
// table.
func evolveFixture(t *testing.T) (src, v1, v2, table string) {
	t.Helper()
	src = testenv.NewDatabase(t)
	if _, err := fixtures.Load(context.Background(), testenv.Connect(t, src), "tickets", 0.01, 1); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	v1, v2 = filepath.Join(dir, "v1.yaml"), filepath.Join(dir, "v2.yaml")
	testenv.WriteFile(t, v1, evolveV1, 0o644)
	testenv.WriteFile(t, v2, evolveV2, 0o644)
	table = testenv.TableName("evolve")
	if r := runCLI(t, migrateArgs(t, v1, src, table, "--create-table", "--no-verify")...); r.code != ExitOK {
		t.Fatalf("migrate v1: exit %d\n%s", r.code, r.stderr)
	}
	return src, v1, v2, table
}

// dumpByKey is the table's every item in canonical form, by "PK SK".
func dumpByKey(t *testing.T, table string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, it := range scanAll(t, dynamoClient(t), table) {
		out[str(it["PK"])+" "+str(it["SK"])] = testenv.CanonicalItem(it)
	}
	return out
}

// changedKeys are the keys whose item after differs from before (put),
// and those only before holds (deleted), sorted.
func changedKeys(before, after map[string]string) (puts, deletes []string) {
	for k, v := range after {
		if before[k] != v {
			puts = append(puts, k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			deletes = append(deletes, k)
		}
	}
	slices.Sort(puts)
	slices.Sort(deletes)
	return puts, deletes
}

// freshV2 migrates the source with v2 into a new table and returns its
// dump: what the evolved table must hold.
func freshV2(t *testing.T, src, v2 string) map[string]string {
	t.Helper()
	table := testenv.TableName("evolve-fresh")
	if r := runCLI(t, migrateArgs(t, v2, src, table, "--create-table", "--no-verify")...); r.code != ExitOK {
		t.Fatalf("migrate v2 into a new table: exit %d\n%s", r.code, r.stderr)
	}
	return dumpByKey(t, table)
}

// migrate --changes-only --previous-mapping applies the second version of
// the mapping to the table the first wrote, after the source changed: a
// recording proxy sees exactly the items whose content changes put and
// those that go deleted (none of Org, which does not change), the table
// then equals a fresh migration with v2 (dumps compared), verify with v2
// passes (its new access pattern on GSI1 included), the table is tagged
// with v2, and a second run writes nothing.
func TestEvolveChangesOnly(t *testing.T) {
	parallel(t)
	src, v1, v2, table := evolveFixture(t)
	testenv.Exec(t, src, `UPDATE users SET name = name || ' (edited)' WHERE user_id <= 3;
		UPDATE tickets SET priority = priority + 1 WHERE ticket_id % 7 = 0;
		DELETE FROM tickets WHERE ticket_id % 11 = 0`)
	before := dumpByKey(t, table)
	rec := testenv.NewWriteRecorder(t, dynalite(t).Endpoint, "PK", "SK")
	args := withEndpoint(migrateArgs(t, v2, src, table, "--changes-only", "--previous-mapping", v1), rec.URL)
	r := runCLI(t, args...)
	if r.code != ExitOK || !strings.Contains(r.stdout, "changes-only PASSED") {
		t.Fatalf("migrate --changes-only --previous-mapping: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, says := range []string{"entity OrgPlan: entity removed", "entity User: excluded column removed: email",
		"entity Ticket: sk: TICKET#${ticket_id} → TICKET#${priority}#${ticket_id}\n", "entity Ticket: GSI keys added: GSI1", "entity UserEmail: entity added"} {
		if !strings.Contains(r.stderr, says) {
			t.Errorf("stderr does not say %q\n%s", says, r.stderr)
		}
	}
	want := freshV2(t, src, v2)
	after := dumpByKey(t, table)
	if d := cmp.Diff(want, after); d != "" {
		t.Fatalf("the evolved table is not what a fresh migration with v2 writes (-fresh +evolved):\n%s", d)
	}
	wantPuts, wantDeletes := changedKeys(before, after)
	if len(wantPuts) < 200 || len(wantDeletes) < 180 {
		t.Fatalf("%d items changed and %d gone: the versions should change every User and Ticket item", len(wantPuts), len(wantDeletes))
	}
	if testing.Verbose() {
		t.Logf("stderr:\n%s\nstdout:\n%s", r.stderr, r.stdout)
	}
	if d := cmp.Diff(wantPuts, rec.Puts()); d != "" {
		t.Errorf("items put (-changed +put):\n%s", d)
	}
	if d := cmp.Diff(wantDeletes, rec.Deletes()); d != "" {
		t.Errorf("items deleted (-gone +deleted):\n%s", d)
	}
	for _, k := range append(rec.Puts(), rec.Deletes()...) {
		if strings.HasPrefix(k, "ORG#") && strings.Contains(k, " ORG#") {
			t.Errorf("an Org item was written: %s", k)
		}
	}
	if r := runCLI(t, "verify", "--mapping", v2, "--source", src, "--endpoint-url", dynalite(t).Endpoint, "--table", table); r.code != ExitOK || !strings.Contains(r.stdout, "OrgTickets") {
		t.Errorf("verify with v2: exit %d\n%s", r.code, r.stdout)
	}
	tags := tableTags(t, dynamoClient(t), table)
	if sha := fileSHA16(t, v2); tags["pg2dynamo:mapping-sha256"] != sha {
		t.Errorf("tags %v; want the SHA-256 of v2 (%s)", tags, sha)
	}
	rec.Reset()
	if r := runCLI(t, args...); r.code != ExitOK {
		t.Fatalf("second run: exit %d\n%s", r.code, r.stderr)
	}
	if p, d := rec.Puts(), rec.Deletes(); len(p)+len(d) > 0 {
		t.Errorf("second run wrote %d items and deleted %d", len(p), len(d))
	}
}

// fileSHA16 is the first 16 hex digits of the SHA-256 of file, as the
// table's tags record a mapping's.
func fileSHA16(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}

// evolveWorkload changes the tickets fixture's source until ctx is done,
// a transaction every few milliseconds: users renamed, tickets
// re-prioritized (their v2 sort key), inserted and deleted, notes
// inserted and updated. It returns
// the number of transactions committed.
func evolveWorkload(ctx context.Context, t *testing.T, src string) int {
	conn := testenv.Connect(t, src)
	n := 0
	for i := 1; ctx.Err() == nil; i++ {
		sql := []string{
			fmt.Sprintf("UPDATE users SET name = left(name, 20) || '*' WHERE user_id = %d", 1+i%20),
			fmt.Sprintf("UPDATE tickets SET priority = priority %% 5 + 1 WHERE ticket_id = (SELECT min(ticket_id) FROM tickets WHERE ticket_id >= %d)", 1+(i*7)%200),
			fmt.Sprintf(`INSERT INTO tickets SELECT (jsonb_populate_record(t, jsonb_build_object('ticket_id', %d))).* FROM tickets t WHERE ticket_id = (SELECT min(ticket_id) FROM tickets)`, 1_000_000+i),
			fmt.Sprintf("DELETE FROM tickets WHERE ticket_id = (SELECT min(ticket_id) FROM tickets WHERE ticket_id >= %d)", 1+(i*13)%200),
			fmt.Sprintf("INSERT INTO notes VALUES (%d, %d, 'later')", 1000+i, i),
			fmt.Sprintf("UPDATE notes SET body = body || '+' WHERE note_id = %d", 1+i%30),
		}[i%6]
		if _, err := conn.Exec(ctx, sql); err != nil {
			if ctx.Err() == nil {
				t.Errorf("workload: %s: %v", sql, err)
			}
			return n
		}
		n++
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond): // a pace, not a wait for work
		}
	}
	return n
}

// migrate --follow --resume --previous-mapping applies the second version
// of the mapping to a followed table while a workload writes to the
// source: the stream goes on with v2 from the slot at once, and the
// changed entities are compared at a snapshot beside it, so that no change is
// lost or overwritten by an older one; the table of the entity it adds,
// which the first version did not follow, joins the publication, and the
// table of the entity it removes, which only the first followed, leaves
// it. Once the workload stops and a
// resumed follow (v2, recorded by the checkpoint) catches up, the table
// equals a fresh migration with v2 (dumps compared) and verify with v2
// passes; no Org item (unchanged, and untouched by the workload) was
// written.
func TestEvolveFollowed(t *testing.T) {
	parallel(t)
	src := logicalSource(t)
	if _, err := fixtures.Load(context.Background(), testenv.Connect(t, src), "tickets", 0.01, 1); err != nil {
		t.Fatal(err)
	}
	testenv.Exec(t, src, `ALTER TABLE orgs REPLICA IDENTITY FULL; ALTER TABLE users REPLICA IDENTITY FULL; ALTER TABLE tickets REPLICA IDENTITY FULL;
		CREATE TABLE notes (note_id int PRIMARY KEY, ticket_id bigint NOT NULL, body text NOT NULL);
		INSERT INTO notes SELECT i, i, 'note ' || i FROM generate_series(1, 30) i;
		CREATE TABLE legacy (legacy_id int PRIMARY KEY); INSERT INTO legacy SELECT generate_series(1, 5)`)
	dir := t.TempDir()
	v1, v2 := filepath.Join(dir, "v1.yaml"), filepath.Join(dir, "v2.yaml")
	// The first version also follows a table the second does not: legacy.
	testenv.WriteFile(t, v1, strings.Replace(evolveV1, "access_patterns:\n",
		"  Legacy:\n    source: {table: legacy}\n    pk: LEGACY#${legacy_id}\n    sk: LEGACY\naccess_patterns:\n", 1), 0o644)
	// The second version also follows a table the first did not: notes.
	testenv.WriteFile(t, v2, strings.Replace(evolveV2, "access_patterns:\n",
		"  Note:\n    source: {table: notes}\n    pk: NOTE#${note_id}\n    sk: NOTE#${note_id}\naccess_patterns:\n", 1), 0o644)
	table := testenv.TableName("evolve-follow")
	cp, rejects := filepath.Join(dir, "cp.json"), filepath.Join(dir, "rejects.jsonl")
	followArgs := func(mappingFile, endpoint string, extra ...string) []string {
		return append([]string{"migrate", "--mapping", mappingFile, "--source", src, "--endpoint-url", endpoint, "--table", table,
			"--progress", "none", "--rejects", rejects, "--checkpoint", cp, "--follow", "--audit", "off", "--progress-interval", "1s"}, extra...)
	}
	t.Cleanup(func() { runCLI(t, "drop-slot", "--mapping", v2, "--source", src, "--table", table) })
	if r := runCLI(t, followArgs(v1, dynalite(t).Endpoint, "--create-table", "--until-caught-up")...); r.code != ExitOK {
		t.Fatalf("migrate --follow with v1: exit %d\n%s", r.code, r.stderr)
	}

	ctx, stop := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- evolveWorkload(ctx, t, src) }()
	rec := testenv.NewWriteRecorder(t, dynalite(t).Endpoint, "PK", "SK")
	// The comparison's Scan (the only one: --audit off) waits until the
	// stream has applied changes past those it had applied when the
	// comparison began: the run ends only if the follow streams while
	// the comparison is under way.
	release := rec.Hold("Scan")
	defer release()
	f := startFollow(t, v2, src, followArgs(v2, rec.URL, "--resume", "--previous-mapping", v1))
	began := f.awaitLine(t, regexp.MustCompile(`the follow has applied (\d+) changes so far\n`), nil, "the comparison to begin")
	// The table holds items of both versions: no cutover yet.
	if r := runCLI(t, "cutover", "--mapping", v2, "--source", src, "--endpoint-url", dynalite(t).Endpoint, "--table", table); r.code != ExitNoGo ||
		!regexp.MustCompile(`version +no-go +table \S+ is partway through a new mapping version`).MatchString(r.stdout+r.stderr) {
		t.Errorf("cutover during the comparison: exit %d, want %d with the version check no-go\n%s%s", r.code, ExitNoGo, r.stdout, r.stderr)
	}
	f.awaitLine(t, regexp.MustCompile(`follow: applied [^\n]*?: \d+ transactions, (\d+) changes`),
		func(m []string) bool { return atoi(m[1]) > atoi(began[1]) }, "the stream's changes applied after the comparison began")
	// The tags wait (TagResource held, the pg2dynamo:evolving mark made
	// before the comparison began): the run stops once the checkpoint
	// records v2, and before the table is tagged with it.
	releaseTags := rec.Hold("TagResource")
	defer releaseTags()
	release()
	during := f.awaitLine(t, regexp.MustCompile(`comparison done: the follow applied (\d+) changes of the stream while it ran`), nil, "the comparison to end")
	if atoi(during[1]) == 0 {
		t.Errorf("the follow applied no change while the comparison ran:\n%s", f.out.String())
	}
	f.await(t, "checkpoint "+cp+": recorded mapping "+v2, "the checkpoint to record v2")
	f.await(t, "follow: took public.legacy out of publication "+follow.DefaultName(table), "legacy taken out of the publication")
	stop()
	txs := <-done
	if code := f.halt(); !cleanStop(code) {
		t.Fatalf("migrate --follow --resume --previous-mapping: exit %d\n%s", code, f.out.String())
	}
	releaseTags()
	out := f.out.String()
	if !strings.Contains(out, "changes-only done (not verified: the follow writes the table meanwhile") {
		t.Fatalf("migrate --follow --resume --previous-mapping did not report its comparison:\n%s", out)
	}
	if txs < 10 {
		t.Fatalf("the workload committed %d transactions during the change; want some", txs)
	}
	for _, k := range append(rec.Puts(), rec.Deletes()...) {
		if strings.HasPrefix(k, "ORG#") && strings.Contains(k, " ORG#") {
			t.Errorf("an Org item was written: %s", k)
		}
	}
	change := fileSHA16(t, v1) + " " + fileSHA16(t, v2)
	if tags := tableTags(t, dynamoClient(t), table); tags["pg2dynamo:evolving"] != change || tags["pg2dynamo:mapping-sha256"] != fileSHA16(t, v1) {
		t.Fatalf("tags after the run stopped before tagging: %v; want the change %q under way and v1's SHA-256", tags, change)
	}
	recorded, err := os.ReadFile(cp)
	if err != nil {
		t.Fatal(err)
	}
	// A checkpoint that does not record the change as done (here: the
	// field taken out) resumes no follow with v2 into the marked table.
	testenv.WriteFile(t, cp, strings.Replace(string(recorded), `"evolved": "`+change+`"`, `"evolved": ""`, 1), 0o644)
	if r := runCLI(t, followArgs(v2, dynalite(t).Endpoint, "--resume", "--until-caught-up")...); r.code != ExitUsage || !strings.Contains(r.stderr, "is partway through a new version of mapping tickets-evolve") {
		t.Fatalf("a resume with v2 whose checkpoint does not record the change: exit %d, want %d refused\n%s", r.code, ExitUsage, r.stderr)
	}
	testenv.WriteFile(t, cp, string(recorded), 0o644)
	// The rest of the workload, with v2 as the checkpoint records it: the
	// resume completes the tags.
	r := runCLI(t, followArgs(v2, dynalite(t).Endpoint, "--resume", "--until-caught-up")...)
	if r.code != ExitOK || !strings.Contains(r.stderr, "the checkpoint records the change of mapping tickets-evolve") {
		t.Fatalf("migrate --follow --resume with v2: exit %d, want 0 completing the tags\n%s", r.code, r.stderr)
	}
	if tags := tableTags(t, dynamoClient(t), table); tags["pg2dynamo:evolving"] != "" || tags["pg2dynamo:mapping-sha256"] != fileSHA16(t, v2) {
		t.Errorf("tags after the resume with v2: %v; want no change under way and v2's SHA-256", tags)
	}
	want := freshV2(t, src, v2)
	if d := cmp.Diff(want, dumpByKey(t, table)); d != "" {
		t.Fatalf("the evolved table is not what a fresh migration with v2 writes (-fresh +evolved):\n%s", d)
	}
	var published []string
	rows, err := testenv.Connect(t, src).Query(context.Background(), "SELECT tablename::text FROM pg_publication_tables WHERE pubname = $1 ORDER BY 1", follow.DefaultName(table))
	if err == nil {
		published, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil || !slices.Equal(published, []string{"notes", "orgs", "tickets", "users"}) {
		t.Errorf("publication %s publishes %v (%v), want the tables v2 follows", follow.DefaultName(table), published, err)
	}
	if r := runCLI(t, "verify", "--mapping", v2, "--source", src, "--endpoint-url", dynalite(t).Endpoint, "--table", table); r.code != ExitOK || !strings.Contains(r.stdout, "OrgTickets") {
		t.Errorf("verify with v2: exit %d\n%s", r.code, r.stdout)
	}
}

// A new version the table cannot take in place, a previous version that
// did not write the table, or --previous-mapping without a way to apply
// it, are refused with exit 2, saying what to do, and the table is
// unchanged; a GSI the endpoint does not create stops the run before any
// item is written.
func TestEvolveRefusals(t *testing.T) {
	parallel(t)
	src, v1, v2, table := evolveFixture(t)
	before := dumpByKey(t, table)
	// Unnamed mappings have no versions: the table's identity is the name.
	unnamed1, unnamed2 := filepath.Join(t.TempDir(), "u1.yaml"), filepath.Join(t.TempDir(), "u2.yaml")
	testenv.WriteFile(t, unnamed1, strings.Replace(evolveV1, "name: tickets-evolve\n", "", 1), 0o644)
	testenv.WriteFile(t, unnamed2, strings.Replace(evolveV2, "name: tickets-evolve\n", "", 1), 0o644)
	const noName = "versions of a mapping are told apart by their common name"
	rekeyed := filepath.Join(t.TempDir(), "v3.yaml")
	testenv.WriteFile(t, rekeyed, strings.NewReplacer("  name: tickets\n", "  name: tickets\n  sort_key: SK2\n", "AND begins_with(SK, USER#)", "AND begins_with(SK2, USER#)").Replace(evolveV2), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		says string
	}{
		{"table key changed", migrateArgs(t, rekeyed, src, table, "--changes-only", "--previous-mapping", v1),
			"the table's sort key attribute: SK → SK2; nothing was written. Migrate into a new table with the new mapping (--table NEW --create-table --follow), then cut over to it"},
		{"not the version that wrote it", migrateArgs(t, v2, src, table, "--changes-only", "--previous-mapping", v2),
			"give the file of the version that wrote it; nothing was written"},
		{"without --changes-only", migrateArgs(t, v2, src, table, "--previous-mapping", v1),
			"--previous-mapping needs --changes-only, or --follow --resume"},
		{"--drop-gsis alone", migrateArgs(t, v2, src, table, "--changes-only", "--drop-gsis"),
			"--drop-gsis needs --previous-mapping"},
		{"unnamed versions", migrateArgs(t, unnamed2, src, table, "--changes-only", "--previous-mapping", unnamed1), noName},
		{"plan of unnamed versions", []string{"plan", "--mapping", unnamed2, "--previous-mapping", unnamed1}, noName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, tc.args...)
			if r.code != ExitUsage || !strings.Contains(r.stderr, tc.says) {
				t.Errorf("exit %d, want %d saying %q\n%s", r.code, ExitUsage, tc.says, r.stderr)
			}
		})
	}
	// A new GSI is created before any item is written: dynalite, which
	// creates no index on an existing table, refuses the UpdateTable of
	// an on-demand table (it asks for a provisioned throughput, which
	// DynamoDB refuses there), and the run stops at it.
	withGSI := filepath.Join(t.TempDir(), "v4.yaml")
	testenv.WriteFile(t, withGSI, strings.NewReplacer("    - {name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK}\n",
		"    - {name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK}\n    - {name: GSI2, partition_key: GSI2PK}\n",
		"  UserEmail:\n", "  UserEmail:\n    indexes:\n      GSI2: {pk: \"EMAIL\"}\n").Replace(evolveV2), 0o644)
	rec := testenv.NewWriteRecorder(t, dynalite(t).Endpoint, "PK", "SK")
	r := runCLI(t, withEndpoint(migrateArgs(t, withGSI, src, table, "--changes-only", "--previous-mapping", v1), rec.URL)...)
	if r.code != ExitFailed || !strings.Contains(r.stderr, "create GSI GSI2 on table "+table+": ") {
		t.Errorf("a GSI added on dynalite: exit %d, want %d saying the index could not be created\n%s", r.code, ExitFailed, r.stderr)
	}
	if ops := rec.Operations(); ops["UpdateTable"] != 1 || len(rec.Puts())+len(rec.Deletes()) > 0 {
		t.Errorf("requests %v, %d puts, %d deletes; want one UpdateTable and no write", ops, len(rec.Puts()), len(rec.Deletes()))
	}
	if d := cmp.Diff(before, dumpByKey(t, table)); d != "" {
		t.Errorf("a refused run changed the table (-before +after):\n%s", d)
	}
}

// A run applying a new version that stops partway (DynamoDB refuses every
// write after the first batch) leaves a table holding items of both
// versions, tagged as partway through the change: a run of either version
// alone is refused, writing nothing, until the change is taken back (the
// previous version applied over the new one: the table then equals a
// fresh migration with v1) or finished (the same run again: a fresh
// migration with v2), which ends the mark.
func TestEvolveStoppedIsFinishedOrTakenBack(t *testing.T) {
	parallel(t)
	src, v1, v2, table := evolveFixture(t)
	freshV1 := dumpByKey(t, table)
	stop := func() {
		t.Helper()
		proxy := startProxy(t, faultproxy.Rates{Permanent: "AccessDeniedException", PermanentAfter: 1,
			Only: []string{"BatchWriteItem", "PutItem", "DeleteItem"}}, 1)
		r := runCLI(t, withEndpoint(migrateArgs(t, v2, src, table, "--changes-only", "--previous-mapping", v1, "--concurrency", "1"), proxy.URL)...)
		if r.code != ExitFailed || !strings.Contains(r.stderr, "AccessDeniedException") {
			t.Fatalf("v2 over v1 with writes refused after the first batch: exit %d, want %d\n%s", r.code, ExitFailed, r.stderr)
		}
		tags := tableTags(t, dynamoClient(t), table)
		if want := fileSHA16(t, v1) + " " + fileSHA16(t, v2); tags["pg2dynamo:evolving"] != want || tags["pg2dynamo:mapping-sha256"] != fileSHA16(t, v1) {
			t.Fatalf("tags after the stopped run: %v; want pg2dynamo:evolving %q and v1's SHA-256", tags, want)
		}
	}
	stop()
	mixed := dumpByKey(t, table)
	if cmp.Equal(freshV1, mixed) {
		t.Fatal("the stopped run wrote nothing: there is no change to take back")
	}
	for _, args := range [][]string{
		migrateArgs(t, v1, src, table, "--no-verify"),
		migrateArgs(t, v1, src, table, "--changes-only"),
		migrateArgs(t, v2, src, table, "--changes-only"),
	} {
		r := runCLI(t, args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, "table "+table+" is partway through a new version of mapping tickets-evolve") ||
			!strings.Contains(r.stderr, "take it back with the two files swapped") {
			t.Errorf("%v on the table partway: exit %d, want %d saying so and what to do\n%s", args[1:3], r.code, ExitUsage, r.stderr)
		}
	}
	if d := cmp.Diff(mixed, dumpByKey(t, table)); d != "" {
		t.Fatalf("a refused run changed the table (-before +after):\n%s", d)
	}
	if r := runCLI(t, migrateArgs(t, v1, src, table, "--changes-only", "--previous-mapping", v2)...); r.code != ExitOK {
		t.Fatalf("v1 over v2 (taking the change back): exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if d := cmp.Diff(freshV1, dumpByKey(t, table)); d != "" {
		t.Errorf("the table taken back is not what a fresh migration with v1 writes (-fresh +taken back):\n%s", d)
	}
	if tags := tableTags(t, dynamoClient(t), table); tags["pg2dynamo:evolving"] != "" || tags["pg2dynamo:mapping-sha256"] != fileSHA16(t, v1) {
		t.Errorf("tags after taking it back: %v; want no change under way and v1's SHA-256", tags)
	}
	if r := runCLI(t, migrateArgs(t, v1, src, table, "--changes-only")...); r.code != ExitOK {
		t.Errorf("v1 once the change is taken back: exit %d\n%s", r.code, r.stderr)
	}
	stop()
	if r := runCLI(t, migrateArgs(t, v2, src, table, "--changes-only", "--previous-mapping", v1)...); r.code != ExitOK {
		t.Fatalf("v2 over v1 again (finishing the change): exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if d := cmp.Diff(freshV2(t, src, v2), dumpByKey(t, table)); d != "" {
		t.Errorf("the finished table is not what a fresh migration with v2 writes (-fresh +finished):\n%s", d)
	}
	if tags := tableTags(t, dynamoClient(t), table); tags["pg2dynamo:evolving"] != "" || tags["pg2dynamo:mapping-sha256"] != fileSHA16(t, v2) {
		t.Errorf("tags once finished: %v; want no change under way and v2's SHA-256", tags)
	}
}

// diff --previous-mapping prices applying the second version of the
// mapping before anything is written, and is what migrate --changes-only
// --previous-mapping then does: the items it puts and deletes, and their
// write units.
func TestEvolveDiff(t *testing.T) {
	parallel(t)
	src, v1, v2, table := evolveFixture(t)
	dir := t.TempDir()
	r := runCLI(t, "diff", "--mapping", v2, "--previous-mapping", v1, "--source", src, "--endpoint-url", dynalite(t).Endpoint, "--table", table,
		"--report-json", filepath.Join(dir, "diff.json"))
	if r.code != ExitOK || !strings.Contains(r.stderr, "entity UserEmail: entity added") {
		t.Fatalf("diff --previous-mapping: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	diff := readReport(t, filepath.Join(dir, "diff.json"))
	// 20 users changed, 20 user emails and 200 tickets new; 200 tickets
	// re-keyed and the one org's plan item stale.
	if n := diff.Summary; n.New != 220 || n.Changed != 20 || n.Stale != 201 || n.Other != 0 {
		t.Fatalf("diff: %+v; want 220 new, 20 changed, 201 stale, and no item of Org read", n)
	}
	// migrate's --dry-run of the same is that diff.
	r = runCLI(t, migrateArgs(t, v2, src, table, "--changes-only", "--previous-mapping", v1, "--dry-run", "--report-json", filepath.Join(dir, "dry.json"))...)
	if dry := readReport(t, filepath.Join(dir, "dry.json")); r.code != ExitOK || dry.Summary != diff.Summary || dry.Cost.ChangeWriteUnits != diff.Cost.ChangeWriteUnits {
		t.Fatalf("migrate --changes-only --previous-mapping --dry-run: exit %d, %+v; want 0 and diff's %+v\n%s", r.code, dry.Summary, diff.Summary, r.stderr)
	}
	r = runCLI(t, migrateArgs(t, v2, src, table, "--changes-only", "--previous-mapping", v1, "--report-json", filepath.Join(dir, "changes.json"))...)
	if r.code != ExitOK {
		t.Fatalf("migrate --changes-only --previous-mapping: exit %d\n%s", r.code, r.stderr)
	}
	a := readChangesReport(t, filepath.Join(dir, "changes.json")).Applied
	if want := diff.Cost.ChangeWriteUnits + diff.Cost.StaleWriteUnits; a.Written != 240 || a.Deleted != 201 || a.WriteUnits != want {
		t.Errorf("applied %+v; want 240 written, 201 deleted, %d write units as diff priced them", a, want)
	}
}

// A new version whose added entity renders the keys of an entity it does
// not compare (OrgCopy over Org's ORG# keys): diff reads the new items'
// keys again, names how many items of the other type hold them, and
// applying the version rejects exactly those.
func TestEvolveDiffNamesHeldKeys(t *testing.T) {
	parallel(t)
	src, v1, _, table := evolveFixture(t)
	v3 := filepath.Join(t.TempDir(), "v3.yaml")
	testenv.WriteFile(t, v3, strings.Replace(evolveV2, "access_patterns:\n",
		"  OrgCopy:\n    source: {table: orgs}\n    pk: ORG#${org_id}\n    sk: ORG#${org_id}\naccess_patterns:\n", 1), 0o644)
	var orgs int64
	if err := testenv.Connect(t, src).QueryRow(context.Background(), "SELECT count(*) FROM orgs").Scan(&orgs); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rec := testenv.NewRecorder(t, dynalite(t).Endpoint)
	r := runCLI(t, "diff", "--mapping", v3, "--previous-mapping", v1, "--source", src, "--endpoint-url", rec.URL, "--table", table,
		"--report-json", filepath.Join(dir, "diff.json"))
	ops := map[string]bool{}
	for _, op := range rec.Operations() {
		ops[strings.TrimPrefix(op, "DynamoDB_20120810.")] = true
	}
	for op := range ops {
		if !slices.Contains([]string{"DescribeTable", "ListTagsOfResource", "Scan", "Query", "BatchGetItem"}, op) {
			t.Errorf("diff --previous-mapping sent %s: it must only read", op)
		}
	}
	if !ops["BatchGetItem"] {
		t.Errorf("diff --previous-mapping sent %v: no BatchGetItem, so it did not read the new items' keys again", slices.Sorted(maps.Keys(ops)))
	}
	says := fmt.Sprintf("new items' keys are held by items of other types (Org %d): applying it rejects them", orgs)
	if orgs == 1 {
		says = "1 new item's key is held by items of other types (Org 1): applying it rejects them"
	}
	if r.code != ExitOK || !strings.Contains(r.stdout, says) {
		t.Fatalf("diff: exit %d, want 0 saying %q\n%s\n%s", r.code, says, r.stdout, r.stderr)
	}
	if held := readReport(t, filepath.Join(dir, "diff.json")).Held; held["Org"] != orgs || len(held) != 1 {
		t.Errorf("diff's held keys %v; want Org %d", held, orgs)
	}
	r = runCLI(t, migrateArgs(t, v3, src, table, "--changes-only", "--previous-mapping", v1, "--report-json", filepath.Join(dir, "changes.json"))...)
	if a := readChangesReport(t, filepath.Join(dir, "changes.json")).Applied; r.code != ExitMismatch || a.Rejected != orgs {
		t.Errorf("applying it: exit %d and %d rejected; want %d (its check fails) and the %d rows diff named\n%s", r.code, a.Rejected, ExitMismatch, orgs, r.stderr)
	}
}

// awaitLine waits, as await does, for a match of re in the follow's
// output that ok accepts (nil: any), and returns its submatches.
func (f *runningFollow) awaitLine(t *testing.T, re *regexp.Regexp, ok func([]string) bool, what string) []string {
	t.Helper()
	deadline := time.After(eventWait)
	for {
		for _, m := range re.FindAllStringSubmatch(f.out.String(), -1) {
			if ok == nil || ok(m) {
				return m
			}
		}
		select {
		case <-f.ended:
			t.Fatalf("waiting for %s (%s): the run ended first\n%s", what, re, f.out.String())
		case <-deadline:
			t.Fatalf("waiting for %s (%s): not seen in %s\n%s", what, re, eventWait, f.out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// atoi is s's value, a count the run printed.
func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
