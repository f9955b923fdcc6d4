package transform

import (
	"fmt"
	"slices"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// compiler is what compile checks one entity against, and what it has found
// so far: the problems (as mapping errors, in the order found), the columns
// of the entity's source the plan must read, and the attribute names taken.
type compiler struct {
	m    *mapping.Mapping
	e    *mapping.Entity
	ep   string // the entity's dotted path, entities.<name>
	srcs Sources
	cols []extract.Column // of the entity's own source: srcs.Columns
	// byName indexes cols by name (the last of two of the same name).
	byName map[string]int
	// need holds the names of the columns the plan reads.
	need map[string]bool
	// reserved are the key and type attributes; attrOf says what writes
	// each attribute name claimed so far.
	reserved []string
	attrOf   map[string]string
	errs     mapping.Errors
}

// newCompiler returns the compiler of entity e of m, whose sources are
// srcs, having checked that the source's column names are distinct.
func newCompiler(m *mapping.Mapping, e *mapping.Entity, srcs Sources) *compiler {
	c := &compiler{m: m, e: e, ep: mapping.Path(mapping.KeyEntities, e.Name), srcs: srcs, cols: srcs.Columns,
		byName: map[string]int{}, need: map[string]bool{}, attrOf: map[string]string{},
		reserved: append(append(m.KeyAttributes(), m.TypeAttribute), m.LibraryAttributes()...)}
	for i, col := range c.cols {
		if _, dup := c.byName[col.Name]; dup {
			c.add(mapping.Path(c.ep, mapping.KeySource), "the source has two columns named %q: give them distinct names", col.Name)
		}
		c.byName[col.Name] = i
	}
	return c
}

// add records a problem at path of the mapping.
func (c *compiler) add(path, format string, args ...any) {
	c.errs = append(c.errs, c.m.Errorf(path, format, args...))
}

// known reports whether col is a column of the entity's source, and records
// a problem at path if it is not.
func (c *compiler) known(path, col string) bool {
	if _, ok := c.byName[col]; ok {
		return true
	}
	c.add(path, "unknown column %q%s; %s has columns: %s", col, columnHint(col, c.cols), c.e.Source, columnList(c.cols))
	return false
}

// knownNeeded is known, and marks a known column read.
func (c *compiler) knownNeeded(path, col string) bool {
	if c.known(path, col) {
		c.need[col] = true
		return true
	}
	return false
}

// unknownOwn reports an unknown column of the entity's own source, as
// known does; it has the signature of chooseAttributes' unknown.
func (c *compiler) unknownOwn(path, col string, _ []extract.Column) { c.known(path, col) }

// unknown reports col, at path, as not one of in (another source's
// columns).
func (c *compiler) unknown(path, col string, in []extract.Column) {
	c.add(path, "unknown column %q%s; it has columns: %s", col, columnHint(col, in), columnList(in))
}

// claim reserves attribute name attr for what (say, `column "email"`), or
// records at path why it cannot have it: empty, a key or type attribute,
// or already claimed.
func (c *compiler) claim(path, attr, what string) bool {
	switch {
	case attr == "":
		c.add(path, "empty attribute name for %s", what)
	case slices.Contains(c.reserved, attr):
		c.add(path, "%s would overwrite the key or type attribute %q: rename it or exclude it", what, attr)
	case c.attrOf[attr] != "":
		c.add(path, "%s and %s both become attribute %q", c.attrOf[attr], what, attr)
	default:
		c.attrOf[attr] = what
		return true
	}
	return false
}

// chooseAttributes returns the columns of the entity's source that become
// attributes (all, or the selected ones, minus the excluded, renamed),
// having claimed their names and marked them read, and the indexes in
// c.cols of those written as sets.
func (c *compiler) chooseAttributes() ([]chosenAttr, map[int]bool) {
	ap := mapping.Path(c.ep, mapping.KeyAttributes)
	var chosen []chosenAttr
	sets := compileSets(c.cols, c.e.Attributes, ap, c.add, c.unknownOwn)
	for _, a := range chooseAttributes(c.cols, c.e.Attributes, ap, c.unknownOwn) {
		if c.claim(ap, a.name, fmt.Sprintf("column %q", c.cols[a.col].Name)) {
			chosen = append(chosen, a)
			c.need[c.cols[a.col].Name] = true
		}
	}
	return chosen, sets
}

// checkKeyTemplates marks read the table's primary key (which names a row
// in rejects) and the columns the entity's key templates use. A placeholder names a column of the source, else a stable
// ID, else a column a duplicate of p copies; anything else is a problem.
func (c *compiler) checkKeyTemplates(p *Plan, templates []keyTemplate) {
	for _, col := range c.cols {
		if col.PrimaryKey {
			c.need[col.Name] = true
		}
	}
	for _, kt := range templates {
		for _, col := range kt.Template.Columns() {
			switch _, own := c.byName[col]; {
			case own:
				c.need[col] = true
			case c.e.IDs[col] != nil:
			case p.Duplicates(col):
			default:
				c.add(kt.Path, "unknown column %q%s; %s has columns: %s%s", col, columnHint(col, c.cols), c.e.Source, columnList(c.cols), p.keyExtras())
			}
		}
	}
}

// readColumns sets p.cols to the columns of cols that need names, in
// source order, and points p's stable IDs at them. It returns each read
// column's index in p.cols by its index in cols.
func (p *Plan) readColumns(cols []extract.Column, need map[string]bool) map[int]int {
	remap := map[int]int{}
	for i, c := range cols {
		if need[c.Name] {
			remap[i] = len(p.cols)
			p.cols = append(p.cols, c)
		}
	}
	for i := range p.ids {
		p.ids[i].time = remap[p.ids[i].time]
		for j := range p.ids[i].from {
			p.ids[i].from[j] = remap[p.ids[i].from[j]]
		}
	}
	return remap
}

// buildKeys sets p.keys to the key plans of templates, placeholders
// resolved against p's columns and IDs; problems go to c.
func (c *compiler) buildKeys(p *Plan, templates []keyTemplate) {
	for _, kt := range templates {
		p.keys = append(p.keys, buildKey(kt, func(name string) (keyValue, keyFormats, bool) {
			kv, ok := p.keyValue(name)
			return kv, p.formats, ok
		}, c.add))
	}
}

// findKeyCols sets p.keyCols, the columns that name a row in rejects: the
// table's primary key, then the columns of the item's own key.
func (p *Plan) findKeyCols() {
	for i, c := range p.cols {
		if c.PrimaryKey {
			p.keyCols = append(p.keyCols, i)
		}
	}
	for _, k := range p.tableKeys() {
		for _, part := range k.parts {
			if part.col >= 0 && part.col < len(p.cols) && !slices.Contains(p.keyCols, part.col) {
				p.keyCols = append(p.keyCols, part.col)
			}
		}
	}
}

// findSameKeys points each key plan but the mirror's at the first earlier
// one with the same parts (keyPlan.same), whose text it can reuse.
func (p *Plan) findSameKeys() {
	for i := range p.keys {
		if p.keys[i].gsi == mirrorKey {
			continue
		}
		for j := range i {
			if p.keys[j].gsi != mirrorKey && sameParts(p.keys[i].parts, p.keys[j].parts) {
				p.keys[i].same = j
				break
			}
		}
	}
}

// addAttrPlans appends to p.attrs the plans of the chosen columns of cols
// (sets by index in cols as written as sets); remap is readColumns'.
func (p *Plan) addAttrPlans(chosen []chosenAttr, sets map[int]bool, cols []extract.Column, remap map[int]int) {
	for _, a := range chosen {
		c := cols[a.col]
		if sets[a.col] {
			p.attrs = append(p.attrs, setAttrPlan(remap[a.col], a.name, c))
			continue
		}
		k := scalarFor(c.Type, c.AsText).kind
		p.attrs = append(p.attrs, attrPlan{col: remap[a.col], name: a.name, convert: columnAttr(c),
			nested: c.Array || c.Type == "json" || c.Type == "jsonb",
			kind:   k, array: c.Array, textual: textual(k)})
	}
}

// findKinds sets p.kinds and p.texts: the kind and text function of each
// value of a row (its columns, then the joins' values), kindless for an
// array.
func (p *Plan) findKinds() {
	for i := range len(p.cols) + p.joinWidth() {
		c, ok := p.valueColumn(i)
		s := scalarFor(c.Type, c.AsText)
		if !ok || c.Array {
			s = scalar{}
		}
		p.kinds = append(p.kinds, s.kind)
		p.texts = append(p.texts, s.text)
	}
}

// measureItems sets what Builder needs to know of the size of p's items:
// typeSize, sizeByParts, gsiAttrs, and mapSize counting the attributes,
// IDs, type and keys (the joins' attributes are added by compile).
func (p *Plan) measureItems() {
	p.mapSize = len(p.attrs) + len(p.ids) + 1
	p.typeSize = len(p.typeAttr) + valueSize(p.typeVal)
	p.sizeByParts = len(p.joins) == 0
	names := []string{p.typeAttr}
	for _, k := range p.keys {
		if k.gsi == mirrorKey {
			continue
		}
		p.mapSize++
		if k.gsi != "" {
			p.gsiAttrs = append(p.gsiAttrs, k.attr)
		}
		if slices.Contains(names, k.attr) {
			p.sizeByParts = false
		}
		names = append(names, k.attr)
	}
}
