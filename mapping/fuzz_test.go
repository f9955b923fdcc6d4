package mapping

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// renderTemplate writes parts back as template text: literals with every
// "$" escaped as "$$", placeholders as "${column}" or "${column:width}".
func renderTemplate(parts []Part) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Column == "" {
			b.WriteString(strings.ReplaceAll(p.Literal, "$", "$$"))
			continue
		}
		b.WriteString("${")
		b.WriteString(p.Column)
		if p.Width != WidthAuto {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(p.Width))
		}
		b.WriteByte('}')
	}
	return b.String()
}

func TestRenderTemplate(t *testing.T) {
	// The helper itself: canonical templates render to themselves.
	for _, s := range []string{"", "A", "$$", "ORDER#${order_id}", "${a:0}$$${b:64}#${c}", "$${x}"} {
		tpl, err := ParseTemplate(s)
		if err != nil {
			t.Fatalf("ParseTemplate(%q): %v", s, err)
		}
		if got := renderTemplate(tpl.Parts); got != s {
			t.Errorf("renderTemplate(ParseTemplate(%q)) = %q", s, got)
		}
	}
}

func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{
		"", "ORDER", "ORDER#${order_id}", "C#${a}#O#${b}", "${a}${b}",
		"${id:8}", "${id:0}", "${id:64}", "${ id : 8 }", "$$", "$${id}", "$", "$x", "a$", "$$$",
		"ORDER#${order_id", "${}", "${ id : x }", "${id:65}", "${a${b}}", "${id:-1}", "${id:+8}",
		"${a:1:2}", "}${a}}", "Ü#${naïve}", "${a$}", "${$}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tpl, err := ParseTemplate(s)
		if err != nil {
			var te *TemplateError
			if !errors.As(err, &te) {
				t.Fatalf("ParseTemplate(%q) error is %T, want *TemplateError: %v", s, err, err)
			}
			if te.Offset < 0 || te.Offset >= len(s) {
				t.Fatalf("ParseTemplate(%q): Offset %d outside the text", s, te.Offset)
			}
			if te.Msg == "" {
				t.Fatalf("ParseTemplate(%q): empty message", s)
			}
			if !strings.HasPrefix(te.Msg, "bad width") && !strings.HasPrefix(s[te.Offset:], "${") {
				t.Fatalf("ParseTemplate(%q): %q error at offset %d, which is not a \"${\"", s, te.Msg, te.Offset)
			}
			if cmp.Diff(Template{}, tpl) != "" {
				t.Fatalf("ParseTemplate(%q) returned %#v with its error", s, tpl)
			}
			return
		}
		if tpl.Source != s {
			t.Fatalf("Source = %q, want %q", tpl.Source, s)
		}
		for i, p := range tpl.Parts {
			switch {
			case p.Column == "" && p.Literal == "":
				t.Fatalf("ParseTemplate(%q): part %d is empty", s, i)
			case p.Column == "" && i > 0 && tpl.Parts[i-1].Column == "":
				t.Fatalf("ParseTemplate(%q): parts %d and %d are adjacent literals", s, i-1, i)
			case p.Column != "" && p.Literal != "":
				t.Fatalf("ParseTemplate(%q): part %d is both literal and column: %#v", s, i, p)
			case p.Column != "" && (p.Width < WidthAuto || p.Width > 64):
				t.Fatalf("ParseTemplate(%q): part %d has width %d", s, i, p.Width)
			case p.Column != "" && (strings.TrimSpace(p.Column) != p.Column || strings.ContainsAny(p.Column, ":}")):
				t.Fatalf("ParseTemplate(%q): part %d has column %q", s, i, p.Column)
			}
		}
		again := renderTemplate(tpl.Parts)
		tpl2, err := ParseTemplate(again)
		if err != nil {
			t.Fatalf("ParseTemplate(%q) = %#v, rendered as %q, which does not parse: %v", s, tpl.Parts, again, err)
		}
		if d := cmp.Diff(tpl.Parts, tpl2.Parts); d != "" {
			t.Fatalf("ParseTemplate(%q) rendered as %q parses differently (-first +second):\n%s", s, again, d)
		}
		if renderTemplate(tpl2.Parts) != again {
			t.Fatalf("rendering is not stable for %q", s)
		}
	})
}

// fuzzParseSeeds are mapping files for FuzzParse: the shipped ones and a
// few that exercise every field and several errors.
var fuzzParseSeeds = []string{
	"../fixtures/mappings/customers.yaml",
	"../fixtures/mappings/tickets.yaml",
	"../fixtures/mappings/attendance.yaml",
	"../examples/northwind/mapping.yaml",
	"testdata/valid.yaml",
	"testdata/invalid.yaml",
}

func FuzzParse(f *testing.F) {
	for _, path := range fuzzParseSeeds {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatalf("seed: %v", err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"table: {name: shop}\nentities: {A: {source: {table: a}, pk: A, sk: A}}\n",
		"table:\n  name: shop\n  billing_mode: PROVISIONED\n  read_capacity: 1\n  write_capacity: 1\n" +
			"  gsis:\n    - {name: GSI1, partition_key: G1, sort_key: G2, projection: INCLUDE, non_key_attributes: [x], read_capacity: 1, write_capacity: 1}\n" +
			"type_attribute: kind\nentities:\n  A:\n    source: {schema: s, table: a}\n    pk: \"A#${id}\"\n    sk: \"${n:4}\"\n    type: a\n" +
			"    indexes: {GSI1: {pk: \"X#${x}\", sk: \"$$${y:0}\", sparse: true}}\n" +
			"    attributes: {select: [id, x], exclude: [y], rename: {x: ex}}\n",
		"version: 2\ntable: {name: t, sort_key: PK}\nentities:\n  A: {source: {table: a, query: q}, pk: \"${\", sk: \"${}\", indexes: {N: {}}}\n",
		"entities:\n  A: &a {source: {table: a}, pk: A, sk: A}\n  B: *a\ntable: {name: shop}\n",
		"table: {name: shop}\nentities:\n  A: {source: {table: a}, pk: A, sk: A}\n---\nentities: {B: {}}\n",
		"- [\n",
		"table: \"unclosed\n",
		// Aliases of aliases (counted, not expanded) and nesting past MaxDepth.
		"table: {name: shop}\nentities:\n  A:\n    source: {table: t}\n    pk: A\n    attributes:\n      select: &a [x, x]\n      rename: {a: &b [*a, *a], b: [*b, *b]}\n",
		strings.Repeat("- [", 40) + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 8<<10 {
			t.Skip("mapping files are small; huge inputs only slow the YAML library down")
		}
		// A hang is a failure the fuzzer can save, not a stalled run. An
		// input this small parses in milliseconds; the bound is far above
		// that on a loaded machine, so only a hang meets it.
		var m *Mapping
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			m, err = Parse("fuzz.yaml", data)
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("Parse still running after a minute on %q", data)
		}
		if err != nil {
			if m != nil {
				t.Fatalf("Parse returned a mapping with error %v", err)
			}
			var errs Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("error is %T, want non-empty Errors: %v", err, err)
			}
			for i, e := range errs {
				if e == nil {
					t.Fatalf("errs[%d] is nil", i)
				}
				if e.File != "fuzz.yaml" || e.Msg == "" || e.Line < 0 || e.Column < 0 {
					t.Fatalf("errs[%d] = %#v", i, *e)
				}
				if i > 0 && (e.Line < errs[i-1].Line || e.Line == errs[i-1].Line && e.Column < errs[i-1].Column) {
					t.Fatalf("errors out of order:\n%v", err)
				}
			}
			// Parsing is deterministic: same input, same errors. go-yaml
			// picks one of several unknown fields in map order, so an
			// unknown field error is checked more often: a 1-in-8 choice
			// then slips through 100 parses with probability 1.6e-6.
			n := 1
			if strings.Contains(err.Error(), "unknown field") {
				n = 100
			}
			for range n {
				if _, err2 := Parse("fuzz.yaml", data); err2 == nil || err2.Error() != err.Error() {
					t.Fatalf("Parse gave different errors for the same input:\n%v\nthen:\n%v", err, err2)
				}
			}
			return
		}
		if len(m.Entities) == 0 {
			t.Fatalf("Parse succeeded without entities")
		}
		if m.Version != 1 || m.Table.PartitionKey == "" || m.Table.SortKey == "" || m.TypeAttribute == "" {
			t.Fatalf("defaults not applied: version %d, keys %q/%q, type attribute %q",
				m.Version, m.Table.PartitionKey, m.Table.SortKey, m.TypeAttribute)
		}
		for _, e := range m.Entities {
			if e == nil {
				t.Fatalf("nil entity in %d entities", len(m.Entities))
			}
			if e.PKTemplate.IsZero() {
				t.Fatalf("entity %q: empty PKTemplate for pk %q", e.Name, e.PK)
			}
			if e.SKTemplate.IsZero() {
				t.Fatalf("entity %q: empty SKTemplate for sk %q", e.Name, e.SK)
			}
			if e.PKTemplate.Source != e.PK || e.SKTemplate.Source != e.SK {
				t.Fatalf("entity %q: templates %q/%q parsed from pk/sk %q/%q",
					e.Name, e.PKTemplate.Source, e.SKTemplate.Source, e.PK, e.SK)
			}
		}
	})
}

// TestFuzzCorpusFormat checks the seed files under testdata/fuzz are in the
// "go test fuzz v1" format, so that a typo does not silently drop a seed.
func TestFuzzCorpusFormat(t *testing.T) {
	for _, dir := range []string{"FuzzParseTemplate", "FuzzParse"} {
		files, err := filepath.Glob(filepath.Join("testdata", "fuzz", dir, "*"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Errorf("no seed files for %s", dir)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitN(strings.TrimSpace(string(data)), "\n", 3)
			if len(lines) != 2 || lines[0] != "go test fuzz v1" {
				t.Errorf("%s: want a \"go test fuzz v1\" header and one value, got %d lines", file, len(lines))
				continue
			}
			typ := "string("
			if dir == "FuzzParse" {
				typ = "[]byte("
			}
			v, ok := strings.CutPrefix(lines[1], typ)
			if !ok || !strings.HasSuffix(v, ")") {
				t.Errorf("%s: value %.40q is not %s...)", file, lines[1], typ)
				continue
			}
			if _, err := strconv.Unquote(strings.TrimSuffix(v, ")")); err != nil {
				t.Errorf("%s: value is not a quoted Go string: %v", file, err)
			}
		}
	}
}
