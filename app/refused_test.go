package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// A run refused before it reads (exit 2) leaves every output file as it
// was: the rejects file still lists the last run's rejects. No run leaves
// its checkpoint's lock file behind, however it ends. verify's headline
// names the rows rejected, which a PASSED table does not hold, and plan
// --with-source gives each one's reason. A run into a table that holds
// items says --changes-only would write only the differences.
func TestRejectedRowsAndRefusedRuns(t *testing.T) {
	parallel(t)
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t VALUES (1, 'a'), (2, NULL), (3, 'c')`)
	mappingFile := writeMapping(t, "name: refused\ntable: {name: refused}\nentities:\n  T: {source: {table: t}, pk: \"T#${v}\", sk: T}\n")
	table := testenv.TableName("refused")
	args := migrateArgs(t, mappingFile, url, table, "--create-table")
	rejects, lock := rejectsPath(args), checkpointPath(args)+".lock"

	if r := runCLI(t, args...); r.code != ExitRejected {
		t.Fatalf("first run: exit %d, want %d (row 2 rejected)\n%s%s", r.code, ExitRejected, r.stdout, r.stderr)
	}
	listed, err := os.ReadFile(rejects)
	if err != nil || !strings.Contains(string(listed), `"id":"2"`) {
		t.Fatalf("rejects file after the first run: %q, %v", listed, err)
	}
	noLock := func(when string) {
		if _, err := os.Lstat(lock); !os.IsNotExist(err) {
			t.Errorf("%s: the lock file %s is left behind (%v)", when, lock, err)
		}
	}
	noLock("after a run with rejects")
	// verify passes (the table holds what the rows that can be items
	// make), and its headline says a row was rejected.
	v := runCLI(t, "verify", "--mapping", mappingFile, "--source", url, "--endpoint-url", args[slices.Index(args, "--endpoint-url")+1], "--table", table)
	if v.code != ExitOK || !strings.Contains(v.stdout, "verify PASSED") || !strings.Contains(v.stdout, "(1 source row rejected: not in the table, not expected)") {
		t.Errorf("verify: exit %d, want %d and a headline naming the rejected row\n%s%s", v.code, ExitOK, v.stdout, v.stderr)
	}

	// plan --with-source gives the reason of the row it would reject.
	p := runCLI(t, "plan", "--mapping", mappingFile, "--source", url, "--with-source")
	if p.code != ExitOK || !strings.Contains(strings.ToLower(p.stdout), "rows a full load would reject") || !strings.Contains(p.stdout, `NULL in key attribute PK (template "T#${v}")`) ||
		!strings.Contains(p.stdout, `{"id":"2","v":null}`) {
		t.Errorf("plan --with-source: exit %d, want the rejected row's reason and key\n%s%s", p.code, p.stdout, p.stderr)
	}

	// Refused: --resume into another table than the checkpoint's, and a
	// table that does not exist without --create-table.
	for _, refused := range [][]string{
		append(slices.Clone(args), "--resume", "--table", table+"-other"),
		append(slices.Clone(args[:len(args)-1]), "--table", table+"-missing"),
	} {
		r := runCLI(t, refused...)
		if r.code != ExitUsage {
			t.Fatalf("%q: exit %d, want %d\n%s%s", refused, r.code, ExitUsage, r.stdout, r.stderr)
		}
		if now, err := os.ReadFile(rejects); err != nil || string(now) != string(listed) {
			t.Errorf("%q: the refused run changed the rejects file: %q, want %q (%v)", refused, now, listed, err)
		}
		noLock("after a refused run")
	}
	// Run again: the run says it puts every item again, and what would
	// write only the differences.
	again := runCLI(t, args[:len(args)-1]...)
	if again.code != ExitRejected || !strings.Contains(again.stderr, "already holds 2 items of the mapping's types: this run puts every item again") ||
		!strings.Contains(again.stderr, "migrate --changes-only writes only the new and changed items") {
		t.Errorf("a second run: exit %d, want %d and the note that --changes-only writes only the differences\n%s", again.code, ExitRejected, again.stderr)
	}
	entries, err := os.ReadDir(filepath.Dir(rejects))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("a temporary file is left in the rejects file's directory: %s", e.Name())
		}
	}
}
