package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/fixtures"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// A real pg2dynamo process migrating the tickets fixture (about 5,500
// rows, its tickets split into primary-key ranges for parallel readers by
// --min-range-rows, its writes paced by --max-write-units to last a few
// seconds) is killed with SIGKILL once its checkpoint records about half
// the rows as written; a second process with --resume reads only the rows
// the checkpoint does not record (between 30% and 70% of the whole), says
// what it skips, and its verify passes: every row is in the table once,
// none missing, none extra, none different.
func TestResumeAfterSIGKILL(t *testing.T) {
	parallel(t)
	const rangeRows = 1000
	bin := buildBinary(t)
	url := testenv.NewDatabase(t)
	counts, err := fixtures.Load(context.Background(), testenv.Connect(t, url), "tickets", 0.25, 1)
	if err != nil {
		t.Fatal(err)
	}
	rows := counts["orgs"] + counts["users"] + counts["tickets"]
	if counts["tickets"] < 2*rangeRows {
		t.Fatalf("fixture has %d tickets, want at least %d (two ranges)", counts["tickets"], 2*rangeRows)
	}
	entityRows := map[string]int64{"Org": counts["orgs"], "User": counts["users"], "Ticket": counts["tickets"]}
	table := testenv.TableName("tickets")
	mappingFile := testenv.RepoFile(t, "fixtures", "mappings", "tickets.yaml")
	args := migrateArgs(t, mappingFile, url, table, "--create-table", "--checkpoint-interval", "50ms",
		"--readers", "2", "--min-range-rows", strconv.Itoa(rangeRows), "--max-write-units", "1000")
	cpPath := checkpointPath(args)

	var out, errOut bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	startProcess(t, cmd)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var atKill int64
	err = testenv.Poll("the checkpoint to record half the rows", eventWait, exited, func() bool {
		if n, ok := checkpointedRows(t, cpPath, entityRows); ok {
			atKill = n
		}
		return 2*atKill >= rows
	})
	if err != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("%v: %d of %d rows\n%s%s", err, atKill, rows, out.String(), errOut.String())
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	recorded, ok := checkpointedRows(t, cpPath, entityRows)
	if !ok {
		t.Fatal("no checkpoint after the kill")
	}
	before := int64(len(scanAll(t, dynamoClient(t), table)))
	t.Logf("killed with %d of %d rows recorded in the checkpoint (%d at the last poll), %d items in the table", recorded, rows, atKill, before)
	if before < recorded || before >= rows {
		t.Fatalf("%d items after the kill; want at least the %d the checkpoint records, fewer than %d", before, recorded, rows)
	}

	out.Reset()
	errOut.Reset()
	resume := exec.Command(bin, append(args, "--resume")...)
	resume.Stdout, resume.Stderr = &out, &errOut
	startProcess(t, resume)
	r := waitProcess(t, resume, eventWait, &out, &errOut)
	if r.code != ExitOK || !strings.Contains(r.stdout, "verify PASSED") {
		t.Fatalf("resume exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "resuming from") || !strings.Contains(r.stderr, "Org (done)") {
		t.Errorf("the resumed run does not say what it skips:\n%s", r.stderr)
	}
	// The resumed run read the rows the checkpoint does not record, and
	// no other: about the half the killed run did not get to.
	read, err := strconv.ParseInt(summaryTotal(t, r.stdout)[0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if read != rows-recorded || 10*read < 3*rows || 10*read > 7*rows {
		t.Errorf("the resumed run read %d rows; want the %d the checkpoint did not record, 30%% to 70%% of %d", read, rows-recorded, rows)
	}
	if n := int64(len(scanAll(t, dynamoClient(t), table))); n != rows {
		t.Errorf("%d items in the table, want %d", n, rows)
	}
}

// checkpointedRows counts the rows of the tickets fixture that the
// checkpoint at path records as written: every row of an entity done,
// and in each range of the others the keys after the range's start (the
// previous range's Until) up to its After, the fixture's keys being
// dense from 1 (fixtures/README.md). total gives each entity's rows.
// false when there is no checkpoint yet.
func checkpointedRows(t *testing.T, path string, total map[string]int64) (int64, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false
	}
	if err != nil {
		t.Fatal(err)
	}
	cp, err := pipeline.DecodeCheckpoint(b)
	if err != nil {
		t.Fatalf("checkpoint %s: %v\n%s", path, err, b)
	}
	key := func(pos []string) int64 {
		if len(pos) != 1 {
			t.Fatalf("position %q: want one key column", pos)
		}
		n, err := strconv.ParseInt(pos[0], 10, 64)
		if err != nil {
			t.Fatalf("position %q: %v", pos, err)
		}
		return n
	}
	var n int64
	for entity, ep := range cp.Entities {
		if ep.Done {
			n += total[entity]
			continue
		}
		var start int64
		for _, r := range ep.Ranges {
			end := total[entity]
			if r.Until != nil {
				end = key(r.Until)
			}
			switch {
			case r.Done:
				n += end - start
			case r.After != nil:
				n += key(r.After) - start
			}
			start = end
		}
	}
	return n, true
}

// A PostgreSQL connection dropped mid-read (pg_terminate_backend) stops the
// run with an error naming the entity and how far it read; what was read is
// written, and --resume finishes the job.
func TestSourceConnectionDroppedMidRead(t *testing.T) {
	parallel(t)
	url := testenv.NewDatabase(t)
	admin := testenv.Connect(t, url)
	// 4,000 rows of 3 KB: a 12 MB result, more than the loopback socket
	// buffers hold. With less, PostgreSQL could have sent the whole read
	// before the terminate, which then hit the next statement (verify's
	// counts) instead of the read.
	const rows = 4000
	testenv.Exec(t, url, fmt.Sprintf(`CREATE TABLE docs (id int PRIMARY KEY, body text NOT NULL);
		INSERT INTO docs SELECT i, repeat(md5(i::text), 94) FROM generate_series(1, %d) i`, rows))
	table := testenv.TableName("docs")
	args := migrateArgs(t, writeMapping(t, "name: docs\ntable: {name: docs}\nentities:\n  Doc: {source: {table: docs}, pk: \"DOC#${id}\", sk: DOC}\n"), url, table,
		"--create-table", "--progress", "lines", "--progress-interval", "20ms",
		// One reader: the backend terminated is the one reading Doc.
		"--readers", "1")
	var out bytes.Buffer
	errOut := &syncBuffer{}
	var once bool
	var terminated sync.WaitGroup
	errOut.onLine = func(s string) {
		if !once && strings.HasPrefix(s, "Doc: ") && strings.Contains(s, "rows done") {
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
	if code != ExitFailed || !regexp.MustCompile(`read Doc after \d+ rows: lost the connection to PostgreSQL`).MatchString(errOut.String()) {
		t.Fatalf("exit %d, want %d with an error naming Doc and its row count\n%s", code, ExitFailed, errOut.String())
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
