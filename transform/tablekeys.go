package transform

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// Keys of a row without its item: what following changes needs to delete
// the items of a source row that is gone or whose keys changed, from the
// row's old image alone (package follow).

// TableKeyColumns returns the names of the source columns the table key
// templates of p's items use (the partition and sort key, and the
// mirror's), sorted. ok is false when one of them uses a stable ID or a
// column a duplicate rule copies: a value that is not one of the row's own
// columns, so an old row image cannot give the key.
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

// TableKeys returns the primary keys (partition key text, sort key text)
// of the items a row of p gives: the item's, then, with a mirror, the
// mirror's, rendered by the one key renderer. values holds at least p's
// columns, in Plan.Columns order; only the key columns are read. It fails
// as Items does when a key column is NULL or its text cannot be a key (a
// *RowError).
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

// Shape fingerprints the items p derives from a row: Query is a hash of
// the statement that reads the entity's rows (its columns and their
// conversions, its embeds, aggregates and duplicated columns), which
// changes when a column the entity takes is added, dropped or renamed;
// Columns a hash of the types of every column it reads (its own and its
// joins'), which changes when one is retyped (a column read as it comes,
// int4 or text, is read by the same statement, and converted differently:
// a number, a string); Keys is a hash of the table key columns and their
// types, which changes when a key could render differently for the same
// row.
type Shape struct {
	Query string `json:"query"`
	Keys  string `json:"keys"`
	// Columns is "" in a shape recorded before it was (see Same).
	Columns string `json:"columns,omitempty"`
}

// Same reports whether s and o fingerprint the same items; a Columns
// missing from either (a checkpoint written before it was recorded) is
// taken as the same.
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
