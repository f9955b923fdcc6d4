package draft

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// A design's GSI with multi-attribute keys (a partition_key or sort_key
// given as a list) is a mapping GSI with partition_keys and sort_keys:
// attributes the items carry. Each attribute is a field the entity writes
// under its own name, and the entity's template for it is that field
// alone, "{field}"; no entity lists the index under indexes.

// multi reports whether the draft writes design GSI x with
// multi-attribute keys: x has them, or shares a key attribute with a GSI
// that has them (one attribute is either the items' own or rendered from
// templates, not both), and is not keyed by the table's key attributes.
func (b *Bound) multi(x MCPGSI) bool {
	if x.MultiAttribute() {
		return true
	}
	if x.PartitionKey == b.PartitionKey || x.PartitionKey == b.SortKey || x.SortKey != "" && (x.SortKey == b.PartitionKey || x.SortKey == b.SortKey) {
		return false
	}
	for _, o := range b.GSIs {
		if !o.MultiAttribute() {
			continue
		}
		for _, a := range slices.Concat(o.PartitionKeys, o.SortKeys, []string{o.PartitionKey, o.SortKey}) {
			if a != "" && (a == x.PartitionKey || a == x.SortKey) {
				return true
			}
		}
	}
	return false
}

// gsis returns the design's GSIs the draft can write: a GSI with
// multi-attribute keys naming one of the table's key attributes (which
// the mapping renders from templates) is unbound, with its entities'
// mappings.
func (g *binder) gsis(all []MCPGSI) []MCPGSI {
	var out []MCPGSI
	for _, x := range all {
		if x.MultiAttribute() {
			pks, sks := x.keyLists()
			if i := slices.IndexFunc(slices.Concat(pks, sks), func(a string) bool { return a == g.b.PartitionKey || a == g.b.SortKey }); i >= 0 {
				g.unbound("GSI "+x.Name, "its key attribute %s is the table's, which pg2dynamo renders from key templates; its multi-attribute keys are the items' own attributes", slices.Concat(pks, sks)[i])
				continue
			}
		}
		out = append(out, x)
	}
	return out
}

// keyLists returns g's partition and sort key attributes as lists (a
// single attribute as a list of one; no sort key as none).
func (g MCPGSI) keyLists() (pks, sks []string) {
	pks, sks = g.PartitionKeys, g.SortKeys
	if pks == nil {
		pks = []string{g.PartitionKey}
	}
	if sks == nil && g.SortKey != "" {
		sks = []string{g.SortKey}
	}
	return pks, sks
}

// templateLists returns m's templates as keyLists returns the attributes.
func (m MCPGSIMapping) templateLists() (pks, sks []string) {
	pks, sks = m.PKTemplates, m.SKTemplates
	if pks == nil {
		pks = []string{m.PKTemplate}
	}
	if sks == nil && m.SKTemplate != "" {
		sks = []string{m.SKTemplate}
	}
	return pks, sks
}

// multiIndex binds e's templates m in gsi, a GSI with multi-attribute
// keys, or says why it cannot: each attribute must be a field e writes
// under that name, and its template that field alone.
func (g *binder) multiIndex(e *BoundEntity, m MCPGSIMapping, gsi MCPGSI) string {
	pks, sks := gsi.keyLists()
	pkT, skT := m.templateLists()
	if len(pkT) != len(pks) || len(skT) > len(sks) {
		return fmt.Sprintf("%d partition and %d sort key templates for an index of %d and %d key attributes", len(pkT), len(skT), len(pks), len(sks))
	}
	if len(skT) < len(sks) {
		return fmt.Sprintf("no template for sort key attribute %s: an item lacking one is not in the index", sks[len(skT)])
	}
	for i, a := range slices.Concat(pks, sks) {
		tpl := slices.Concat(pkT, skT)[i]
		f := templateFields(tpl)
		switch {
		case len(f) != 1 || tpl != "{"+f[0]+"}":
			return fmt.Sprintf("template %q of key attribute %s: a multi-attribute key attribute holds one field's value itself ({field})", tpl, a)
		case f[0] != a:
			return fmt.Sprintf("key attribute %s holds field %s: pg2dynamo writes a field under its own name", a, f[0])
		case !writes(e, a):
			return fmt.Sprintf("field %s, its key attribute %s, is not written (unbound)", a, a)
		}
	}
	return ""
}

// writes reports whether e writes an attribute named a from one of its
// columns.
func writes(e *BoundEntity, a string) bool {
	return slices.ContainsFunc(e.Select, func(c string) bool { return cmp.Or(e.Rename[c], c) == a })
}

// multiKeyAttrs returns gsi's multi-attribute keys as the mapping declares
// them, each typed N when a field of that name is a number (integer or
// decimal) in the design's entities, else S.
func (b *Bound) multiKeyAttrs(gsi MCPGSI) (pks, sks []mapping.KeyAttribute) {
	typed := func(names []string) []mapping.KeyAttribute {
		var out []mapping.KeyAttribute
		for _, n := range names {
			typ := mapping.TypeString
			for _, e := range b.Design.Entities {
				for _, f := range e.Fields {
					if f.Name == n && slices.Contains(numberFieldTypes, f.Type) {
						typ = mapping.TypeNumber
					}
				}
			}
			out = append(out, mapping.KeyAttribute{Name: n, Type: typ})
		}
		return out
	}
	p, s := gsi.keyLists()
	return typed(p), typed(s)
}

// multiCondition is pattern p's key condition on gsi, a GSI with
// multi-attribute keys, for entity e: every partition key attribute with
// =, then as many sort key attributes, from the left, as the pattern has
// parameters left (one fewer for between, whose two bound the last), the
// range condition on the last of them. Each value is the field's column.
func (g *binder) multiCondition(e *BoundEntity, p *MCPPattern, gsi MCPGSI) (string, string) {
	pks, sks := gsi.keyLists()
	nSort := len(p.Parameters) - len(pks)
	if p.RangeCondition == "between" {
		nSort--
	}
	switch {
	case nSort < 0:
		return "", fmt.Sprintf("%d parameters for the %d partition key attributes of %s", len(p.Parameters), len(pks), gsi.Name)
	case nSort > len(sks):
		return "", fmt.Sprintf("%d parameters: more than the %d key attributes of %s", len(p.Parameters), len(pks)+len(sks), gsi.Name)
	case p.RangeCondition != "" && nSort == 0:
		return "", fmt.Sprintf("a %s range condition without a sort key attribute of %s to take it", p.RangeCondition, gsi.Name)
	}
	var terms []string
	for i, a := range slices.Concat(pks, sks[:nSort]) {
		c, ok := e.keyName[a]
		if !ok {
			return "", fmt.Sprintf("field %s, key attribute of %s, is unbound", a, gsi.Name)
		}
		v := "${" + c.Name + "}"
		switch rc := p.RangeCondition; {
		case i < len(pks)+nSort-1 || rc == "":
			terms = append(terms, a+" = "+v)
		case rc == "begins_with":
			terms = append(terms, fmt.Sprintf("begins_with(%s, %s)", a, v))
		case rc == "between":
			terms = append(terms, fmt.Sprintf("%s BETWEEN %s AND %s", a, v, v))
		default:
			terms = append(terms, fmt.Sprintf("%s %s %s", a, rc, v))
		}
	}
	return strings.Join(terms, " AND "), ""
}
