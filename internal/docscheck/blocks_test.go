package docscheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// doc is one Markdown file: its path relative to the repository root (for
// messages) and its lines.
type doc struct {
	name  string
	lines []string
}

// block is one fenced code block of a doc.
type block struct {
	file string
	// line is the 1-based line of the opening fence; the block's first
	// line of text is line+1.
	line int
	lang string
	// marker is the HTML comment on the line before the fence ("" when
	// none), e.g. FragmentMarker.
	marker string
	// text holds the lines between the fences, with the fence's
	// indentation removed.
	text []string
}

func (b block) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// docs reads README.md and every docs/*.md of the repository.
func docs(t *testing.T) []doc {
	t.Helper()
	root := repoRoot(t)
	names, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	names = append([]string{filepath.Join(root, "README.md")}, names...)
	var out []doc
	for _, path := range names {
		out = append(out, readDoc(t, root, path))
	}
	if len(out) < 2 {
		t.Fatalf("found %d docs (README.md and docs/*.md): the check would pass on nothing", len(out))
	}
	return out
}

func readDoc(t *testing.T, root, path string) doc {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		rel = path
	}
	return doc{name: filepath.ToSlash(rel), lines: strings.Split(string(data), "\n")}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

var (
	fenceRE   = regexp.MustCompile("^(\\s*)(```+|~~~+)\\s*([A-Za-z0-9_+-]*)\\s*$")
	commentRE = regexp.MustCompile(`^\s*<!--.*-->\s*$`)
)

// blocks returns d's fenced code blocks. An unclosed fence is an error
// naming its line: everything after it would go unchecked.
func (d doc) blocks() ([]block, error) {
	var out []block
	for i := 0; i < len(d.lines); i++ {
		m := fenceRE.FindStringSubmatch(d.lines[i])
		if m == nil {
			continue
		}
		indent, fence := m[1], m[2]
		b := block{file: d.name, line: i + 1, lang: m[3], marker: d.markerBefore(i)}
		closed := false
		for i++; i < len(d.lines); i++ {
			if strings.TrimSpace(d.lines[i]) == fence {
				closed = true
				break
			}
			b.text = append(b.text, strings.TrimPrefix(d.lines[i], indent))
		}
		if !closed {
			return out, fmt.Errorf("%s: the code block is not closed (%s)", b, fence)
		}
		out = append(out, b)
	}
	return out, nil
}

// markerBefore returns the HTML comment on the nearest non-blank line
// before line i, or "".
func (d doc) markerBefore(i int) string {
	for j := i - 1; j >= 0; j-- {
		s := strings.TrimSpace(d.lines[j])
		if s == "" {
			continue
		}
		if commentRE.MatchString(s) {
			return s
		}
		return ""
	}
	return ""
}

// allBlocks returns the code blocks of every doc.
func allBlocks(t *testing.T) []block {
	t.Helper()
	var out []block
	for _, d := range docs(t) {
		bs, err := d.blocks()
		if err != nil {
			t.Error(err)
		}
		out = append(out, bs...)
	}
	return out
}

// TestBlocks checks the block reader on a small document: fences,
// indentation, markers, languages.
func TestBlocks(t *testing.T) {
	d := doc{name: "x.md", lines: strings.Split("intro\n<!-- fragment -->\n\n```yaml\na: 1\n```\n- item\n  ```sh\n  pg2dynamo plan \\\n    --mapping m.yaml\n  ```\n````\n```\n````\n", "\n")}
	got, err := d.blocks()
	if err != nil {
		t.Fatal(err)
	}
	want := []block{
		{file: "x.md", line: 4, lang: "yaml", marker: FragmentMarker, text: []string{"a: 1"}},
		{file: "x.md", line: 8, lang: "sh", text: []string{"pg2dynamo plan \\", "  --mapping m.yaml"}},
		{file: "x.md", line: 12, text: []string{"```"}},
	}
	if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
		t.Errorf("blocks:\n got %#v\nwant %#v", got, want)
	}
	if _, err := (doc{name: "y.md", lines: []string{"```sh", "pg2dynamo plan"}}).blocks(); err == nil || !strings.Contains(err.Error(), "y.md:1:") {
		t.Errorf("unclosed fence: %v, want an error at y.md:1", err)
	}
}
