package docscheck

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// linkRE matches the target of a Markdown link: [text](target).
var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// slug returns the anchor GitHub gives a heading: lower case, punctuation
// dropped but for hyphens and underscores, each space a hyphen.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the anchors of d's headings (outside code blocks), with
// GitHub's -1, -2 … for a repeated one.
func (d doc) anchors() map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for _, line := range d.lines {
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "":
				fence = m[2]
			case m[2] == fence && m[3] == "":
				fence = ""
			}
			continue
		}
		if fence != "" || !strings.HasPrefix(line, "#") {
			continue
		}
		s := slug(strings.TrimSpace(strings.TrimLeft(line, "#")))
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// TestLinks checks every relative link of the docs: the file exists, and
// a #fragment names a heading of the file it points to.
func TestLinks(t *testing.T) {
	root := repoRoot(t)
	all := docs(t)
	byName := map[string]doc{}
	for _, d := range all {
		byName[d.name] = d
	}
	for _, d := range all {
		for i, line := range d.lines {
			for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
				if err := checkLink(root, byName, d, m[1]); err != nil {
					t.Errorf("%s:%d: %v", d.name, i+1, err)
				}
			}
		}
	}
}

// checkLink returns why target, a link of d, leads nowhere; nil for a URL
// with a scheme (not checked) or a link that holds.
func checkLink(root string, byName map[string]doc, d doc, target string) error {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return nil
	}
	file, frag, _ := strings.Cut(target, "#")
	name := d.name
	if file != "" {
		name = path.Clean(path.Join(path.Dir(d.name), file))
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(name))); err != nil {
			return fmt.Errorf("link %s: no file %s", target, name)
		}
	}
	if frag == "" {
		return nil
	}
	to, ok := byName[name]
	if !ok {
		return nil // a file that is no doc (a .go file, BENCHMARKS.md): its anchors are not checked
	}
	if !to.anchors()[frag] {
		return fmt.Errorf("link %s: %s has no heading #%s", target, name, frag)
	}
	return nil
}

// TestSlug: GitHub's anchors of the headings these docs use.
func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Types: PostgreSQL → DynamoDB":          "types-postgresql--dynamodb",
		"Library presets (`library:`)":          "library-presets-library",
		"Shards (`--shard i/N`)":                "shards---shard-in",
		"Stale items, and other writers' items": "stale-items-and-other-writers-items",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}
