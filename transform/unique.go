package transform

import (
	"strings"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// KeysUnique reports, per plan, whether no two rows of the run can render
// the same primary key when one of the rows is of that plan's entity, so
// that the pipeline's run-wide duplicate check, the one part of a run whose
// memory grows with the table, can leave the entity out. It is a proof from
// the mapping and the source's schema, never a guess; an entity is proven
// when:
//
//   - its source is a table, it has no mirror item, and all the columns of
//     its primary key or of one of its unique indexes (Sources.Unique; a
//     NULL in a key rejects the row, so no NOT NULL is needed) appear in
//     its key templates, each of which can be read back into its columns'
//     values (a placeholder is last, followed only by literals, or
//     followed by a literal whose first byte its type's key text never
//     holds, as "#" after an integer, numeric, uuid, boolean, date or
//     timestamp), and the key text of the columns' types is distinct for
//     distinct values;
//   - and its keys cannot meet any other entity's (nor a mirror's): the
//     literal prefixes of the partition keys, or of the sort keys, differ
//     so that neither is a prefix of the other ("ORG#" and "USER#").
//
// Anything else (a query source, a text column in the middle of a
// template, two entities sharing a prefix) keeps the check
// (docs/reliability.md).
func KeysUnique(m *mapping.Mapping, plans []*Plan) []bool {
	out := make([]bool, len(plans))
	for i, p := range plans {
		if p == nil || !p.injectiveKeys() {
			continue
		}
		out[i] = true
		for j, o := range plans {
			if j != i && KeysMayMeet(p, o) {
				out[i] = false
			}
		}
	}
	return out
}

// keyPairs returns the (partition key, sort key) templates of the plan's
// items: its own, and its mirror's; the sort key's is the zero keyPlan
// (no parts: it renders "" for every row) when the table has none.
func (p *Plan) keyPairs() [][2]keyPlan {
	var own, mirror [2]keyPlan
	var nOwn, nMirror int
	for _, k := range p.keys {
		switch {
		case k.gsi == "" && nOwn < 2:
			own[nOwn] = k
			nOwn++
		case k.gsi == mirrorKey && nMirror < 2:
			mirror[nMirror] = k
			nMirror++
		}
	}
	pairs := [][2]keyPlan{own}
	if nMirror > 0 {
		pairs = append(pairs, mirror)
	}
	return pairs
}

// tableKeys returns the key plans of the item's primary key: its partition
// key and, when the table has one, its sort key (the leading plans of
// p.keys, whose gsi is "").
func (p *Plan) tableKeys() []keyPlan {
	n := 0
	for n < len(p.keys) && n < 2 && p.keys[n].gsi == "" {
		n++
	}
	return p.keys[:n]
}

// injectiveKeys reports whether distinct rows of the plan's table always
// render distinct (partition key, sort key) pairs.
func (p *Plan) injectiveKeys() bool {
	if p.entity.Mirror != nil || p.entity.Source.IsQuery() {
		return false
	}
	used := map[int]bool{}
	for _, k := range p.tableKeys() {
		if !decodable(p, k) {
			return false
		}
		for _, part := range k.parts {
			if part.col >= 0 && part.col < len(p.cols) { // a column of the table, not a duplicated one
				used[part.col] = true
			}
		}
	}
	usedName := map[string]bool{}
	for i := range used {
		usedName[p.cols[i].Name] = true
	}
	var pk []string
	for _, c := range p.cols {
		if c.PrimaryKey {
			pk = append(pk, c.Name)
		}
	}
	keys := []extract.UniqueKey{{Columns: pk}}
	if len(pk) == 0 {
		keys = nil
	}
	for _, k := range append(keys, p.unique...) {
		all := len(k.Columns) > 0
		for _, c := range k.Columns {
			all = all && usedName[c]
		}
		if all {
			return true
		}
	}
	return false
}

// decodable reports whether template k's rendering can be split back into
// its placeholders' texts, each of them being distinct for distinct values.
func decodable(p *Plan, k keyPlan) bool {
	for j, part := range k.parts {
		if part.isLiteral() || part.id >= 0 {
			continue // a stable ID has a fixed length: it splits off
		}
		c, _ := p.valueColumn(part.col)
		chars, ok := keyTextChars[c.Type]
		if !ok || c.AsText || c.Array || k.lower && chars == "" {
			return false // lower-cased text: "A" and "a" share a key
		}
		rest := k.parts[j+1:]
		if onlyLiterals(rest) {
			continue // the last placeholder: the rest is a fixed suffix
		}
		if chars == "" || !rest[0].isLiteral() || rest[0].literal == "" || strings.IndexByte(chars, rest[0].literal[0]) >= 0 {
			return false
		}
	}
	return true
}

func onlyLiterals(parts []keyPart) bool {
	for _, p := range parts {
		if !p.isLiteral() {
			return false
		}
	}
	return true
}

// keyTextChars holds, per type whose key text is distinct for distinct
// values, the bytes that text can hold; "" means any (text).
var keyTextChars = map[string]string{
	"int2": "-0123456789", "int4": "-0123456789", "int8": "-0123456789",
	"numeric": "-.0123456789", "uuid": "-0123456789abcdef", "bool": "truefals",
	"date": "-0123456789", "timestamp": "-:.T0123456789", "timestamptz": "-:.TZ0123456789",
	"text": "", "varchar": "", "bpchar": "",
}

// disjoint reports whether two key templates can never render the same
// text: their leading literals differ before either ends.
func disjoint(a, b keyPlan) bool {
	pa, fullA := literalPrefix(a)
	pb, fullB := literalPrefix(b)
	if fullA && fullB {
		return pa != pb
	}
	return !strings.HasPrefix(pa, pb) && !strings.HasPrefix(pb, pa)
}

// literalPrefix returns the literal text a template starts with, and
// whether that is the whole template.
func literalPrefix(k keyPlan) (string, bool) {
	var b strings.Builder
	for _, part := range k.parts {
		if !part.isLiteral() {
			return b.String(), false
		}
		b.WriteString(part.literal)
	}
	return b.String(), true
}
