package plan

import (
	"fmt"
	"io"
	"strings"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// RenderVersions writes a mapping's design before and after a change as text or
// markdown: the changes (d, from mapping.CompareMappings) as a table of entity
// and GSI changes, then each design whole (Render). No JSON: each design is one
// Render away.
func RenderVersions(w io.Writer, before, after *Design, d *mapping.Diff, format string) error {
	if format != FormatText && format != FormatMarkdown {
		return fmt.Errorf("two versions of a design are written as text or markdown, not %q", format)
	}
	md := format == FormatMarkdown
	var b strings.Builder
	heading := func(s string) {
		if md {
			fmt.Fprintf(&b, "## %s\n\n", s)
		} else {
			fmt.Fprintf(&b, "%s\n%s\n\n", s, strings.Repeat("=", len(s)))
		}
	}
	heading("What changes")
	writeTable(&b, changesTable(d), md)
	for _, v := range []struct {
		title string
		d     *Design
	}{{"Before", before}, {"After", after}} {
		heading(v.title)
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
		b.Reset()
		if err := Render(w, v.d, format); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// changesTable is d as rows of what changes (mapping.Diff.Changes).
func changesTable(d *mapping.Diff) table {
	t := table{head: []string{"what", "change"}}
	for _, c := range d.Changes() {
		t.rows = append(t.rows, []string{c[0], c[1]})
	}
	return t
}
