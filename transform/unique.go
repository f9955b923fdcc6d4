package transform

import (
	"strings"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// KeysUnique reports, per plan, whether no two rows of a run can render the
// same primary key when one is that plan's entity's, so the run-wide duplicate
// check (the one part of a run whose memory grows with the table) can leave the
// entity out. It is a proof from the mapping and schema, never a guess. An
// entity is proven when its source is a table without a mirror item whose
// primary key or a unique index (Sources.Unique; a NULL key rejects the row)
// appears wholly in its key templates, each decodable back into column values
// (a placeholder last, or followed by a literal whose first byte its type's key
// text never holds, as "#" after an integer, uuid or timestamp) with distinct
// key text for distinct values; and its keys cannot meet another entity's or
// mirror's, their literal partition or sort key prefixes differing so neither
// is a prefix of the other ("ORG#", "USER#"). Anything else keeps the check
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

// keyPairs returns the (partition, sort) key templates of the plan's items and
// mirror; the sort key is the zero keyPlan (rendering "") without a table sort
// key.
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

// tableKeys returns the primary key's plans: p.keys' leading entries, whose gsi
// is "".
func (p *Plan) tableKeys() []keyPlan {
	n := 0
	for n < len(p.keys) && n < 2 && p.keys[n].gsi == "" {
		n++
	}
	return p.keys[:n]
}

// injectiveKeys reports whether distinct rows always render distinct
// (partition, sort) pairs.
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

// decodable reports whether k's rendering splits back into placeholder texts,
// each distinct for distinct values.
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

// keyTextChars holds, per type with injective key text, the bytes that text can
// hold; "" means any.
var keyTextChars = map[string]string{
	"int2": "-0123456789", "int4": "-0123456789", "int8": "-0123456789",
	"numeric": "-.0123456789", "uuid": "-0123456789abcdef", "bool": "truefals",
	"date": "-0123456789", "timestamp": "-:.T0123456789", "timestamptz": "-:.TZ0123456789",
	"text": "", "varchar": "", "bpchar": "",
}

// disjoint reports whether two templates' leading literals differ before either
// ends.
func disjoint(a, b keyPlan) bool {
	pa, fullA := literalPrefix(a)
	pb, fullB := literalPrefix(b)
	if fullA && fullB {
		return pa != pb
	}
	return !strings.HasPrefix(pa, pb) && !strings.HasPrefix(pb, pa)
}

// literalPrefix returns a template's leading literal and whether that is all of
// it.
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
