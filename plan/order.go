package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// OrderWarning is a sort key template writing number columns as plain digits
// (${col:0}), which sort as text ("10" before "9"), in an attribute access
// patterns read in order or by range (any sort key condition but "="). It is a
// choice, not a mistake (design code and its draft write plain digits), so plan
// notes it and offers the padded template, which that code's keys then no
// longer match.
type OrderWarning struct {
	Entity string `json:"entity"`
	// Index is "table" or the GSI; SortKey its sort attribute; Template the
	// entity's template for it.
	Index    string `json:"index"`
	SortKey  string `json:"sort_key"`
	Template string `json:"template"`
	// Columns are the number columns written as plain digits.
	Columns []string `json:"columns"`
	// Patterns read the attribute in order, each with its sort key operator
	// ("partition" for none).
	Patterns []string `json:"patterns"`
	// Padded is Template with those columns zero-padded to their type's width.
	Padded string `json:"padded"`
	// MisOrdered and Examples (plan --with-source): how many rows sort as text
	// right after a greater number of their partition, and a few.
	MisOrdered int64         `json:"mis_ordered,omitempty"`
	Examples   []MisOrdering `json:"examples,omitempty"`
	// group are the columns partitioning each column's order: the partition
	// template's and the sort template's before it.
	group map[string][]string
	src   mapping.Source
}

// MisOrdering is a row sorting as text after a greater number: its partition
// values, the number before it, its own.
type MisOrdering struct {
	Column string            `json:"column"`
	Group  map[string]string `json:"group"`
	Before string            `json:"before"`
	After  string            `json:"after"`
}

// orderWarnings finds the OrderWarnings of m, in entity and slot order.
func orderWarnings(m *mapping.Mapping) []OrderWarning {
	var out []OrderWarning
	for _, e := range m.Entities {
		slots := m.KeySlots(e)
		for _, s := range slots {
			if !s.Sort || s.Type != mapping.TypeString {
				continue
			}
			var cols []string
			padded := s.Template.Source
			for _, p := range s.Template.Parts {
				if p.Column != "" && p.Width == 0 && !slices.Contains(cols, p.Column) {
					cols = append(cols, p.Column)
					padded = strings.ReplaceAll(padded, "${"+p.Column+":0}", "${"+p.Column+"}")
				}
			}
			pats := orderedPatterns(m, s)
			if len(cols) == 0 || len(pats) == 0 {
				continue
			}
			w := OrderWarning{Entity: e.Name, Index: cmpIndex(s.Index), SortKey: s.Attr, Template: s.Template.Source, Columns: cols,
				Patterns: pats, Padded: padded, group: map[string][]string{}, src: e.Source}
			var part []string
			for _, ps := range slots {
				if !ps.Sort && ps.Mirror == s.Mirror && ps.Index == s.Index {
					part = ps.Template.Columns()
				}
			}
			for _, c := range cols {
				g := slices.Clone(part)
				for _, p := range s.Template.Parts {
					if p.Column == c {
						break
					}
					if p.Column != "" && !slices.Contains(g, p.Column) {
						g = append(g, p.Column)
					}
				}
				w.group[c] = g
			}
			out = append(out, w)
		}
	}
	return out
}

func cmpIndex(index string) string {
	if index == "" {
		return "table"
	}
	return index
}

// orderedPatterns are patterns on s's index whose answer follows s's order: a
// sort condition other than "=", or none.
func orderedPatterns(m *mapping.Mapping, s mapping.KeySlot) []string {
	var out []string
	for _, ap := range m.AccessPatterns {
		kc := ap.Condition
		if ap.Index != s.Index || kc.SortOp == "=" || kc.SortAttr != "" && kc.SortAttr != s.Attr {
			continue
		}
		op := kc.SortOp
		if op == "" {
			op = "partition"
		}
		out = append(out, fmt.Sprintf("%s (%s)", ap.Name, op))
	}
	return out
}

// misOrderer is what OrderFromSource reads: extract.Source.
type misOrderer interface {
	MisOrdered(ctx context.Context, src mapping.Source, group []string, col string, n int) (int64, []extract.MisOrder, error)
}

// MaxMisOrdered is how many rows OrderFromSource lists per warning.
const MaxMisOrdered = 3

// OrderFromSource asks src (snapshot begun), for each OrderWarning, which rows
// sort as text after a greater number of their partition
// (extract.Source.MisOrdered), recording how many and the first MaxMisOrdered.
func OrderFromSource(ctx context.Context, src misOrderer, d *Design) error {
	for i := range d.OrderWarnings {
		w := &d.OrderWarnings[i]
		for _, c := range w.Columns {
			n, ex, err := src.MisOrdered(ctx, w.src, w.group[c], c, MaxMisOrdered)
			if err != nil {
				return err
			}
			w.MisOrdered += n
			for _, x := range ex {
				if len(w.Examples) == MaxMisOrdered {
					break
				}
				g := map[string]string{}
				for j, name := range w.group[c] {
					g[name] = x.Group[j]
				}
				w.Examples = append(w.Examples, MisOrdering{Column: c, Group: g, Before: x.Before, After: x.After})
			}
		}
	}
	return nil
}

// orderLines renders the warnings for the text and markdown reports.
func orderLines(ws []OrderWarning, withSource bool) []string {
	var out []string
	for _, w := range ws {
		cols := strings.Join(w.Columns, ", ")
		out = append(out, fmt.Sprintf("ORDER: entity %s, sort key %s (%s): %s writes %s as plain digits, which sort as text (10 before 9); %s read these keys in order, so their order and ranges follow the text, not the numbers.",
			w.Entity, w.SortKey, w.Index, w.Template, cols, strings.Join(w.Patterns, ", ")))
		if withSource {
			s := fmt.Sprintf("  In the source, %d rows sort after a greater number of their partition", w.MisOrdered)
			var ex []string
			for _, x := range w.Examples {
				var g []string
				for _, k := range w.group[x.Column] {
					g = append(g, k+"="+x.Group[k])
				}
				ex = append(ex, fmt.Sprintf("%s %s before %s (%s)", x.Column, x.Before, x.After, strings.Join(g, ", ")))
			}
			if len(ex) > 0 {
				s += ": " + strings.Join(ex, "; ")
			}
			out = append(out, s+".")
		}
		out = append(out, fmt.Sprintf("  To sort numerically, choose padding: %s (zero-padded to the column type's width, or ${col:N}). The keys then differ from plain formatting: pad the design's template too ({%s:010d}) so that its code builds them.",
			w.Padded, w.Columns[0]))
	}
	return out
}
