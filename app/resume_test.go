package app

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pg2dynamo/pg2dynamo/fixtures"
	"github.com/pg2dynamo/pg2dynamo/internal/testenv"
)

// A real pg2dynamo process migrating a ~200k-row fixture is killed with
// SIGKILL part-way; migrate --resume finishes the job, and verify then
// passes: no item missing, none extra, none different.
func TestResumeAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("a 200k-row migration")
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := buildBinary(t)
	url := testenv.NewDatabase(t)
	counts, err := fixtures.Load(context.Background(), testenv.Connect(t, url), "tickets", 9, 1)
	if err != nil {
		t.Fatal(err)
	}
	rows := counts["orgs"] + counts["users"] + counts["tickets"]
	if rows < 190_000 {
		t.Fatalf("fixture has %d rows, want about 200k", rows)
	}
	table := testenv.TableName("tickets")
	mappingFile := filepath.Join(root, "fixtures", "mappings", "tickets.yaml")
	args := migrateArgs(t, mappingFile, url, table, "--create-table", "--progress", "lines", "--progress-interval", "100ms")

	cmd := exec.Command(bin, args...)
	errOut := &syncBuffer{}
	killed := make(chan struct{})
	var once bool
	errOut.onWrite = func(s string) {
		// Kill once tickets are well under way.
		if !once && strings.HasPrefix(s, "Ticket: ") && strings.Contains(s, "rows done") {
			once = true
			close(killed)
		}
	}
	cmd.Stderr = errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-killed:
	case <-time.After(120 * time.Second):
		t.Fatalf("no Ticket progress within 120s:\n%s", errOut.String())
	}
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Kill()
	cmd.Wait()
	before := len(scanAll(t, dynamoClient(t), table))
	if before == 0 || int64(before) >= rows {
		t.Fatalf("%d items after the kill; want a part of %d", before, rows)
	}

	r := runCLI(t, append(args, "--resume")...)
	if r.code != ExitOK || !strings.Contains(r.stdout, "verify PASSED") {
		t.Fatalf("resume exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "resuming from") || !strings.Contains(r.stderr, "Org (done)") {
		t.Errorf("the resumed run does not say what it skips:\n%s", r.stderr)
	}
	// The resumed run read fewer rows than the whole: it really resumed.
	if got := summaryTotal(t, r.stdout); got[0] == itoa(rows) {
		t.Errorf("the resumed run read all %d rows again", rows)
	}
	if n := int64(len(scanAll(t, dynamoClient(t), table))); n != rows {
		t.Errorf("%d items in the table, want %d", n, rows)
	}
}

// A PostgreSQL connection dropped mid-read (pg_terminate_backend) stops the
// run with an error naming the entity and how far it read; what was read is
// written, and --resume finishes the job.
func TestSourceConnectionDroppedMidRead(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	url := testenv.NewDatabase(t)
	admin := testenv.Connect(t, url)
	counts, err := fixtures.Load(context.Background(), admin, "tickets", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	rows := counts["orgs"] + counts["users"] + counts["tickets"]
	table := testenv.TableName("tickets")
	args := migrateArgs(t, filepath.Join(root, "fixtures", "mappings", "tickets.yaml"), url, table,
		"--create-table", "--progress", "lines", "--progress-interval", "20ms",
		// One reader: the backend terminated is the one reading Ticket.
		"--readers", "1")
	var out bytes.Buffer
	errOut := &syncBuffer{}
	var once bool
	var terminated sync.WaitGroup
	errOut.onWrite = func(s string) {
		if !once && strings.HasPrefix(s, "Ticket: ") && strings.Contains(s, "rows done") {
			once = true
			terminated.Go(func() {
				if _, err := admin.Exec(context.Background(),
					"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'pg2dynamo' AND datname = current_database()"); err != nil {
					t.Error(err)
				}
			})
		}
	}
	code := RunContext(context.Background(), args, &out, errOut)
	terminated.Wait()
	if code != ExitFailed || !regexp.MustCompile(`read Ticket after \d+ rows: lost the connection to PostgreSQL`).MatchString(errOut.String()) {
		t.Fatalf("exit %d, want %d with an error naming Ticket and its row count\n%s", code, ExitFailed, errOut.String())
	}
	if got := summaryTotal(t, out.String()); got[3] != "0" {
		t.Errorf("rows read but not written after the drop: %v (what was read is written)", got)
	}
	r := runCLI(t, append(args, "--resume")...)
	if r.code != ExitOK || !strings.Contains(r.stdout, "verify PASSED") {
		t.Fatalf("resume exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := int64(len(scanAll(t, dynamoClient(t), table))); n != rows {
		t.Errorf("%d items, want %d", n, rows)
	}
}
