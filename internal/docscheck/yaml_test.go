package docscheck

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// TestYAMLExamples parses every ```yaml block of the docs as a mapping,
// with the parser pg2dynamo itself uses (mapping.Parse: strict decoding,
// defaults, templates, validation; no database) that declares a name. A
// block marked as a fragment is parsed as YAML only. Errors name the doc's file and line.
func TestYAMLExamples(t *testing.T) {
	n := 0
	for _, b := range allBlocks(t) {
		if b.lang != "yaml" && b.lang != "yml" {
			continue
		}
		n++
		if err := checkYAML(b); err != nil {
			t.Error(err)
		}
	}
	if n == 0 {
		t.Fatal("no ```yaml block found in the docs")
	}
}

// checkYAML returns why b is not what it claims to be: a whole mapping, or
// (marked FragmentMarker) YAML. The positions of the parser's errors are
// turned into lines of b's file.
func checkYAML(b block) error {
	data := []byte(strings.Join(b.text, "\n") + "\n")
	if b.marker == FragmentMarker {
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("%s: the ```yaml fragment is not valid YAML: %v", b, err)
		}
		return nil
	}
	m, err := mapping.Parse(b.file, data)
	if err == nil {
		if m.Name == "" {
			// As a user would copy it: a mapping without a name creates
			// no table.
			return fmt.Errorf("%s: the ```yaml mapping declares no name: add one (name: …), as every whole mapping in the docs does", b)
		}
		return nil
	}
	var es mapping.Errors
	if !errors.As(err, &es) {
		return fmt.Errorf("%s: the ```yaml block is not a mapping: %v", b, err)
	}
	var msgs []string
	for _, e := range es {
		e := *e
		if e.Line > 0 {
			e.Line += b.line
		} else {
			e.Line, e.Column = b.line, 1
		}
		msgs = append(msgs, e.Error())
	}
	return fmt.Errorf("%s: the ```yaml block is not a mapping (mark a part of one with %s on the line before the fence):\n\t%s",
		b, FragmentMarker, strings.Join(msgs, "\n\t"))
}

// TestCheckYAML: a broken mapping is reported at its line in the doc, and
// one without a name is refused; a fragment is accepted as YAML and
// refused when it is not YAML.
func TestCheckYAML(t *testing.T) {
	broken := block{file: "x.md", line: 10, lang: "yaml", text: []string{
		"table: {name: shop}",
		"entities:",
		"  A:",
		"    source: {table: a}",
		"    pk: A#${id",
	}}
	if err := checkYAML(broken); err == nil || !strings.Contains(err.Error(), "x.md:15:") {
		t.Errorf("broken mapping: %v, want an error at x.md:15", err)
	}
	whole := block{file: "x.md", line: 10, lang: "yaml", text: []string{"table: {name: shop}", "entities:", "  A: {source: {table: a}, pk: A, sk: A}"}}
	if err := checkYAML(whole); err == nil || !strings.Contains(err.Error(), "declares no name") {
		t.Errorf("a mapping without a name: %v, want an error saying so", err)
	}
	whole.text = append([]string{"name: shop"}, whole.text...)
	if err := checkYAML(whole); err != nil {
		t.Errorf("a mapping with a name: %v", err)
	}
	frag := block{file: "x.md", line: 3, lang: "yaml", marker: FragmentMarker, text: []string{"table:", "  name: shop"}}
	if err := checkYAML(frag); err != nil {
		t.Errorf("fragment: %v", err)
	}
	frag.text = []string{"table: [", "  name"}
	if err := checkYAML(frag); err == nil || !strings.Contains(err.Error(), "x.md:3:") {
		t.Errorf("broken fragment: %v, want an error at x.md:3", err)
	}
}
