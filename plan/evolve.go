package plan

import (
	"fmt"
	"io"
	"strings"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// RenderVersions writes two versions of a mapping's design, the one a
// table was written with (before) and the next (after), as text or
// markdown: what changes (d, mapping.CompareMappings' result) as a table
// of entity and GSI changes, then each design whole (Render), before
// then after. JSON is not offered: each design is one Render away.
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

// changesTable is d as rows of what changes: one an entity change, a GSI
// or an access pattern added or removed, a refusal.
func changesTable(d *mapping.Diff) table {
	t := table{head: []string{"what", "change"}}
	for _, e := range d.Entities {
		for _, c := range e.Changes {
			t.rows = append(t.rows, []string{"entity " + e.Entity, c})
		}
	}
	for _, g := range d.GSIsAdded {
		t.rows = append(t.rows, []string{"GSI " + g, "added (created before any item is written)"})
	}
	for _, g := range d.GSIsRemoved {
		t.rows = append(t.rows, []string{"GSI " + g, "removed (deleted with --drop-gsis)"})
	}
	for _, p := range d.PatternsAdded {
		t.rows = append(t.rows, []string{"access pattern " + p, "added"})
	}
	for _, p := range d.PatternsRemoved {
		t.rows = append(t.rows, []string{"access pattern " + p, "removed"})
	}
	for _, p := range d.PatternsChanged {
		t.rows = append(t.rows, []string{"access pattern " + p, "changed"})
	}
	for _, r := range d.Refusals {
		t.rows = append(t.rows, []string{"refused", r + " (needs a new table)"})
	}
	if len(t.rows) == 0 {
		t.rows = append(t.rows, []string{"nothing", "the two versions write the same items"})
	}
	return t
}
