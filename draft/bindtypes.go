package draft

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// The PostgreSQL types (format_type's names) by what a design's field
// types can hold.
var (
	integerTypes = []string{"smallint", "integer", "bigint"}
	floatTypes   = []string{"real", "double precision"}
	textTypes    = []string{"text", "name", "citext", `"char"`}
)

// numberType reports whether a column of type typ is a number: an
// integer, numeric or float, whose key text pg2dynamo zero-pads unless a
// width is written.
func numberType(typ string) bool {
	return slices.Contains(integerTypes, typ) || slices.Contains(floatTypes, typ) || typ == "numeric" || strings.HasPrefix(typ, "numeric(")
}

// textType reports whether typ is a character type.
func textType(typ string) bool {
	return slices.Contains(textTypes, typ) || strings.HasPrefix(typ, "character varying") || strings.HasPrefix(typ, "character(") || typ == "character"
}

// integralNumeric reports whether typ is numeric(p) or numeric(p,0),
// which holds only integers.
func integralNumeric(typ string) bool {
	if !strings.HasPrefix(typ, "numeric(") {
		return false
	}
	_, scale, ok := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(typ, "numeric("), ")"), ",")
	return !ok || strings.TrimSpace(scale) == "0"
}

// fieldFits says why column col cannot hold design field f, or "" when
// it can: the generated code parses each attribute as the field's type.
// An integer takes an integer column (or numeric without a fraction); a
// decimal any number; a boolean a boolean; a uuid a uuid or text; an array
// an array or json(b); an object json(b); a string any column but an
// array, json(b) or bytea.
func fieldFits(f MCPField, col Column) string {
	typ := col.Type
	array := strings.HasSuffix(typ, "[]")
	json := typ == "json" || typ == "jsonb"
	ok := true
	switch f.Type {
	case "string":
		ok = !array && !json && typ != "bytea"
	case "integer":
		ok = slices.Contains(integerTypes, typ) || integralNumeric(typ)
	case "decimal":
		ok = numberType(typ)
	case "boolean":
		ok = typ == "boolean"
	case "uuid":
		ok = typ == "uuid" || textType(typ)
	case "array":
		ok = array || json
	case "object":
		ok = json
	}
	if ok {
		return ""
	}
	return fmt.Sprintf("field %s is typed %s in the design, but the column is %s: the generated code could not parse its values as %s; change the field's type or the column", f.Name, f.Type, typ, f.Type)
}

// orderNotes notes, on an entity whose sort keys (the table's or a GSI's)
// hold a number as plain digits as the design's code writes them, that
// they sort as text ("10" before "9"); padding is the design's choice
// ({field:010d}), which the draft then renders.
func (g *binder) orderNotes(e *BoundEntity) {
	de := e.Design
	sorted := map[string][]string{}
	add := func(attr, tpl string) {
		for _, m := range placeholder.FindAllStringSubmatch(tpl, -1) {
			if c, ok := e.keyName[m[1]]; ok && c.Number && m[2] == "" {
				sorted[attr] = append(sorted[attr], "{"+m[1]+"}")
			}
		}
	}
	// A number key attribute (keyType N) sorts numerically: no note.
	text := func(attr string) bool { return attr != "" && g.b.keyType(attr) != mapping.TypeNumber }
	if text(g.b.SortKey) {
		add(g.b.SortKey, de.SKTemplate)
	}
	for _, m := range de.GSIMappings {
		if gsi := g.b.Design.GSI(m.Name); gsi != nil && text(gsi.SortKey) {
			add(gsi.SortKey, m.SKTemplate)
		}
	}
	for _, attr := range slices.Sorted(maps.Keys(sorted)) {
		fs := sorted[attr]
		e.Notes = append(e.Notes, fmt.Sprintf("ORDER: sort key %s holds %s, a number written as plain digits, as the design's code writes it: its keys sort as text (10 before 9), so a Query's order and a range condition (>, <, between) on it compare text, not numbers. To sort numerically, pad it in the design ({%s:010d}): init then pads it the same way (${%s:10}).",
			attr, strings.Join(fs, ", "), strings.Trim(fs[0], "{}"), e.keyName[strings.Trim(fs[0], "{}")].Name))
	}
}

// castable reports whether string field f over column col is to be read
// as text: a number or a boolean, whose attribute would hold another type
// than the design's; or, in a key (inKey), a timestamp or a time, whose
// key text (six fraction digits) would differ from its attribute's, so
// that the design's code, building a key from the attribute, would not
// find the item. PostgreSQL's text is the same in both and sorts in time.
func castable(f MCPField, col Column, inKey bool) bool {
	switch {
	case f.Type != "string":
		return false
	case numberType(col.Type), col.Type == "boolean":
		return true
	}
	return inKey && timeType(col.Type)
}

// timeType reports whether typ is a timestamp or a time of day, whose key
// text has a fixed six-digit fraction.
func timeType(typ string) bool {
	return strings.HasPrefix(typ, "timestamp") || strings.HasPrefix(typ, "time ") || typ == "time"
}

// allKeyFields are the fields of every key template of de: the table's
// and its GSI mappings'.
func allKeyFields(de *MCPEntity) []string {
	out := keyFields(de)
	for _, m := range de.GSIMappings {
		out = append(out, templateFields(m.PKTemplate)...)
		out = append(out, templateFields(m.SKTemplate)...)
	}
	return out
}

// casts keeps, of e's columns to read as text (entitySource), those no
// join of e uses: a join compares the column with another table's of its
// own type, so it keeps its type and the entity's note says so.
func (g *binder) casts(e *BoundEntity) {
	joined := map[string]bool{}
	for _, d := range e.Duplicates {
		for _, p := range d.Join {
			joined[p[1]] = true
		}
	}
	for _, c := range e.Counts {
		for _, p := range c.Join {
			joined[p[1]] = true
		}
	}
	for _, em := range e.Embeds {
		for _, p := range em.Join {
			joined[p[1]] = true
		}
	}
	var kept []string
	for _, c := range e.Casts {
		col, _ := e.Table.Column(c)
		if joined[c] {
			e.Notes = append(e.Notes, fmt.Sprintf("TYPE: %s is a string in the design over a column of type %s, which a join of this entity compares with another table's: its attribute keeps the column's type, and its key text is pg2dynamo's for that type.", cmp.Or(e.Rename[c], c), col.Type))
			continue
		}
		kept = append(kept, c)
		e.Notes = append(e.Notes, fmt.Sprintf("TYPE: %s is a string in the design over a column of type %s: the query source reads it as PostgreSQL's text, so that its attribute is that S and its keys the same text (a query source cannot be followed: see docs/follow.md).", cmp.Or(e.Rename[c], c), col.Type))
	}
	e.Casts = kept
}

// entitySource is e's source: its table, or, when columns are read as
// text (e.Casts), a query of the table's columns with those cast.
func entitySource(e *BoundEntity) mapping.Source {
	if len(e.Casts) == 0 {
		return sourceOf(e.Table)
	}
	var cols []string
	for _, c := range e.Table.Columns {
		q := pgx.Identifier{c.Name}.Sanitize()
		if slices.Contains(e.Casts, c.Name) {
			q += "::text AS " + q
		}
		cols = append(cols, q)
	}
	return mapping.Source{Query: fmt.Sprintf("SELECT %s FROM %s", strings.Join(cols, ", "), e.Table.Ident())}
}

// numericScale is the s of a numeric(p,s) type, or 0.
func numericScale(typ string) int {
	_, sc, ok := strings.Cut(strings.TrimSuffix(typ, ")"), ",")
	if !ok || !strings.HasPrefix(typ, "numeric(") {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(sc))
	return n
}
