package docscheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// numberRE matches a number as the docs and BENCHMARKS.md write
	// them: 4748, 1,000,000, 0.91, 82.9 (and the 1 of 1M).
	numberRE = regexp.MustCompile(`\b[0-9][0-9,]*(?:\.[0-9]+)?`)
	// measuredRE matches the figures only a measurement gives: a rate in
	// items/s, a time per item in µs, a ratio written 0.91×.
	measuredRE = regexp.MustCompile(`[0-9](?:[0-9,.]*[0-9])?\s*(?:items/s|µs)|[0-9](?:[0-9.]*[0-9])?×`)
)

// normalize returns a number without its thousands separators, and
// without a trailing comma or dot that ends the sentence.
func normalize(n string) string {
	return strings.TrimRight(strings.ReplaceAll(n, ",", ""), ".")
}

// numbers returns the set of the numbers of text.
func numbers(text string) map[string]bool {
	out := map[string]bool{}
	for _, n := range numberRE.FindAllString(text, -1) {
		out[normalize(n)] = true
	}
	return out
}

// benchQuotes returns the lines of d between BenchOpen and BenchClose, by
// line number (1-based), and an error for a marker out of place.
func (d doc) benchQuotes() (map[int]string, error) {
	out := map[int]string{}
	open := 0
	for i, line := range d.lines {
		switch strings.TrimSpace(line) {
		case BenchOpen:
			if open > 0 {
				return nil, fmt.Errorf("%s:%d: %s inside the block opened at line %d", d.name, i+1, BenchOpen, open)
			}
			open = i + 1
		case BenchClose:
			if open == 0 {
				return nil, fmt.Errorf("%s:%d: %s without %s", d.name, i+1, BenchClose, BenchOpen)
			}
			open = 0
		default:
			if open > 0 {
				out[i+1] = line
			}
		}
	}
	if open > 0 {
		return nil, fmt.Errorf("%s:%d: %s is not closed", d.name, open, BenchOpen)
	}
	return out, nil
}

// unquoted returns, for every prose line of d outside a BenchOpen block
// and outside code blocks, the measured figures it holds.
func (d doc) unquoted(quoted map[int]string) []string {
	var out []string
	inCode := ""
	for i, line := range d.lines {
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			switch {
			case inCode == "":
				inCode = m[2]
				continue
			case m[2] == inCode && m[3] == "":
				inCode = ""
				continue
			}
		}
		if inCode != "" {
			continue
		}
		if _, ok := quoted[i+1]; ok {
			continue
		}
		for _, m := range measuredRE.FindAllString(line, -1) {
			out = append(out, fmt.Sprintf("%s:%d: %q is a measured figure: quote it from BENCHMARKS.md in docs/performance.md, between %s and %s", d.name, i+1, m, BenchOpen, BenchClose))
		}
	}
	return out
}

// TestBenchFigures checks that the figures docs/performance.md quotes are
// BENCHMARKS.md's, and that no doc gives a measured rate, time per item
// or ratio elsewhere.
func TestBenchFigures(t *testing.T) {
	root := repoRoot(t)
	bench, err := os.ReadFile(filepath.Join(root, "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	have := numbers(string(bench))
	found := false
	for _, d := range docs(t) {
		quoted, err := d.benchQuotes()
		if err != nil {
			t.Error(err)
			continue
		}
		if d.name != "docs/performance.md" && len(quoted) > 0 {
			t.Errorf("%s: quotes BENCHMARKS.md (%s): only docs/performance.md does, the other pages point to it", d.name, BenchOpen)
		}
		if d.name == "docs/performance.md" {
			found = len(quoted) > 0
			for n, line := range quoted {
				for _, num := range numberRE.FindAllString(line, -1) {
					if !have[normalize(num)] {
						t.Errorf("%s:%d: %s is not a figure of BENCHMARKS.md", d.name, n, num)
					}
				}
			}
		}
		for _, p := range d.unquoted(quoted) {
			t.Error(p)
		}
	}
	if !found {
		t.Errorf("docs/performance.md quotes nothing from BENCHMARKS.md between %s and %s", BenchOpen, BenchClose)
	}
}

// TestBenchCheck: a figure of BENCHMARKS.md passes, one that is not fails,
// and a rate outside the markers is found.
func TestBenchCheck(t *testing.T) {
	have := numbers("| (c) | 1,000,000 | 4748 | 61.4 MB | c/b **0.99**. |")
	for _, n := range []string{"1,000,000", "1000000", "4,748", "61.4", "0.99"} {
		if !have[normalize(n)] {
			t.Errorf("numbers: %s not found", n)
		}
	}
	for _, n := range []string{"62", "4749", "0.9"} {
		if have[normalize(n)] {
			t.Errorf("numbers: %s found", n)
		}
	}
	d := doc{name: "x.md", lines: []string{BenchOpen, "4,748 items/s, 0.91×", BenchClose, "about 5,000 items/s", "```", "9326 items/s", "```", "2 × --concurrency"}}
	quoted, err := d.benchQuotes()
	if err != nil || len(quoted) != 1 {
		t.Fatalf("benchQuotes: %v, %v", quoted, err)
	}
	if got := d.unquoted(quoted); len(got) != 1 || !strings.HasPrefix(got[0], "x.md:4:") {
		t.Errorf("unquoted: %q, want one figure at x.md:4", got)
	}
}
