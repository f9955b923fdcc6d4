package app

import (
	"os"
	"strings"
	"testing"

	"github.com/gofrs/flock"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// Two runs, one checkpoint: while one run holds the checkpoint's lock, a
// second is refused (exit 2, nothing created), naming the first's pid; a
// --resume without a checkpoint is refused before the table is created.
func TestCheckpointOneRunAtATime(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1);`)
	mappingFile := writeMapping(t, "name: locked\ntable: {name: locked}\nentities:\n  T: {source: {table: t}, pk: \"T#${id}\", sk: T}\n")

	t.Run("a second run", func(t *testing.T) {
		table := testenv.TableName("locked")
		args := migrateArgs(t, mappingFile, url, table, "--create-table")
		// The first run, as another process would hold it: the lock
		// taken and its pid written.
		lockPath := checkpointPath(args) + ".lock"
		first := flock.New(lockPath)
		if ok, err := first.TryLock(); !ok || err != nil {
			t.Fatalf("lock: %v %v", ok, err)
		}
		defer first.Unlock()
		if err := os.WriteFile(lockPath, []byte("424242\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runCLI(t, args...)
		want := "checkpoint " + checkpointPath(args) + " is in use by another pg2dynamo run (pid 424242)"
		if r.code != ExitUsage || !strings.Contains(r.stderr, want) {
			t.Fatalf("exit %d, want %d with %q\n%s%s", r.code, ExitUsage, want, r.stdout, r.stderr)
		}
		if tableExists(t, table) {
			t.Errorf("table %s was created", table)
		}
		first.Unlock()
		if r := runCLI(t, args...); r.code != ExitOK {
			t.Fatalf("after the first run ended: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("resume without a checkpoint", func(t *testing.T) {
		table := testenv.TableName("locked")
		r := runCLI(t, migrateArgs(t, mappingFile, url, table, "--create-table", "--resume")...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, "--resume: no checkpoint at") || strings.Contains(r.stderr, "created table") {
			t.Fatalf("exit %d, want %d, no checkpoint and no table created\n%s%s", r.code, ExitUsage, r.stdout, r.stderr)
		}
		if tableExists(t, table) {
			t.Errorf("table %s was created", table)
		}
	})
}
