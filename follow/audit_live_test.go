package follow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/tools/faultproxy"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// The rolling audit of a follow (--audit): drift the stream cannot show,
// made behind the follow's back, is found within a cycle, reported or
// repaired; lag under a steady workload raises no alarm.

// auditSchema is notes with an enum column the mapping maps
// (testdata/notes-whole.yaml takes every column): half the notes
// pending, half done.
const auditSchema = `CREATE TYPE note_status AS ENUM ('pending', 'done');
	CREATE TABLE notes (note_id int PRIMARY KEY, owner text NOT NULL, body text, status note_status NOT NULL);
	ALTER TABLE notes REPLICA IDENTITY FULL;
	INSERT INTO notes SELECT i, 'o' || (i % 3), 'note ' || i, CASE WHEN i % 2 = 0 THEN 'pending' ELSE 'done' END::note_status FROM generate_series(1, 20) i`

// auditCycle is the tests' --audit-cycle: a slice every 2 s (the table is
// one slice), so that each test sees several cycles.
const auditCycle = "2s"

// auditedFollow loads auditSchema, then starts a follow with the audit
// in mode and a short cycle, without DDL capture or catalog checks; it
// returns the follow, its table and the audit file's path.
func auditedFollow(t *testing.T, mode string) (followedChange, *liveFollow, string) {
	t.Helper()
	f := auditedSource(t)
	p, file := startAudited(t, f, mode)
	return f, p, file
}

// auditedSource loads auditSchema and its table.
func auditedSource(t *testing.T) followedChange {
	t.Helper()
	// Neither DDL capture nor the follow's catalog checks: the enum label
	// renamed (tamper) is then seen by the audit alone.
	f := followChangesWith(t, filepath.Join("testdata", "notes-whole.yaml"), auditSchema, []string{"--no-ddl-capture", "--catalog-interval", "0"})
	if f.code != 0 {
		t.Fatalf("migrate --follow --resume: exit %d\n%s", f.code, f.out)
	}
	return f
}

// startAudited starts f's follow with the audit in mode, a short cycle and
// more flags, and returns it with the audit file's path.
func startAudited(t *testing.T, f followedChange, mode string, more ...string) (*liveFollow, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "drift.jsonl")
	p := startFollow(t, liveArgs(f, append([]string{"--audit", mode, "--audit-cycle", auditCycle, "--audit-file", file}, more...)...)...)
	p.waitFor(t, following, "the follow to start")
	return p, file
}

// noteKey is the item key of note id (owner 'o' || id % 3).
func noteKey(id int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: fmt.Sprintf("OWNER#o%d", id%3)},
		"SK": &types.AttributeValueMemberS{Value: fmt.Sprintf("NOTE#%010d", id)},
	}
}

// tamper drifts the table behind the follow's back: note 1's item
// changed (UpdateItem) and note 3's deleted (DeleteItem), both done
// notes, an item of the mapping's type planted for a note that does not
// exist (PutItem: stale), and the enum label pending renamed in the catalog, which no row
// change carries: the items of the ten pending notes hold the old label.
// It returns the number of cycles the audit had completed before.
func tamper(t *testing.T, f followedChange, p *liveFollow) int {
	t.Helper()
	before := len(cycleDone.FindAllString(p.out.String(), -1))
	c, err := load.NewClient(context.Background(), load.ClientConfig{EndpointURL: f.endpoint})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(f.table), Key: noteKey(1),
		UpdateExpression:          aws.String("SET body = :b"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":b": &types.AttributeValueMemberS{Value: "changed behind the follow"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(f.table), Key: noteKey(3)}); err != nil {
		t.Fatal(err)
	}
	planted := noteKey(999)
	planted["PK"] = &types.AttributeValueMemberS{Value: "OWNER#o9"}
	planted["type"] = &types.AttributeValueMemberS{Value: "Note"}
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.table), Item: planted}); err != nil {
		t.Fatal(err)
	}
	testenv.Exec(t, f.url, `ALTER TYPE note_status RENAME VALUE 'pending' TO 'waiting'`)
	return before
}

var cycleDone = regexp.MustCompile(`audit: cycle (\d+) done in \d+ slices[^:]*: \d+ items compared, \d+ left out \(written by the follow meanwhile\), (\d+) drifted`)

// tampered is what tamper leaves: the drifted items by key, kind and
// entity, as the audit file lists them.
var tampered = func() []string {
	out := []string{`changed {"PK":"OWNER#o1","SK":"NOTE#0000000001"} Note Note`, `missing {"PK":"OWNER#o0","SK":"NOTE#0000000003"} Note Note`,
		`stale {"PK":"OWNER#o9","SK":"NOTE#0000000999"} Note Note`}
	for id := 2; id <= 20; id += 2 {
		out = append(out, fmt.Sprintf(`changed {"PK":"OWNER#o%d","SK":"NOTE#%010d"} Note Note`, id%3, id))
	}
	slices.Sort(out)
	return out
}()

// driftFile reads the audit file: each item as "kind key entity type",
// sorted and once (a cycle lists again what the one before found and
// left), with the first cycle that found each and whether it was
// repaired then.
func driftFile(t *testing.T, path string) (items []string, cycles []int, repaired []bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var d follow.Drift
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("audit file: %q: %v", line, err)
		}
		key, _ := json.Marshal(d.Key)
		item := fmt.Sprintf("%s %s %s %s", d.Kind, key, d.Entity, d.Type)
		if slices.Contains(items, item) {
			continue
		}
		items = append(items, item)
		cycles, repaired = append(cycles, d.Cycle), append(repaired, d.Repaired)
	}
	slices.Sort(items)
	return items, cycles, repaired
}

// waitWithinCycles waits until the output matches re, and fails the
// test when the audit completes two cycles after the cycle under way at
// before (cycles completed) without it: the drift (or the repair) was
// there for a whole cycle, and the audit did not see it.
func (p *liveFollow) waitWithinCycles(t *testing.T, re *regexp.Regexp, what string, before int) {
	t.Helper()
	p.waitUntilWithinCycles(t, re.MatchString, what, before)
}

// waitUntilWithinCycles is waitWithinCycles for a condition on the
// output.
func (p *liveFollow) waitUntilWithinCycles(t *testing.T, cond func(out string) bool, what string, before int) {
	t.Helper()
	late := false
	ended := p.watch(t, what, func(out string) bool {
		late = len(cycleDone.FindAllString(out, -1)) > before+2
		return late || cond(out)
	})
	if out := p.out.String(); ended || (late && !cond(out)) {
		t.Fatalf("waiting for %s: not by the end of cycle %d, the one after the cycle under way when it was due (%d)\n%s", what, before+2, before+1, firstLines(out, 80))
	}
}

// withinOneCycle fails the test unless every cycle is at most the one
// after the cycle under way when the table was tampered with (which may
// have read the table before).
func withinOneCycle(t *testing.T, cycles []int, before int) {
	t.Helper()
	for _, c := range cycles {
		if c > before+2 {
			t.Errorf("found in cycle %d; the table was tampered with during cycle %d: want it found by cycle %d", c, before+1, before+2)
		}
	}
}

// report: an item changed, one deleted and one planted in DynamoDB, and an enum label
// renamed in the catalog, are found within one cycle and listed (stderr,
// the audit file, the status line's count), and the follow exits 4 at
// SIGINT saying so; the table is left as it is.
func TestAuditReportsDrift(t *testing.T) {
	t.Parallel()
	f, p, file := auditedFollow(t, "report")
	before := tamper(t, f, p)
	n := len(tampered)
	p.waitWithinCycles(t, regexp.MustCompile(`audit: changed item PK="OWNER#o1" SK="NOTE#0000000001" \(entity Note, type Note\)`), "the changed item listed", before)
	p.waitWithinCycles(t, regexp.MustCompile(`audit: missing item PK="OWNER#o0" SK="NOTE#0000000003" \(entity Note, type Note\)`), "the deleted item listed", before)
	p.waitWithinCycles(t, regexp.MustCompile(`audit: stale item PK="OWNER#o9" SK="NOTE#0000000999" \(entity Note, type Note\)`), "the planted item listed", before)
	p.waitWithinCycles(t, regexp.MustCompile(`; audit cycle \d+: \d+%, \d+ drifted.* \(DRIFT: `+strconv.Itoa(n)+` items in cycle \d+, not repaired\)`), "the status line to count the drift", before)
	p.cmd.Process.Signal(syscall.SIGINT)
	code := p.exit(t)
	out := p.out.String()
	if code != 4 || !regexp.MustCompile(fmt.Sprintf(`the rolling audit found %d items that differ from the source in cycle \d+ \(the last that found any\), not repaired \(--audit report\)`, n)).MatchString(out) ||
		!strings.Contains(out, "--audit repair") {
		t.Fatalf("exit %d, want 4 with the drift counted and --audit repair advised\n%s", code, firstLines(out, 80))
	}
	items, cycles, repaired := driftFile(t, file)
	if !slices.Equal(items, tampered) {
		t.Errorf("audit file:\n%s\nwant:\n%s", strings.Join(items, "\n"), strings.Join(tampered, "\n"))
	}
	withinOneCycle(t, cycles, before)
	if slices.Contains(repaired, true) {
		t.Errorf("report mode marked items repaired: %v", repaired)
	}
	// Reported, not written: the table still drifts.
	if want, got := deriveItems(t, f.url, f.mapping, f.table), scanTable(t, f.endpoint, f.table); slices.Equal(want, got) {
		t.Error("the table equals a full load of the source: report mode wrote")
	}
}

// report: drift that is gone again by a later cycle (here the item put
// back as it was, behind the follow's back) no longer counts: after a
// clean cycle the status line drops its DRIFT and the follow exits 0 at
// SIGINT, the drift file still listing what was found.
func TestAuditReportClearsAfterACleanCycle(t *testing.T) {
	t.Parallel()
	f, p, file := auditedFollow(t, "report")
	c, err := load.NewClient(context.Background(), load.ClientConfig{EndpointURL: f.endpoint})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(f.table), Key: noteKey(1), ConsistentRead: aws.Bool(true)})
	if err != nil || got.Item == nil {
		t.Fatalf("note 1's item: %v, %v", got, err)
	}
	before := len(cycleDone.FindAllString(p.out.String(), -1))
	if _, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(f.table), Key: noteKey(1),
		UpdateExpression:          aws.String("SET body = :b"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":b": &types.AttributeValueMemberS{Value: "changed behind the follow"}}}); err != nil {
		t.Fatal(err)
	}
	p.waitWithinCycles(t, regexp.MustCompile(`\(DRIFT: 1 items in cycle \d+, not repaired\)`), "the status line to count the drift", before)
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.table), Item: got.Item}); err != nil {
		t.Fatal(err)
	}
	// A cycle that begins after the put finds nothing, and the status
	// line after it has no DRIFT.
	restored := len(cycleDone.FindAllString(p.out.String(), -1))
	clean := regexp.MustCompile(`audit: cycle \d+ done[^\n]*, 0 drifted\n`)
	p.waitUntilWithinCycles(t, func(out string) bool {
		ends := cycleDone.FindAllStringIndex(out, -1)
		if len(ends) < restored+2 {
			return false
		}
		after := out[ends[restored+1][0]:]
		return clean.MatchString(after) && regexp.MustCompile(`; audit cycle \d+: \d+%, 0 drifted[^\n]*\n`).MatchString(after)
	}, "a clean cycle after the item was put back", restored)
	if out := p.out.String(); strings.Contains(out[cycleDone.FindAllStringIndex(out, -1)[restored+1][0]:], "DRIFT:") {
		t.Errorf("DRIFT still on the status line after a clean cycle\n%s", firstLines(out, 80))
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.exit(t); code != 0 {
		t.Fatalf("exit %d after SIGINT, want 0: the last cycle found the table equal to the source\n%s", code, firstLines(p.out.String(), 80))
	}
	items, _, _ := driftFile(t, file)
	if want := []string{`changed {"PK":"OWNER#o1","SK":"NOTE#0000000001"} Note Note`}; !slices.Equal(items, want) {
		t.Errorf("audit file: %q, want %q", items, want)
	}
}

// repair: the same drift is found within one cycle, every item rewritten
// by the follow and counted; the next cycle finds nothing, the follow
// exits 0 at SIGINT, and the table equals a fresh full load. The audit
// compares 4 keys at a time, so a cycle is 5 slices whose drift is
// repaired in several batches, yet Scans the table once: a recording
// proxy in front of dynalite counts the Scans.
func TestAuditRepairsDrift(t *testing.T) {
	t.Parallel()
	f := auditedSource(t)
	proxy, err := faultproxy.Start(f.endpoint, faultproxy.Rates{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	p, file := startAudited(t, f, "repair", "--audit-slice-items", "4", "--endpoint-url", proxy.URL)
	before := tamper(t, f, p)
	// Each item listed as repaired: by one cycle, or by two when the
	// tampering fell between a slice's snapshot and its Scan.
	var lines []string
	for _, it := range tampered {
		var kind, key, entity, typ string
		fmt.Sscanf(it, "%s %s %s %s", &kind, &key, &entity, &typ)
		var k map[string]string
		if err := json.Unmarshal([]byte(key), &k); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, fmt.Sprintf("audit: %s item PK=%q SK=%q (entity %s, type %s), repaired\n", kind, k["PK"], k["SK"], entity, typ))
	}
	p.waitUntilWithinCycles(t, func(out string) bool {
		return !slices.ContainsFunc(lines, func(l string) bool { return !strings.Contains(out, l) })
	}, "every drifted item repaired", before)
	p.waitFor(t, regexp.MustCompile(`; audit cycle \d+: \d+%, \d+ drifted, \d+ repaired \(cycle \d+: [1-9]\d* drifted, [1-9]\d* repaired\)`), "the status line to count the repairs")
	// A cycle after the repairs finds nothing.
	clean := regexp.MustCompile(`audit: cycle \d+ done[^\n]*, 0 drifted, 0 repaired`)
	p.waitUntilWithinCycles(t, func(out string) bool {
		return clean.MatchString(out[strings.LastIndex(out, ", repaired\n"):])
	}, "a clean cycle after the repairs", len(cycleDone.FindAllString(p.out.String(), -1)))
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.exit(t); code != 0 {
		t.Fatalf("exit %d after SIGINT, want 0: everything drifted was repaired\n%s", code, firstLines(p.out.String(), 80))
	}
	items, cycles, repaired := driftFile(t, file)
	if !slices.Equal(items, tampered) {
		t.Errorf("audit file:\n%s\nwant:\n%s", strings.Join(items, "\n"), strings.Join(tampered, "\n"))
	}
	withinOneCycle(t, cycles, before)
	if slices.Contains(repaired, false) {
		t.Errorf("items not marked repaired: %v", repaired)
	}
	f.inStep(t)
	// Each cycle begun Scans the table once, in its 2 segments of a page.
	out := p.out.String()
	done := cycleDone.FindAllString(out, -1)
	if !strings.Contains(out, "done in 5 slices") {
		t.Errorf("no cycle done in 5 slices (20 notes, 4 keys a slice):\n%s", strings.Join(done, "\n"))
	}
	if scans, most := proxy.Counts()["op:Scan"], 2*(len(done)+1); scans > most {
		t.Errorf("%d Scan requests for %d cycles done (one more may have begun): want at most %d, one Scan a cycle", scans, len(done), most)
	}
}

// A steady workload on the source (updates, owner moves that re-key
// items, inserts and deletes, back to back) while the audit runs two
// full cycles: the keys the follow writes during a slice are left out,
// and nothing is reported.
func TestAuditRaisesNoFalseAlarmUnderLoad(t *testing.T) {
	t.Parallel()
	f, p, file := auditedFollow(t, "report")
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	var changes int
	var werr error
	go func() {
		defer wg.Done()
		changes, werr = steadyNotes(ctx, f.url)
	}()
	start := len(cycleDone.FindAllString(p.out.String(), -1))
	p.watch(t, "two full cycles under the workload", func(out string) bool {
		return len(cycleDone.FindAllString(out, -1)) >= start+3
	})
	stop()
	wg.Wait()
	if werr != nil {
		t.Fatal(werr)
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	code := p.exit(t)
	out := p.out.String()
	var skipped int
	for _, m := range regexp.MustCompile(`(\d+) left out`).FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[1])
		skipped += n
	}
	t.Logf("%d changes committed; %d keys left out of the comparison as written by the follow during their slice", changes, skipped)
	if code != 0 || strings.Contains(out, "audit: missing item") || strings.Contains(out, "audit: changed item") || strings.Contains(out, "audit: stale item") {
		t.Fatalf("exit %d, want 0 with nothing drifted\n%s", code, firstLines(out, 80))
	}
	if skipped == 0 {
		t.Errorf("no key was left out: the workload did not overlap a slice, and the test shows nothing")
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("audit file %s exists (%v): nothing should have drifted", file, err)
	}
	// The follow was stopped with changes still to apply: a resume
	// until caught up applies them.
	if code, out := f.resume(); code != 0 {
		t.Fatalf("--resume --until-caught-up: exit %d\n%s", code, out)
	}
	f.inStep(t)
}

// steadyNotes changes notes back to back until ctx is done: a body
// updated, a note moved to another owner (its item re-keyed), one
// inserted and one deleted. It returns the changes committed.
func steadyNotes(ctx context.Context, url string) (int, error) {
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	r := rand.New(rand.NewPCG(1, 2))
	next, n := 100, 0
	for ctx.Err() == nil {
		stmts := []string{
			fmt.Sprintf(`UPDATE notes SET body = body || '.' WHERE note_id = %d`, 1+r.IntN(20)),
			fmt.Sprintf(`UPDATE notes SET owner = 'm' || %d WHERE note_id = %d`, r.IntN(4), 1+r.IntN(20)),
			fmt.Sprintf(`INSERT INTO notes VALUES (%d, 'o1', 'new', 'done')`, next),
			fmt.Sprintf(`DELETE FROM notes WHERE note_id = %d`, next-1),
		}
		next++
		for _, s := range stmts {
			if _, err := conn.Exec(context.Background(), s); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// Drift in one entity is repaired from that entity's rows alone: the org's
// item, changed behind the follow, is put back from its one row, the
// members' 50 rows are not read again, and the table ends in step.
func TestAuditRepairReadsTheDriftedEntityOnly(t *testing.T) {
	t.Parallel()
	f := loaded(t, filepath.Join("testdata", "orgs-members.yaml"), orgsSchema(50))
	port, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p := startFollow(t, liveArgs(f, "--audit", "repair", "--audit-cycle", auditCycle, "--audit-file", filepath.Join(t.TempDir(), "drift.jsonl"),
		"--metrics-addr", addr)...)
	p.waitFor(t, following, "the follow to start")
	c, err := load.NewClient(context.Background(), load.ClientConfig{EndpointURL: f.endpoint})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(f.table),
		Key:                       map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "ORG#0000000001"}, "SK": &types.AttributeValueMemberS{Value: "ORG"}},
		UpdateExpression:          aws.String("SET #n = :n"),
		ConditionExpression:       aws.String("attribute_exists(PK)"), // the org's own item, not a new one
		ExpressionAttributeNames:  map[string]string{"#n": "name"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberS{Value: "changed behind the follow"}}}); err != nil {
		t.Fatal(err)
	}
	repairedLine := regexp.MustCompile(`audit: cycle \d+ done[^\n]*, 1 drifted, 1 repaired \((\d+) source rows read again`)
	p.waitFor(t, repairedLine, "the cycle that repairs the org's item")
	if n := repairedLine.FindStringSubmatch(p.out.String())[1]; n != "1" {
		t.Errorf("the repair read %s source rows again, want 1: the org's row, not its members'", n)
	}
	// The passes' Scans count their read units (51 items, at least 1 a cycle).
	if n := sum(scrape(t, addr), "pg2dynamo_read_units_total"); n < 1 {
		t.Errorf("pg2dynamo_read_units_total = %v after an audit cycle, want its Scan's units", n)
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.exit(t); code != 0 {
		t.Fatalf("exit %d after SIGINT, want 0\n%s", code, firstLines(p.out.String(), 60))
	}
	f.inStep(t)
}

// An audit reads its pass's snapshot for the derivation alone: while its
// Scan is held back, no session of the source holds a snapshot open
// (VACUUM's horizon moves on), whether it reports or repairs; released,
// the cycle completes clean.
func TestAuditEndsItsSnapshotBeforeTheScan(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"report", "repair"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			f := auditedSource(t)
			rec := testenv.NewWriteRecorder(t, f.endpoint, "PK", "SK")
			release := rec.Hold("Scan")
			defer release()
			p, _ := startAudited(t, f, mode, "--endpoint-url", rec.URL)
			p.waitFor(t, regexp.MustCompile(`audit cycle 1: 33%`), "the derivation done, the Scan held")
			conn := testenv.Connect(t, f.url)
			open := func() bool {
				var n int
				if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
					WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL AND state = 'idle in transaction'`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n > 0
			}
			if err := testenv.Poll("no snapshot held during the audit's Scan", time.Minute, p.err, func() bool { return !open() }); err != nil {
				t.Fatal(err)
			}
			release()
			p.waitFor(t, regexp.MustCompile(`audit: cycle 1 done[^\n]*, 0 drifted`), "the cycle to complete")
			p.cmd.Process.Signal(syscall.SIGINT)
			if code := p.exit(t); code != 0 {
				t.Fatalf("exit %d after SIGINT, want 0\n%s", code, firstLines(p.out.String(), 60))
			}
		})
	}
}

// Repairs under a steady workload beside the drifted items (updates of
// notes 11 to 20, owner moves that re-key their items, inserts and
// deletes of new notes): the drift tamper leaves (notes 1 and 3, a
// planted item, and the items of the notes whose enum label was renamed)
// is repaired while the follow applies the workload's changes, each
// repair from a snapshot newer than the pass's. Once the workload stops, a
// cycle that began after it finds nothing (no repair wrote an item the
// follow did not put right), the follow exits 0 and the table is what a
// full load writes.
func TestAuditRepairsUnderLoad(t *testing.T) {
	t.Parallel()
	f := auditedSource(t)
	p, _ := startAudited(t, f, "repair", "--audit-slice-items", "8")
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	var werr error
	go func() {
		defer wg.Done()
		werr = notesBeside(ctx, f.url)
	}()
	before := tamper(t, f, p)
	if p.watch(t, "two full cycles under the workload", func(out string) bool {
		return len(cycleDone.FindAllString(out, -1)) >= before+3
	}) {
		t.Fatalf("the follow ended under the workload\n%s", firstLines(p.out.String(), 80))
	}
	stop()
	wg.Wait()
	if werr != nil {
		t.Fatal(werr)
	}
	after := len(cycleDone.FindAllString(p.out.String(), -1))
	if p.watch(t, "a cycle begun after the workload stopped", func(out string) bool {
		return len(cycleDone.FindAllString(out, -1)) >= after+2
	}) {
		t.Fatalf("the follow ended after the workload\n%s", firstLines(p.out.String(), 80))
	}
	if m := cycleDone.FindAllStringSubmatch(p.out.String(), -1)[after+1]; m[2] != "0" {
		t.Errorf("cycle %s, begun after the workload stopped, found %s drifted items: a repair left one wrong\n%s", m[1], m[2], firstLines(p.out.String(), 80))
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.exit(t); code != 0 {
		t.Fatalf("exit %d after SIGINT, want 0\n%s", code, firstLines(p.out.String(), 80))
	}
	f.inStep(t)
}

// notesBeside commits changes to notes 11 to 20 and new notes until ctx
// ends, leaving notes 1 to 10 alone.
func notesBeside(ctx context.Context, url string) error {
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	r := rand.New(rand.NewPCG(3, 4))
	for next := 100; ctx.Err() == nil; next++ {
		for _, stmt := range []string{
			fmt.Sprintf(`UPDATE notes SET body = body || '.' WHERE note_id = %d`, 11+r.IntN(10)),
			fmt.Sprintf(`UPDATE notes SET owner = 'm' || %d WHERE note_id = %d`, r.IntN(4), 11+r.IntN(10)),
			fmt.Sprintf(`INSERT INTO notes VALUES (%d, 'o1', 'new', 'done')`, next),
			fmt.Sprintf(`DELETE FROM notes WHERE note_id = %d`, next-1),
		} {
			if _, err := conn.Exec(context.Background(), stmt); err != nil {
				return err
			}
		}
	}
	return nil
}
