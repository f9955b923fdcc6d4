package mapping

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the expected errors at the top of testdata/bad/*.yaml")

// minBadCases is how many files testdata/bad held when the test was
// written, so that a bad glob cannot pass with none.
const minBadCases = 113

// badCase is one file of testdata/bad: a mapping Load refuses. The file
// starts with the errors Load reports, one a comment line, the file named
// by its base name; the YAML follows. Line numbers count the comments.
type badCase struct {
	name string // the file's base name, e.g. "missing-pk.yaml"
	path string
	want []string
	// body is the file after its comment lines.
	body []byte
}

// badCases reads testdata/bad/*.yaml.
func badCases(t *testing.T) []badCase {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "bad", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < minBadCases {
		t.Fatalf("testdata/bad holds %d mappings, want at least %d", len(paths), minBadCases)
	}
	var out []badCase
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		c := badCase{name: filepath.Base(path), path: path, body: data}
		for bytes.HasPrefix(c.body, []byte("# ")) {
			line, rest, _ := bytes.Cut(c.body, []byte("\n"))
			c.want = append(c.want, string(line[2:]))
			c.body = rest
		}
		if len(c.want) == 0 {
			t.Errorf("%s: no expected error: the file must start with %q", path, "# "+c.name+":")
		}
		out = append(out, c)
	}
	return out
}

// loadErrors returns the lines of the errors Load reports for path, each
// naming the file by its base name, or nil if Load accepts it.
func loadErrors(t *testing.T, path string) []string {
	t.Helper()
	m, err := Load(path)
	if err == nil {
		t.Errorf("Load accepted %s, with entities %v", path, entityNames(m))
		return nil
	}
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Load(%s) error is %T (%v), want Errors", path, err, err)
	}
	var lines []string
	for _, e := range errs {
		c := *e
		c.File = filepath.Base(c.File)
		lines = append(lines, c.Error())
	}
	return lines
}

// TestLoadBadMappings checks Load reports exactly the errors each bad
// mapping names at its top; go test -update rewrites them.
func TestLoadBadMappings(t *testing.T) {
	for _, c := range badCases(t) {
		t.Run(strings.TrimSuffix(c.name, ".yaml"), func(t *testing.T) {
			got := loadErrors(t, c.path)
			if got == nil {
				return
			}
			for _, line := range got {
				if !strings.HasPrefix(line, c.name+":") {
					t.Errorf("error %q does not name the file %s", line, c.name)
				}
			}
			if *update {
				// The comments shift the lines: load again until they agree.
				for range 3 {
					var b bytes.Buffer
					for _, line := range got {
						b.WriteString("# " + line + "\n")
					}
					b.Write(c.body)
					if err := os.WriteFile(c.path, b.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					next := loadErrors(t, c.path)
					if cmp.Equal(next, got) {
						return
					}
					got = next
				}
				t.Fatalf("%s: the errors did not settle", c.path)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("Load errors (-want +got):\n%s", d)
			}
		})
	}
}
