package follow_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// A follow running while the source or the table changes under it, as a
// process of its own (the built binary): what it does when a window meets
// a column change, a lost table, a long fan-out and a huge transaction.

// eventWait bounds each wait on a follow by how long it may go without
// progress (its last line unchanged), not by how long its work takes,
// which depends on the machine and its load. A follow still working
// prints a new status line at least every window; one that has printed
// nothing new for eventWait has hung.
const eventWait = 5 * time.Minute

// liveFollow is a migrate --follow process.
type liveFollow struct {
	cmd  *exec.Cmd
	out  *lockedBuffer
	err  chan error
	peak testenv.PeakRSS
}

// startFollow starts pg2dynamo with args, under the peakrss runner; the
// process is killed when the test ends if it still runs.
func startFollow(t *testing.T, args ...string) *liveFollow {
	t.Helper()
	f := &liveFollow{out: &lockedBuffer{}, err: make(chan error, 1)}
	f.cmd, f.peak = testenv.WithPeakRSS(t, pg2dynamo(t), args...)
	f.cmd.Stdout, f.cmd.Stderr = f.out, f.out
	if err := f.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { f.err <- f.cmd.Wait() }()
	t.Cleanup(func() { f.cmd.Process.Kill() })
	return f
}

// waitFor waits until the output matches re; it fails the test if the
// process ends or the follow stalls first (what names what was awaited).
func (f *liveFollow) waitFor(t *testing.T, re *regexp.Regexp, what string) {
	t.Helper()
	if f.watch(t, what, re.MatchString) {
		err := <-f.err
		f.err <- err
		t.Fatalf("waiting for %s: the follow ended (%v)\n%s", what, err, firstLines(f.out.String(), 60))
	}
}

// exit waits for the process to end and returns its exit code; it fails
// the test if the follow stalls first.
func (f *liveFollow) exit(t *testing.T) int {
	t.Helper()
	f.watch(t, "the follow to end", func(string) bool { return false })
	err := <-f.err
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// watch polls the follow every 20 ms until done holds for its output
// (false) or the process ends (true, its error left in f.err), and fails
// the test if the follow stalls first.
func (f *liveFollow) watch(t *testing.T, what string, done func(out string) bool) (ended bool) {
	t.Helper()
	stall := stallWatch{}
	for !done(f.out.String()) {
		select {
		case err := <-f.err:
			f.err <- err
			return true
		case <-time.After(20 * time.Millisecond):
		}
		if stall.stalled(f.out.String()) {
			t.Fatalf("waiting for %s: the follow printed nothing new for %s\n%s", what, eventWait, firstLines(f.out.String(), 60))
		}
	}
	return false
}

// stallWatch tells a follow making progress from a hung one by its
// output's last line: stalled reports whether that line has stayed the
// same for eventWait, across calls.
type stallWatch struct {
	last  string
	since time.Time
}

func (s *stallWatch) stalled(out string) bool {
	last := strings.TrimSpace(out)
	last = last[strings.LastIndexByte(last, '\n')+1:]
	if s.since.IsZero() || last != s.last {
		s.last, s.since = last, time.Now()
		return false
	}
	return time.Since(s.since) > eventWait
}

// peakRSSUnder fails the test unless the follow's own peak resident set
// (after exit) is under mb MB, and logs it.
func (f *liveFollow) peakRSSUnder(t *testing.T, mb float64) {
	t.Helper()
	if rss := f.peak.MB(t); rss >= mb {
		t.Errorf("peak RSS %.0f MB, want under %.0f", rss, mb)
	} else {
		t.Logf("peak RSS %.0f MB", rss)
	}
}

// withParam adds a parameter to a connection URL (a setting the server
// applies to the session, the replication connection's too).
func withParam(url, param string) string {
	if strings.Contains(url, "?") {
		return url + "&" + param
	}
	return url + "?" + param
}

var following = regexp.MustCompile(`following slot `)

// adapted waits for the follow to derive every item of entity again
// after a column change and to apply the update after it, stops it with
// SIGINT (exit 0), and checks f's table is in step.
func (p *liveFollow) adapted(t *testing.T, f followedChange, entity string) {
	t.Helper()
	p.waitFor(t, regexp.MustCompile(`derived every item of `+entity+` again`), entity+" derived again")
	p.waitFor(t, appliedChanges(1), "the update applied")
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.exit(t); code != 0 {
		t.Fatalf("exit %d after SIGINT\n%s", code, p.out.String())
	}
	f.inStep(t)
}

// appliedChanges matches a status line whose acknowledged totals reach n
// changes, nothing in flight.
func appliedChanges(n int) *regexp.Regexp {
	return regexp.MustCompile(`follow: applied [0-9A-F/]+: \d+ transactions, ` + strconv.Itoa(n) + ` changes`)
}

// loaded sets up a followed table: schema into a new database, the full
// load by migrate --follow --until-caught-up into its own dynalite; the
// returned args (with --resume) go on from its slot.
func loaded(t *testing.T, mappingFile, schema string, extra ...string) (f followedChange) {
	t.Helper()
	f = followChanges(t, mappingFile, schema)
	if f.code != 0 {
		t.Fatalf("migrate --follow --resume: exit %d\n%s", f.code, f.out)
	}
	f.args = append(f.args, extra...)
	return f
}

// liveArgs are f's migrate --follow args for a process that follows until
// stopped, with a status line at every change.
func liveArgs(f followedChange, more ...string) []string {
	var args []string
	for _, a := range f.args {
		if a != "--until-caught-up" {
			args = append(args, a)
		}
	}
	return append(append(args, "--resume", "--progress-interval", "1ms"), more...)
}

// Two tests that spend most of their wall waiting come early: go test
// resumes parallel tests in the order they are declared (files by name,
// which is why this file is named drift_live_test.go), and these two wait
// on a rate-limited fan-out and on a 100,000-row transaction. Started
// early, their waits overlap the other tests' work instead of ending the
// package's run.

// A one-row parent rename fanned out to 202 items under --max-write-units
// 10 (a bucket of 10 units) takes at least 19 s to write, about ten times
// the 2 s wal_sender_timeout set here (a session setting the replication
// connection carries, so the window need not outlast the default 60 s):
// the follow keeps the walsender alive, shows the window's progress, ends
// caught up with the table in step, and its peak RSS stays under 150 MB.
func TestLiveFollowLongWindowOutlivesSenderTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 2 * time.Second
	f := loaded(t, filepath.Join("testdata", "orgs-members.yaml"),
		`CREATE TABLE orgs (org_id int PRIMARY KEY, name text NOT NULL);
		CREATE TABLE members (member_id int PRIMARY KEY, org_id int NOT NULL REFERENCES orgs, name text);
		ALTER TABLE orgs REPLICA IDENTITY FULL; ALTER TABLE members REPLICA IDENTITY FULL;
		INSERT INTO orgs VALUES (1, 'acme'), (2, 'other');
		INSERT INTO members SELECT i, CASE WHEN i <= 201 THEN 1 ELSE 2 END, 'm' || i FROM generate_series(1, 220) i`)
	f.setSourceParam("wal_sender_timeout=" + timeout.String())
	testenv.Exec(t, f.url, `UPDATE orgs SET name = 'acme renamed' WHERE org_id = 1`)
	p := startFollow(t, append(f.args, "--resume", "--max-write-units", "10", "--progress-interval", "1ms")...)
	p.waitFor(t, regexp.MustCompile(`in flight to `), "the window in flight")
	inFlight := time.Now()
	p.waitFor(t, regexp.MustCompile(`items written of the changes in flight`), "the window's progress")
	code := p.exit(t)
	took := time.Since(inFlight)
	out := p.out.String()
	if code != 0 || !strings.Contains(out, "caught up at") || !strings.Contains(out, "202 items put") || strings.Contains(out, "timeout") {
		t.Fatalf("exit %d, want 0, caught up with the 202 items (the org and its 201 members) put, no timeout\n%s", code, firstLines(out, 40))
	}
	// The window is acknowledged when written: the test checks the
	// keepalive only if that took several timeouts.
	if took <= 5*timeout {
		t.Errorf("the window was in flight %s, not five times wal_sender_timeout %s: the test no longer checks that the walsender is kept alive (fan out to more items)", took.Round(time.Millisecond), timeout)
	}
	t.Logf("the window was in flight %s", took.Round(time.Millisecond))
	p.peakRSSUnder(t, 150)
	f.inStep(t)
}

// One transaction of 100,000 rows comes in parts of a window each and is
// acknowledged with its last: written into dynalite under a cap of 10,000
// write units a second, the transaction is in flight (the slot not told)
// at least 10 s, more than three times the 3 s wal_sender_timeout set
// here, however fast the machine; the follow ends caught up, with no
// walsender timeout, its peak RSS under 100 MB (about 45 MB; a follow that
// holds the whole transaction, as Stream.MaxChanges 0 does, passes 180
// MB), and the table equal to a full load. The rows are small: their
// count is what a follow that buffers pays for. Verify is left to the
// other tests: the items cost dynalite most of the test's CPU.
func TestLiveFollowHugeTransactionInBoundedMemory(t *testing.T) {
	t.Parallel()
	const rows, timeout = 100_000, 3 * time.Second
	f := loaded(t, filepath.Join("testdata", "notes-whole.yaml"), notesSchema)
	f.setSourceParam("wal_sender_timeout=" + timeout.String())
	testenv.Exec(t, f.url, fmt.Sprintf(`INSERT INTO notes SELECT i, 'o' || (i %% 100), 'x' FROM generate_series(1000, %d) i`, 1000+rows-1))
	p := startFollow(t, append(f.args, "--resume", "--progress-interval", "1ms", "--max-write-units", "10000")...)
	p.waitFor(t, regexp.MustCompile(`in flight to `), "the transaction in flight")
	inFlight := time.Now()
	code := p.exit(t)
	took := time.Since(inFlight)
	out := p.out.String()
	if code != 0 || !strings.Contains(out, fmt.Sprintf("1 transactions, %d changes, %[1]d items put", rows)) || strings.Contains(out, "timeout") {
		t.Fatalf("exit %d, want 0, one transaction of %d changes applied and no timeout\n%s", code, rows, firstLines(out, 40))
	}
	// The transaction is acknowledged with its last part only: the test
	// checks the keepalive only if that took longer than the timeout.
	if took <= timeout {
		t.Errorf("the transaction was in flight %s, not longer than wal_sender_timeout %s: the test no longer checks that the walsender is kept alive (write more slowly: --max-write-units)", took.Round(time.Millisecond), timeout)
	}
	t.Logf("the transaction was in flight %s", took.Round(time.Millisecond))
	p.peakRSSUnder(t, 100)
	f.matchesFullLoad(t)
}

// A column added while the follow runs, to a table whose every column the
// entity takes: the window that brings the table's new description
// derives every item of the entity again, so unchanged rows get the
// column too.
func TestLiveFollowAddColumn(t *testing.T) {
	t.Parallel()
	f := loaded(t, filepath.Join("testdata", "notes-whole.yaml"), notesSchema)
	p := startFollow(t, liveArgs(f)...)
	p.waitFor(t, following, "the follow to start")
	testenv.Exec(t, f.url, `ALTER TABLE notes ADD COLUMN tag text DEFAULT 'x'`)
	testenv.Exec(t, f.url, `UPDATE notes SET body = 'changed' WHERE note_id = 1`)
	p.waitFor(t, regexp.MustCompile(`derived every item of Note again`), "Note derived again")
	p.waitFor(t, appliedChanges(1), "the update applied")
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.exit(t); code != 0 {
		t.Fatalf("exit %d after SIGINT\n%s", code, p.out.String())
	}
	f.inStep(t)
}

// A column the mapping names dropped while the follow runs: it stops
// with the mapping's own error (file, line, path) and both ways out:
// the column added back, --resume --prune goes on; a new version of the
// mapping without it, --resume --previous-mapping goes on.
func TestLiveFollowDropMappedColumn(t *testing.T) {
	t.Parallel()
	for _, addBack := range []bool{true, false} {
		t.Run(map[bool]string{true: "the column added back", false: "the mapping fitted to the table"}[addBack], func(t *testing.T) {
			t.Parallel()
			f := loaded(t, filepath.Join("testdata", "notes-select.yaml"), notesSchema)
			p := startFollow(t, liveArgs(f)...)
			p.waitFor(t, following, "the follow to start")
			testenv.Exec(t, f.url, `ALTER TABLE notes DROP COLUMN body`)
			testenv.Exec(t, f.url, `UPDATE notes SET owner = 'moved' WHERE note_id = 1`)
			code := p.exit(t)
			out := p.out.String()
			newVersion := "pg2dynamo migrate --follow --resume --mapping NEW.yaml --previous-mapping " + f.mapping
			if code != 1 || !strings.Contains(out, "the columns of public.notes changed (dropped body") ||
				!strings.Contains(out, "notes-select.yaml:") || !strings.Contains(out, "--resume --prune") || !strings.Contains(out, newVersion) {
				t.Fatalf("exit %d, want 1 naming the dropped column, the mapping's line, --resume --prune and %q\n%s", code, newVersion, out)
			}
			var more []string
			if addBack {
				testenv.Exec(t, f.url, `ALTER TABLE notes ADD COLUMN body text`)
				more = []string{"--prune"}
			} else {
				more = []string{"--previous-mapping", f.newVersion(t, "[note_id, owner, body]", "[note_id, owner]")}
			}
			if code, out := f.resume(more...); code != 0 {
				t.Fatalf("--resume %s: exit %d\n%s", strings.Join(more, " "), code, out)
			}
			f.inStep(t)
		})
	}
}

const ticketsSchema = `CREATE TABLE tickets (ticket_id int PRIMARY KEY, owner text NOT NULL, subject text, priority int, tags text[]);
	ALTER TABLE tickets REPLICA IDENTITY FULL;
	INSERT INTO tickets SELECT i, 'o' || (i % 3), 'ticket ' || i, i % 5, ARRAY['t' || i, 'x'] FROM generate_series(1, 20) i`

// A column of an entity with an array column retyped or dropped while the
// follow runs, then a row updated: in transactions of their own (the
// stream describes the table's new columns with the update), and with the
// update committed first in the ALTER's transaction (the stream describes
// nothing new; the window reads the table after the ALTER: it used to
// read it with the old columns, and panicked, exit 2, or failed on the
// array). A retype adapts: every item is derived again, and the table ends
// in step. A column the mapping names dropped stops the follow (exit 1:
// it has written) naming the column and the mapping's line; the advice,
// followed (the column added back, then --resume --prune), ends in step.
func TestLiveFollowColumnChangesOfAnArrayEntity(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, change string
		adapts       bool
		cause        string
	}{
		{"retype then update", `ALTER TABLE tickets ALTER COLUMN priority TYPE text; UPDATE tickets SET subject = 'changed' WHERE ticket_id = 1`, true, ""},
		{"update and retype in one transaction", `UPDATE tickets SET subject = 'changed' WHERE ticket_id = 1; ALTER TABLE tickets ALTER COLUMN tags TYPE text`, true, ""},
		{"drop then update", `ALTER TABLE tickets DROP COLUMN subject; UPDATE tickets SET owner = 'moved' WHERE ticket_id = 1`, false,
			// The follow's catalog check, while idle, may find the drop
			// before the update's window describes it.
			"the columns of public.tickets changed (dropped subject"},
		{"update and drop in one transaction", `UPDATE tickets SET owner = 'moved' WHERE ticket_id = 1; ALTER TABLE tickets DROP COLUMN subject`, false,
			"the columns of public.tickets changed (dropped subject, before the stream described it)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := loaded(t, filepath.Join("testdata", "tickets-tags.yaml"), ticketsSchema)
			p := startFollow(t, liveArgs(f)...)
			p.waitFor(t, following, "the follow to start")
			// One statement a transaction, or all in one (testenv.Exec
			// sends them as one simple query).
			if strings.HasPrefix(c.change, "ALTER") {
				first, second, _ := strings.Cut(c.change, "; ")
				testenv.Exec(t, f.url, first)
				testenv.Exec(t, f.url, second)
			} else {
				testenv.Exec(t, f.url, c.change)
			}
			if c.adapts {
				p.adapted(t, f, "Ticket")
				return
			}
			code := p.exit(t)
			out := p.out.String()
			if code != 1 || !strings.Contains(out, c.cause) || !strings.Contains(out, "tickets-tags.yaml:") || !strings.Contains(out, "--resume --prune") {
				t.Fatalf("exit %d, want 1 naming the cause (%s), the mapping's line and --resume --prune\n%s", code, c.cause, out)
			}
			testenv.Exec(t, f.url, `ALTER TABLE tickets ADD COLUMN subject text`)
			if code, out := f.resume("--prune"); code != 0 {
				t.Fatalf("--resume --prune: exit %d\n%s", code, out)
			}
			f.inStep(t)
		})
	}
}

// The DynamoDB table deleted under a running follow: it stops saying the
// table is gone and how to load it again, which works.
func TestLiveFollowLosesItsTable(t *testing.T) {
	t.Parallel()
	f := loaded(t, filepath.Join("testdata", "notes-whole.yaml"), notesSchema)
	p := startFollow(t, liveArgs(f)...)
	p.waitFor(t, following, "the follow to start")
	c, err := load.NewClient(context.Background(), load.ClientConfig{EndpointURL: f.endpoint})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(f.table)}); err != nil {
		t.Fatal(err)
	}
	testenv.Exec(t, f.url, `UPDATE notes SET body = 'changed' WHERE note_id = 1`)
	code := p.exit(t)
	out := p.out.String()
	if code != 1 || !strings.Contains(out, "is gone") || !strings.Contains(out, "--resume --prune") || !strings.Contains(out, "--create-table") {
		t.Fatalf("exit %d, want 1 saying the table is gone and to run --resume --prune --create-table\n%s", code, out)
	}
	if code, out := f.resume("--prune", "--create-table"); code != 0 {
		t.Fatalf("--resume --prune --create-table: exit %d\n%s", code, out)
	}
	f.inStep(t)
}

// SIGINT while a long window is written stops the writes at the next
// batch, without acknowledging the window (its items are written again
// by the next run, by key): the follow ends at once, not when the window
// is done, and a resume finishes it.
func TestLiveFollowStopsMidWindow(t *testing.T) {
	t.Parallel()
	f := loaded(t, filepath.Join("testdata", "orgs-members.yaml"), orgsSchema(500))
	testenv.Exec(t, f.url, `UPDATE orgs SET name = 'acme renamed' WHERE org_id = 1`)
	p := startFollow(t, append(f.args, "--resume", "--max-write-units", "10", "--progress-interval", "1ms")...)
	p.waitFor(t, regexp.MustCompile(`items written of the changes in flight`), "the window's progress")
	p.cmd.Process.Signal(syscall.SIGINT)
	code := p.exit(t)
	out := p.out.String()
	last := lastLine(out, "follow: applied ")
	if code != 0 || !strings.Contains(last, ": 0 transactions, 0 changes") || strings.Contains(out, "caught up") {
		t.Fatalf("exit %d, want 0, stopped mid-window with nothing acknowledged (last status %q)\n%s", code, last, firstLines(out, 40))
	}
	if code, out := f.resume(); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, out)
	}
	f.inStep(t)
}

// orgsSchema is the schema of orgs-members.yaml: org 1 (acme) and its
// members members, whose items duplicate its name.
func orgsSchema(members int) string {
	return fmt.Sprintf(`CREATE TABLE orgs (org_id int PRIMARY KEY, name text NOT NULL);
		CREATE TABLE members (member_id int PRIMARY KEY, org_id int NOT NULL REFERENCES orgs, name text);
		ALTER TABLE orgs REPLICA IDENTITY FULL; ALTER TABLE members REPLICA IDENTITY FULL;
		INSERT INTO orgs VALUES (1, 'acme');
		INSERT INTO members SELECT i, 1, 'm' || i FROM generate_series(1, %d) i`, members)
}

// terminateWalsender ends the walsender streaming slot (as a server
// restart or a network cut would end it, seen from the follow).
func terminateWalsender(t *testing.T, url, slot string) {
	t.Helper()
	var n int
	if err := testenv.Connect(t, url).QueryRow(context.Background(),
		`SELECT count(pg_terminate_backend(active_pid)) FROM pg_replication_slots WHERE slot_name = $1 AND active_pid IS NOT NULL`, slot).Scan(&n); err != nil || n != 1 {
		t.Fatalf("terminate the walsender of slot %s: %d ended, %v", slot, n, err)
	}
}

// inFlightWritten is the number of items of the windows in flight that
// the last status line of out says are written (0 when it says none).
func inFlightWritten(out string) int {
	m := regexp.MustCompile(`; (\d+) items written of the changes in flight`).FindStringSubmatch(lastLine(out, "follow: applied "))
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// The walsender of a running follow ended while a long window is written
// (pg_terminate_backend): the follow stops at once, not when the window
// is written (the window's writes end at the next batch, unacknowledged),
// saying the replication connection is lost and to resume; the resume
// ends in step.
func TestLiveFollowWalsenderEndsMidWindow(t *testing.T) {
	t.Parallel()
	f := loaded(t, filepath.Join("testdata", "orgs-members.yaml"), orgsSchema(500))
	testenv.Exec(t, f.url, `UPDATE orgs SET name = 'acme renamed' WHERE org_id = 1`)
	p := startFollow(t, append(f.args, "--resume", "--max-write-units", "10", "--progress-interval", "1ms")...)
	p.waitFor(t, regexp.MustCompile(`items written of the changes in flight`), "the window's progress")
	terminateWalsender(t, f.url, follow.DefaultName(f.table))
	code := p.exit(t)
	out := p.out.String()
	advice := "to go on: run pg2dynamo migrate --follow --resume"
	if code != 1 || !strings.Contains(out, "the replication connection is lost") || !strings.Contains(out, advice) {
		t.Fatalf("exit %d, want 1 saying the replication connection is lost and %q\n%s", code, advice, firstLines(out, 40))
	}
	if n := inFlightWritten(out); n >= 501 {
		t.Errorf("the follow stopped once the window's %d items were written, not at once (last status %q)", n, lastLine(out, "follow: applied "))
	}
	if code, out := f.resume(); code != 0 {
		t.Fatalf("--resume: exit %d\n%s", code, out)
	}
	f.inStep(t)
}

// A followed table dropped under a running follow: the window that reads
// it (its org renamed: the members' items duplicate the name), or, with
// no change after the drop, the follow's own check while idle, stops the
// follow naming the table; the advice (the table restored, the slot
// dropped, a new full load with --prune) ends in step.
func TestLiveFollowDropTable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, after string }{
		{"a window reads it", `UPDATE orgs SET name = 'acme renamed' WHERE org_id = 1`},
		{"no change after", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := loaded(t, filepath.Join("testdata", "orgs-members.yaml"), orgsSchema(20))
			p := startFollow(t, liveArgs(f)...)
			p.waitFor(t, following, "the follow to start")
			testenv.Exec(t, f.url, `DROP TABLE members`)
			if c.after != "" {
				testenv.Exec(t, f.url, c.after)
			}
			code := p.exit(t)
			out := p.out.String()
			advice := "restore the table, or take it out of the mapping, then run pg2dynamo drop-slot and pg2dynamo migrate --follow --prune"
			if code != 1 || !strings.Contains(out, "table public.members no longer exists") || !strings.Contains(out, advice) {
				t.Fatalf("exit %d, want 1 naming public.members and %q\n%s", code, advice, firstLines(out, 40))
			}
			// Restored with fewer rows than it had: their items go.
			testenv.Exec(t, f.url, `CREATE TABLE members (member_id int PRIMARY KEY, org_id int NOT NULL REFERENCES orgs, name text);
				ALTER TABLE members REPLICA IDENTITY FULL;
				INSERT INTO members SELECT i, 1, 'restored ' || i FROM generate_series(1, 10) i`)
			f.loadAgain(t)
			f.inStep(t)
		})
	}
}

// A column renamed, and a key column retyped, while the follow runs, then
// a row updated: a column the entity takes whole renamed adapts (every
// item derived again, the table in step); one the mapping names renamed,
// and a key column retyped (the keys could render differently), stop the
// follow naming the column (exit 1), and the advice, followed, ends in
// step.
func TestLiveFollowColumnRenamedOrRetyped(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, mapping, change string
		cause, fix            string // fix: what makes the mapping fit again, before --resume --prune
	}{
		{name: "rename a column taken whole", mapping: "notes-whole.yaml",
			change: `ALTER TABLE notes RENAME COLUMN body TO text_body`},
		{name: "rename a column the mapping names", mapping: "notes-select.yaml",
			change: `ALTER TABLE notes RENAME COLUMN body TO text_body`,
			cause:  "the columns of public.notes changed (added text_body; dropped body", fix: `ALTER TABLE notes RENAME COLUMN text_body TO body`},
		{name: "retype a key column", mapping: "notes-whole.yaml",
			change: `ALTER TABLE notes ALTER COLUMN owner TYPE varchar(40)`,
			cause:  "the table keys of Note could render differently"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := loaded(t, filepath.Join("testdata", c.mapping), notesSchema)
			p := startFollow(t, liveArgs(f)...)
			p.waitFor(t, following, "the follow to start")
			testenv.Exec(t, f.url, c.change)
			testenv.Exec(t, f.url, `UPDATE notes SET owner = 'moved' WHERE note_id = 1`)
			if c.cause == "" {
				p.adapted(t, f, "Note")
				return
			}
			code := p.exit(t)
			out := p.out.String()
			if code != 1 || !strings.Contains(out, c.cause) || !strings.Contains(out, "--resume --prune") {
				t.Fatalf("exit %d, want 1 naming the cause (%s) and --resume --prune\n%s", code, c.cause, out)
			}
			if c.fix != "" {
				if !strings.Contains(out, c.mapping+":") {
					t.Errorf("the stop does not name the mapping's line (%s:…)\n%s", c.mapping, out)
				}
				testenv.Exec(t, f.url, c.fix)
			}
			if code, out := f.resume("--prune"); code != 0 {
				t.Fatalf("--resume --prune: exit %d\n%s", code, out)
			}
			f.inStep(t)
		})
	}
}

// A followed table renamed while the follow runs, a row updated and
// another deleted: renamed back in the same transaction, the changes are
// applied (they are matched by the table's OID, and the window reads the
// table by its name again); left renamed, the window that reads it stops
// the follow naming the new name, and either way out it advises (rename
// it back, then --resume; a new version of the mapping, then --resume
// --previous-mapping) ends in step.
func TestLiveFollowTableRenamed(t *testing.T) {
	t.Parallel()
	rename := []string{`ALTER TABLE notes RENAME TO notes_renamed`,
		`UPDATE notes_renamed SET owner = 'moved', body = 'moved' WHERE note_id = 1`, `DELETE FROM notes_renamed WHERE note_id = 2`}
	back := `ALTER TABLE notes_renamed RENAME TO notes`
	t.Run("and back in one transaction", func(t *testing.T) {
		t.Parallel()
		f := loaded(t, filepath.Join("testdata", "notes-whole.yaml"), notesSchema)
		p := startFollow(t, liveArgs(f)...)
		p.waitFor(t, following, "the follow to start")
		testenv.Exec(t, f.url, strings.Join(append(rename, back), "; "))
		p.waitFor(t, appliedChanges(2), "the update and the delete applied")
		p.cmd.Process.Signal(syscall.SIGINT)
		if code := p.exit(t); code != 0 {
			t.Fatalf("exit %d after SIGINT\n%s", code, p.out.String())
		}
		f.inStep(t)
	})
	// Left so, the follow stops with both ways out, each of which goes on.
	for _, renameBack := range []bool{true, false} {
		t.Run(map[bool]string{true: "and left so", false: "and the mapping given the new name"}[renameBack], func(t *testing.T) {
			t.Parallel()
			f := loaded(t, filepath.Join("testdata", "notes-whole.yaml"), notesSchema)
			p := startFollow(t, liveArgs(f)...)
			p.waitFor(t, following, "the follow to start")
			for _, sql := range rename {
				testenv.Exec(t, f.url, sql)
			}
			code := p.exit(t)
			out := p.out.String()
			advice := "rename it back (ALTER TABLE public.notes_renamed RENAME TO …), then run pg2dynamo migrate --follow --resume; or give the mapping's source its new name in a new version of the mapping, then run pg2dynamo migrate --follow --resume --mapping NEW.yaml --previous-mapping " + f.mapping
			if code != 1 || !strings.Contains(out, "table public.notes is named public.notes_renamed now") || !strings.Contains(out, advice) {
				t.Fatalf("exit %d, want 1 naming the new name and %q\n%s", code, advice, firstLines(out, 40))
			}
			var more []string
			if renameBack {
				testenv.Exec(t, f.url, back)
			} else {
				more = []string{"--previous-mapping", f.newVersion(t, "{table: notes}", "{table: notes_renamed}")}
			}
			if code, out := f.resume(more...); code != 0 {
				t.Fatalf("--resume %s: exit %d\n%s", strings.Join(more, " "), code, out)
			}
			f.inStep(t)
		})
	}
}

// newVersion writes a new version of f's mapping, old replaced by new, and
// makes it f's: it returns the previous one's path.
func (f *followedChange) newVersion(t *testing.T, old, new string) (previous string) {
	t.Helper()
	b, err := os.ReadFile(f.mapping)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s holds no %q", f.mapping, old)
	}
	v2 := filepath.Join(t.TempDir(), "v2-"+filepath.Base(f.mapping))
	if err := os.WriteFile(v2, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	previous, f.mapping = f.mapping, v2
	f.args[slices.Index(f.args, previous)] = v2
	return previous
}
