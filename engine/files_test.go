package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

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
				testenv.WriteFile(t, path, "old", 0o644)
				if err := os.Link(path, filepath.Join(dir, "other-name")); err != nil {
					t.Fatal(err)
				}
				return path
			},
			check: func(t *testing.T, dir, _ string) {
				if got := testenv.ReadFile(t, filepath.Join(dir, "other-name")); got != "old" {
					t.Errorf("the other name of the old file holds %q, want it untouched", got)
				}
			},
		},
		{
			name: "keep",
			setup: func(t *testing.T, dir string) string {
				path := filepath.Join(dir, "out")
				testenv.WriteFile(t, path, "old\n", 0o644)
				return path
			},
			keep: true,
			check: func(t *testing.T, _, path string) {
				if got := testenv.ReadFile(t, path); got != "old\nnew" {
					t.Errorf("file holds %q, want the old content then the new", got)
				}
			},
		},
		{
			name: "symbolic link to a victim",
			setup: func(t *testing.T, dir string) string {
				testenv.WriteFile(t, filepath.Join(dir, "victim"), "precious", 0o644)
				return testenv.Symlink(t, "victim", filepath.Join(dir, "out"))
			},
			wantErr: "is a symbolic link (to victim)",
			check: func(t *testing.T, dir, path string) {
				if got := testenv.ReadFile(t, filepath.Join(dir, "victim")); got != "precious" {
					t.Errorf("victim holds %q, want it untouched", got)
				}
			},
		},
		{
			name: "dangling symbolic link",
			setup: func(t *testing.T, dir string) string {
				return testenv.Symlink(t, filepath.Join(dir, "target"), filepath.Join(dir, "out"))
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
						if got := testenv.ReadFile(t, path); got != "new" {
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
	testenv.WriteFile(t, path, "old", 0o644)
	o, err := createOutput(path, false)
	if err != nil {
		t.Fatal(err)
	}
	o.Write([]byte("half"))
	if got := testenv.ReadFile(t, path); got != "old" {
		t.Errorf("before Publish the path holds %q, want the old file", got)
	}
	o.Discard()
	if got := testenv.ReadFile(t, path); got != "old" {
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
	if got := testenv.ReadFile(t, path); got != "line 1\n" {
		t.Errorf("after Publish the path holds %q, want what was written", got)
	}
	o.Write([]byte("line 2\n"))
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if got := testenv.ReadFile(t, path); got != "line 1\nline 2\n" {
		t.Errorf("after Close the path holds %q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want the file alone", len(entries))
	}
}
