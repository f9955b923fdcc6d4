package draft

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
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
// it can: the generated code parses each item's attribute as the field's
// type, so the column's values must be of it. An integer field takes an
// integer column (or numeric without a fraction); a decimal one any
// number; a boolean one a boolean; a uuid one a uuid or text; an array
// an array, json or jsonb; an object json or jsonb; a string any column
// but an array, json, jsonb or bytea (a number's or a date's text is the
// string a client reads; the item then holds the column's own type, see
// the entity's notes).
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

// orderNotes notes, on an entity whose sort keys (the table's, or a
// GSI's) hold a number as plain digits, that those keys sort as text: the
// design's code writes {field} with Python's str(), and so does the draft,
// so a Query's order and its range conditions compare "10" before "9".
// The draft keeps the design's text; padding is the design's choice, as a
// format spec ({field:010d}), which the draft then renders too.
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
	if g.b.SortKey != "" {
		add(g.b.SortKey, de.SKTemplate)
	}
	for _, m := range de.GSIMappings {
		if gsi := g.b.Design.GSI(m.Name); gsi != nil && gsi.SortKey != "" {
			add(gsi.SortKey, m.SKTemplate)
		}
	}
	for _, attr := range slices.Sorted(mapKeys(sorted)) {
		fs := sorted[attr]
		e.Notes = append(e.Notes, fmt.Sprintf("ORDER: sort key %s holds %s, a number written as plain digits, as the design's code writes it: its keys sort as text (10 before 9), so a Query's order and a range condition (>, <, between) on it compare text, not numbers. To sort numerically, pad it in the design ({%s:010d}): init then pads it the same way (${%s:10}).",
			attr, strings.Join(fs, ", "), strings.Trim(fs[0], "{}"), e.keyName[strings.Trim(fs[0], "{}")].Name))
	}
}

// typeNote says, for a string field over a column that is no text (a
// number, a boolean), that its attribute holds the column's own type
// while its key text is the string the design means.
func typeNote(f MCPField, col Column) string {
	if f.Type != "string" || (!numberType(col.Type) && col.Type != "boolean") {
		return ""
	}
	return fmt.Sprintf("TYPE: a string in the design over a column of type %s: its key text is the value's text, as the design's code writes it, but its attribute holds the column's type (N or BOOL); to hold S, read the table through a query source that casts it (%s::text)", col.Type, col.Name)
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
