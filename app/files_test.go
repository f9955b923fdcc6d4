package app

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/internal/testenv"
)

// readFile returns the content of path, or "<absent>".
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// An output file is a new file, mode 0600, renamed over its path; a link
// at the path is refused and neither its target nor anything else is
// written; a device is written in place; with keep, the new file starts
// with the old one's content.
func TestCreateOutput(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup prepares dir and returns the path to write.
		setup func(t *testing.T, dir string) string
		keep  bool
		// wantErr is a part of the error; "" for none.
		wantErr string
		// check looks at dir after "new" was written and the file closed.
		check func(t *testing.T, dir, path string)
	}{
		{
			name:  "new file",
			setup: func(t *testing.T, dir string) string { return filepath.Join(dir, "out") },
		},
		{
			name: "existing file with a hard link",
			setup: func(t *testing.T, dir string) string {
				path := filepath.Join(dir, "out")
				mustWrite(t, path, "old", 0o644)
				if err := os.Link(path, filepath.Join(dir, "other-name")); err != nil {
					t.Fatal(err)
				}
				return path
			},
			check: func(t *testing.T, dir, _ string) {
				if got := readFile(t, filepath.Join(dir, "other-name")); got != "old" {
					t.Errorf("the other name of the old file holds %q, want it untouched", got)
				}
			},
		},
		{
			name: "keep",
			setup: func(t *testing.T, dir string) string {
				path := filepath.Join(dir, "out")
				mustWrite(t, path, "old\n", 0o644)
				return path
			},
			keep: true,
			check: func(t *testing.T, _, path string) {
				if got := readFile(t, path); got != "old\nnew" {
					t.Errorf("file holds %q, want the old content then the new", got)
				}
			},
		},
		{
			name: "symbolic link to a victim",
			setup: func(t *testing.T, dir string) string {
				mustWrite(t, filepath.Join(dir, "victim"), "precious", 0o644)
				return mustSymlink(t, "victim", filepath.Join(dir, "out"))
			},
			wantErr: "is a symbolic link (to victim)",
			check: func(t *testing.T, dir, path string) {
				if got := readFile(t, filepath.Join(dir, "victim")); got != "precious" {
					t.Errorf("victim holds %q, want it untouched", got)
				}
			},
		},
		{
			name: "dangling symbolic link",
			setup: func(t *testing.T, dir string) string {
				return mustSymlink(t, filepath.Join(dir, "target"), filepath.Join(dir, "out"))
			},
			wantErr: "is a symbolic link",
			check: func(t *testing.T, dir, _ string) {
				if _, err := os.Lstat(filepath.Join(dir, "target")); !os.IsNotExist(err) {
					t.Errorf("the link's target exists (%v), want it never created", err)
				}
			},
		},
		{
			name:    "directory",
			setup:   func(t *testing.T, dir string) string { return dir },
			wantErr: "is a directory: expected a path for a file",
		},
		{
			name:  "device",
			setup: func(t *testing.T, dir string) string { return os.DevNull },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.setup(t, dir)
			o, err := createOutput(path, tc.keep)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := o.Write([]byte("new")); err != nil {
					t.Fatal(err)
				}
				if err := o.Close(); err != nil {
					t.Fatal(err)
				}
				if path != os.DevNull {
					st, err := os.Lstat(path)
					if err != nil {
						t.Fatal(err)
					}
					if st.Mode() != 0o600 {
						t.Errorf("mode %v, want -rw------- (0600)", st.Mode())
					}
					if !tc.keep {
						if got := readFile(t, path); got != "new" {
							t.Errorf("file holds %q, want %q", got, "new")
						}
					}
				}
			}
			if tc.check != nil {
				tc.check(t, dir, path)
			}
			// Nothing is left behind: no temporary file.
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.HasSuffix(e.Name(), ".tmp") {
					t.Errorf("temporary file %s left in the directory", e.Name())
				}
			}
		})
	}
}

// Until it is published, the path keeps its old file; Discard leaves it
// so; Publish puts the new file there while it is still being written.
func TestOutputPublish(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	mustWrite(t, path, "old", 0o644)
	o, err := createOutput(path, false)
	if err != nil {
		t.Fatal(err)
	}
	o.Write([]byte("half"))
	if got := readFile(t, path); got != "old" {
		t.Errorf("before Publish the path holds %q, want the old file", got)
	}
	o.Discard()
	if got := readFile(t, path); got != "old" {
		t.Errorf("after Discard the path holds %q, want the old file", got)
	}

	o, err = createOutput(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Publish(); err != nil {
		t.Fatal(err)
	}
	o.Write([]byte("line 1\n"))
	if got := readFile(t, path); got != "line 1\n" {
		t.Errorf("after Publish the path holds %q, want what was written", got)
	}
	o.Write([]byte("line 2\n"))
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != "line 1\nline 2\n" {
		t.Errorf("after Close the path holds %q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want the file alone", len(entries))
	}
}

func mustWrite(t *testing.T, path, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) string {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return link
}

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
			mustWrite(t, filepath.Join(dir, "victim"), "precious", 0o644)
			link := mustSymlink(t, filepath.Join(dir, "victim"), filepath.Join(dir, "to-victim"))
			dangling := mustSymlink(t, filepath.Join(dir, "created"), filepath.Join(dir, "dangling"))
			for _, path := range []string{link, dangling} {
				r := runCLI(t, args(t, testenv.TableName("links"), flag, path)...)
				if r.code == ExitOK || r.code == ExitRejected || !strings.Contains(r.stderr, path+" is a symbolic link") {
					t.Errorf("--%s %s: exit %d, want a refusal naming the link\n%s", flag, filepath.Base(path), r.code, r.stderr)
				}
			}
			if got := readFile(t, filepath.Join(dir, "victim")); got != "precious" {
				t.Errorf("victim holds %q, want it untouched", got)
			}
			if got := readFile(t, filepath.Join(dir, "created")); got != "<absent>" {
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
			mustWrite(t, files[flag], "old", 0o644)
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
			if got := readFile(t, path+".old"); got != "old" {
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
