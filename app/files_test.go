package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

const friendsSQL = `
CREATE TABLE friends (a integer, b integer, PRIMARY KEY (a, b));
INSERT INTO friends VALUES (1, 1), (1, 2), (2, 1), (3, 4);`

const friendsMapping = `name: friends
table: {name: friends}
entities:
  Friend:
    source: {query: "SELECT * FROM friends ORDER BY a, b"}
    pk: U#${a}
    sk: F#${b}
    mirror: {pk: "U#${b}", sk: "F#${a}"}
`

// The files pg2dynamo writes for the user (--rejects, --checkpoint,
// --report-json, --html) are never written through a symbolic link: the
// file it points to keeps its content, and a dangling link's target is
// never created. A run writes them as new files of mode 0600 (they hold
// source values), without touching the file that was at the path (its
// other hard link keeps the old content). A resumed run's rejects file
// starts with the last run's rejects.
func TestOutputFilesCLI(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, friendsSQL)
	mappingFile := writeMapping(t, friendsMapping)
	endpoint := dynalite(t).Endpoint

	// args returns the command line writing flag's file to path, with the
	// other files in a directory of their own.
	args := func(t *testing.T, table, flag, path string) []string {
		a := migrateArgs(t, mappingFile, url, table, "--create-table")
		if flag == "report-json" || flag == "html" {
			a = []string{"verify", "--mapping", mappingFile, "--source", url, "--endpoint-url", endpoint, "--table", table}
		}
		for i := range a {
			if a[i] == "--"+flag {
				a = append(a[:i], a[i+2:]...)
				break
			}
		}
		return append(a, "--"+flag, path)
	}
	for _, flag := range []string{"rejects", "checkpoint", "report-json", "html"} {
		t.Run(flag, func(t *testing.T) {
			dir := t.TempDir()
			testenv.WriteFile(t, filepath.Join(dir, "victim"), "precious", 0o644)
			link := testenv.Symlink(t, filepath.Join(dir, "victim"), filepath.Join(dir, "to-victim"))
			dangling := testenv.Symlink(t, filepath.Join(dir, "created"), filepath.Join(dir, "dangling"))
			for _, path := range []string{link, dangling} {
				r := runCLI(t, args(t, testenv.TableName("links"), flag, path)...)
				if r.code == ExitOK || r.code == ExitRejected || !strings.Contains(r.stderr, path+" is a symbolic link") {
					t.Errorf("--%s %s: exit %d, want a refusal naming the link\n%s", flag, filepath.Base(path), r.code, r.stderr)
				}
			}
			if got := testenv.ReadFile(t, filepath.Join(dir, "victim")); got != "precious" {
				t.Errorf("victim holds %q, want it untouched", got)
			}
			if got := testenv.ReadFile(t, filepath.Join(dir, "created")); got != "<absent>" {
				t.Errorf("the dangling link's target holds %q, want it never created", got)
			}
		})
	}

	// migrate opens its report files before the load: a report path it
	// cannot write is a usage error (exit 2) with nothing written, not a
	// failure after the whole load.
	t.Run("reports before the load", func(t *testing.T) {
		for _, flag := range []string{"report-json", "html"} {
			table := testenv.TableName("reports-first")
			missing := filepath.Join(t.TempDir(), "no-such-dir", "report")
			r := runCLI(t, append(migrateArgs(t, mappingFile, url, table, "--create-table"), "--"+flag, missing)...)
			if r.code != ExitUsage || !strings.Contains(r.stderr, "--"+flag) || tableExists(t, table) {
				t.Errorf("migrate --%s %s: exit %d, table created %v; want exit %d and no table\n%s", flag, missing, r.code, tableExists(t, table), ExitUsage, r.stderr)
			}
		}
	})

	t.Run("mode", func(t *testing.T) {
		dir := t.TempDir()
		files := map[string]string{}
		a := migrateArgs(t, mappingFile, url, testenv.TableName("modes"), "--create-table")
		for _, flag := range []string{"rejects", "checkpoint", "report-json", "html"} {
			files[flag] = filepath.Join(dir, flag)
			// An older file with a second name: the run must not write it.
			testenv.WriteFile(t, files[flag], "old", 0o644)
			if err := os.Link(files[flag], files[flag]+".old"); err != nil {
				t.Fatal(err)
			}
			for i := range a {
				if a[i] == "--"+flag {
					a = append(a[:i], a[i+2:]...)
					break
				}
			}
			a = append(a, "--"+flag, files[flag])
		}
		r := runCLI(t, a...)
		if r.code != ExitRejected {
			t.Fatalf("exit %d, want %d\n%s%s", r.code, ExitRejected, r.stdout, r.stderr)
		}
		for flag, path := range files {
			st, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode() != 0o600 || st.Size() == 0 {
				t.Errorf("--%s: mode %v, %d bytes; want -rw------- (0600) and content", flag, st.Mode(), st.Size())
			}
			if got := testenv.ReadFile(t, path+".old"); got != "old" {
				t.Errorf("--%s: the old file's other name holds %q, want it untouched", flag, got)
			}
		}
		if n := len(readRejects(t, files["rejects"])); n != 2 {
			t.Fatalf("%d rejects, want 2", n)
		}

		// Resumed (every entity is done): the rejects file keeps the last
		// run's lines, and stays 0600.
		r = runCLI(t, append(a, "--resume")...)
		if r.code != ExitRejected && r.code != ExitOK {
			t.Fatalf("resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if n := len(readRejects(t, files["rejects"])); n != 2 {
			t.Errorf("after --resume: %d rejects, want the 2 of the first run", n)
		}
		if st, err := os.Lstat(files["rejects"]); err != nil || st.Mode() != 0o600 {
			t.Errorf("after --resume: %v %v, want mode 0600", st.Mode(), err)
		}
	})
}
