package docscheck

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// placeholderRE matches what a writer leaves to fill in later: TODO,
// FIXME, XXX, TBD, <fill…>, {{…}}, and a figure never filled in: capitals
// fused to digits where a number belongs, before a unit (VF200 MB, VG1M MB).
var placeholderRE = regexp.MustCompile(`\b(?:TODO|FIXME|XXX|TBD)\b|<fill[^>]*>|\{\{[^}]*\}\}|\b[A-Z]{1,3}[0-9]+[A-Z]?\s+(?:[KMGT]i?B|ms|µs|s|items/s)\b`)

// placeholders returns, for each line of d holding a placeholder, where
// and what.
func (d doc) placeholders() []string {
	var out []string
	for i, line := range d.lines {
		for _, m := range placeholderRE.FindAllString(line, -1) {
			out = append(out, fmt.Sprintf("%s:%d: unfilled placeholder %q", d.name, i+1, m))
		}
	}
	return out
}

// TestPlaceholders fails on every unfilled placeholder of the docs.
func TestPlaceholders(t *testing.T) {
	for _, d := range docs(t) {
		for _, p := range d.placeholders() {
			t.Error(p)
		}
	}
}

// TestPlaceholderPattern: what is a placeholder and what is not.
func TestPlaceholderPattern(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"| 200,000 | matches the source (f) | VF200 MB |", []string{"VF200 MB"}},
		{"| 1,000,000 | (g) | VG1M MB |", []string{"VG1M MB"}},
		{"TODO: say why; <fill in> {{figure}}", []string{"TODO", "<fill in>", "{{figure}}"}},
		{"GSI1 and GSI2, S3, 82.9 MB, ${col:0}, $$, KSUID", nil},
	} {
		got := doc{name: "x.md", lines: []string{tc.line}}.placeholders()
		var want []string
		for _, w := range tc.want {
			want = append(want, fmt.Sprintf("x.md:1: unfilled placeholder %q", w))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%q:\n got %q\nwant %q", tc.line, got, want)
		}
	}
}
