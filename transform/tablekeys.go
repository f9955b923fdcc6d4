package transform

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// Keys of a row without its item: what follow needs to delete a gone or rekeyed
// row's items from the old image alone.

// TableKeyColumns returns, sorted, the source columns p's table key templates
// use (mirror's too); ok is false when one uses a stable ID or duplicated
// column, which an old row image cannot give.
func (p *Plan) TableKeyColumns() (cols []string, ok bool) {
	ok = true
	for i := range p.keys {
		k := &p.keys[i]
		if k.gsi != "" && k.gsi != mirrorKey {
			continue
		}
		for _, part := range k.parts {
			switch {
			case part.id >= 0:
				ok = false
			case part.col >= len(p.cols):
				ok = false
			case part.col >= 0:
				cols = append(cols, p.cols[part.col].Name)
			}
		}
	}
	slices.Sort(cols)
	return slices.Compact(cols), ok
}

// TableKeys returns the (partition, sort) key text of the items a row of p
// gives (item, then mirror), by the one key renderer. values holds at least p's
// columns in Plan.Columns order. It fails as Items does (a *RowError) on a NULL
// or unkeyable key column.
func (b *Builder) TableKeys(p *Plan, values []any) ([][2]string, error) {
	b.beginRow(p)
	out := make([][2]string, 0, 2)
	for _, group := range []string{"", mirrorKey} {
		var key [2]string
		n := 0
		for i := range p.keys {
			k := &p.keys[i]
			if k.gsi != group || n == 2 {
				continue
			}
			text, col, reason := b.renderKey(p, k, values)
			if reason != "" {
				return nil, p.rowError(values, col, reason)
			}
			key[n] = string(b.text[text.start:text.end])
			n++
		}
		if n > 0 {
			out = append(out, key)
		}
	}
	return out, nil
}

// Shape fingerprints the items p derives from a row. Query hashes the statement
// reading the entity's rows (columns, conversions, embeds, aggregates,
// duplicates), changing when a column is added, dropped or renamed; Columns
// hashes the read columns' types, changing when one is retyped (the same
// statement, converted differently); Keys hashes the table key columns and
// types, changing when a key could render differently.
type Shape struct {
	Query string `json:"query"`
	Keys  string `json:"keys"`
	// Columns is "" in a shape recorded before it was (see Same).
	Columns string `json:"columns,omitempty"`
}

// Same reports whether s and o fingerprint the same items; a Columns missing
// from either (an older checkpoint) counts as same.
func (s Shape) Same(o Shape) bool {
	return s.Query == o.Query && s.Keys == o.Keys && (s.Columns == o.Columns || s.Columns == "" || o.Columns == "")
}

// Shape returns p's Shape.
func (p *Plan) Shape() Shape {
	h := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return hex.EncodeToString(sum[:8])
	}
	cols, _ := p.TableKeyColumns()
	var keys strings.Builder
	for _, name := range cols {
		for _, c := range p.query.Columns {
			if c.Name == name {
				fmt.Fprintf(&keys, "%+v\n", c)
			}
		}
	}
	var all strings.Builder
	for _, c := range p.query.Columns {
		fmt.Fprintf(&all, "%+v\n", c)
	}
	for _, j := range p.query.Joins {
		for _, c := range j.Columns {
			fmt.Fprintf(&all, "%d %+v\n", j.Kind, c)
		}
	}
	return Shape{Query: h(p.query.SQL()), Keys: h(keys.String()), Columns: h(all.String())}
}
