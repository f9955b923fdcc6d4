package composecheck

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// ignoreRule is one pattern of .dockerignore.
type ignoreRule struct {
	re     *regexp.Regexp
	negate bool // a "!" pattern: lets matching paths back in
}

// dockerignore holds the rules of a .dockerignore file, matched as Docker
// does (moby/patternmatcher): each pattern is cleaned and matched against
// the slash-separated path relative to the context root; * and ? do not
// cross a slash, ** matches any number of directories; a pattern that
// matches a directory excludes everything under it; the last matching rule
// wins. Character classes ([...]) are not supported (loadDockerignore fails
// on one).
type dockerignore struct {
	rules []ignoreRule
}

// globRegexp translates one .dockerignore pattern into an anchored regexp.
func globRegexp(pattern string) (*regexp.Regexp, error) {
	if strings.ContainsAny(pattern, "[]\\") {
		return nil, fmt.Errorf("pattern %q: character classes and escapes are not supported here", pattern)
	}
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch {
		case strings.HasPrefix(pattern[i:], "**/"):
			b.WriteString("(.*/)?")
			i += 2
		case strings.HasPrefix(pattern[i:], "**"):
			b.WriteString(".*")
			i++
		case pattern[i] == '*':
			b.WriteString("[^/]*")
		case pattern[i] == '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// parseDockerignore reads the rules of a .dockerignore text.
func parseDockerignore(text string) (dockerignore, error) {
	var d dockerignore
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		negate := strings.HasPrefix(line, "!")
		line = strings.TrimPrefix(line, "!")
		line = strings.TrimPrefix(filepath.ToSlash(filepath.Clean(line)), "/")
		re, err := globRegexp(line)
		if err != nil {
			return d, err
		}
		d.rules = append(d.rules, ignoreRule{re: re, negate: negate})
	}
	return d, nil
}

func loadDockerignore(t *testing.T, root string) dockerignore {
	t.Helper()
	d, err := parseDockerignore(string(readRepoFile(t, root, ".dockerignore")))
	if err != nil {
		t.Fatalf(".dockerignore: %v", err)
	}
	return d
}

// excluded reports whether .dockerignore leaves rel (slash-separated,
// relative to the context root) out of the build context.
func (d dockerignore) excluded(rel string) bool {
	out := false
	for _, r := range d.rules {
		if r.matchesOrParent(rel) {
			out = !r.negate
		}
	}
	return out
}

// matchesOrParent reports whether the rule matches rel or one of the
// directories above it.
func (r ignoreRule) matchesOrParent(rel string) bool {
	for p := rel; ; {
		if r.re.MatchString(p) {
			return true
		}
		i := strings.LastIndex(p, "/")
		if i < 0 {
			return false
		}
		p = p[:i]
	}
}

// hasNegation reports whether a rule lets paths back in; then no directory
// can be skipped whole.
func (d dockerignore) hasNegation() bool {
	for _, r := range d.rules {
		if r.negate {
			return true
		}
	}
	return false
}

// contextFile is one regular file sent in the build context.
type contextFile struct {
	rel  string
	size int64
}

// buildContext walks root and returns the regular files .dockerignore lets
// through, and their size as a tar stream (a 512-byte header per file, the
// data padded to 512 bytes).
func buildContext(root string, d dockerignore) ([]contextFile, int64, error) {
	var files []contextFile
	var total int64
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.excluded(rel) {
			if e.IsDir() && !d.hasNegation() {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		files = append(files, contextFile{rel, info.Size()})
		total += 512 + (info.Size()+511)/512*512
		return nil
	})
	return files, total, err
}

// TestBuildContext checks that the build context holds what the image is
// built from and stays under MaxContextBytes, whatever builds and test runs
// have left in the working tree.
func TestBuildContext(t *testing.T) {
	root := repoRoot(t)
	d := loadDockerignore(t, root)
	for _, rel := range []string{
		"go.mod", "go.sum", "main.go", "Dockerfile",
		"fixtures/fixtures.go", "fixtures/sql/tickets.sql", "mapping/mapping.schema.json",
		"fixtures/mappings/strategies/tickets.yaml", "examples/northwind/northwind.sql",
		"scripts/demo.sh", "scripts/dynalite.sh", "tools/demo-ddb/main.go", "tools/go.mod", "tools/go.sum",
	} {
		if d.excluded(rel) {
			t.Errorf(".dockerignore leaves out %s, which the image is built from", rel)
		}
	}
	for _, rel := range []string{".git/HEAD", "node_modules/dynalite/cli.js", "pg2dynamo", "app/app_test.go", "mapping/testdata/x.yaml", "tools/bench/main.go", "tools/lint/go.mod", "tools/testenv/testenv.go", "go.work"} {
		if !d.excluded(rel) {
			t.Errorf(".dockerignore sends %s, which the image does not need", rel)
		}
	}
	files, total, err := buildContext(root, d)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("build context: %d files, %.1f MB as tar", len(files), float64(total)/1e6)
	if total > MaxContextBytes {
		sort.Slice(files, func(i, j int) bool { return files[i].size > files[j].size })
		var largest []string
		for _, f := range files[:min(10, len(files))] {
			largest = append(largest, fmt.Sprintf("%s (%d bytes)", f.rel, f.size))
		}
		t.Errorf("build context is %d bytes, over %d: exclude what the image does not need in .dockerignore; largest files: %s",
			total, MaxContextBytes, strings.Join(largest, ", "))
	}
}

func TestDockerignoreMatching(t *testing.T) {
	d, err := parseDockerignore("# comment\n.git\n/pg2dynamo\n**/testdata\n**/*_test.go\n*.rejects.jsonl\nexamples/chinook\nbench-out/\ndocs/*\n!docs/keep.md\n")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rel      string
		excluded bool
	}{
		{".git", true},
		{".git/objects/ab/cd", true},
		{".gitignore", false},
		{"pg2dynamo", true},
		{"cmd/pg2dynamo", false},
		{"testdata/a", true},
		{"mapping/testdata/fuzz/x", true},
		{"app/app_test.go", true},
		{"main_test.go", true},
		{"main.go", false},
		{"demo-tickets.rejects.jsonl", true},
		{"sub/demo.rejects.jsonl", false},
		{"examples/chinook/chinook.sql", true},
		{"examples/northwind/northwind.sql", false},
		{"bench-out/x.json", true},
		{"docs/a.md", true},
		{"docs/keep.md", false},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			if got := d.excluded(tt.rel); got != tt.excluded {
				t.Errorf("excluded(%q) = %v, want %v", tt.rel, got, tt.excluded)
			}
		})
	}
	if _, err := parseDockerignore("[abc]\n"); err == nil {
		t.Error("a character class was accepted")
	}
}
