package transform

import (
	"fmt"
	"slices"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// compiler is what compile checks one entity against and has found: problems in
// order, the source columns to read, and attribute names taken.
type compiler struct {
	m    *mapping.Mapping
	e    *mapping.Entity
	ep   string // the entity's dotted path, entities.<name>
	srcs Sources
	cols []extract.Column // of the entity's own source: srcs.Columns
	// byName indexes cols by name (the last of two).
	byName map[string]int
	need   map[string]bool
	// reserved are the key and type attributes; attrOf says what claimed each
	// attribute name.
	reserved []string
	attrOf   map[string]string
	errs     mapping.Errors
}

// newCompiler returns the compiler of e, having checked the source's column
// names are distinct.
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

func (c *compiler) add(path, format string, args ...any) {
	c.errs = append(c.errs, c.m.Errorf(path, format, args...))
}

// known reports whether col is an own source column, recording a problem at
// path if not.
func (c *compiler) known(path, col string) bool {
	if _, ok := c.byName[col]; ok {
		return true
	}
	c.add(path, "unknown column %q%s; %s has columns: %s", col, columnHint(col, c.cols), c.e.Source, columnList(c.cols))
	return false
}

func (c *compiler) knownNeeded(path, col string) bool {
	if c.known(path, col) {
		c.need[col] = true
		return true
	}
	return false
}

// unknownOwn reports an unknown own column, with chooseAttributes' unknown
// signature.
func (c *compiler) unknownOwn(path, col string, _ []extract.Column) { c.known(path, col) }

// unknown reports col at path as not one of in (another source's columns).
func (c *compiler) unknown(path, col string, in []extract.Column) {
	c.add(path, "unknown column %q%s; it has columns: %s", col, columnHint(col, in), columnList(in))
}

// claim reserves attribute name attr for what (`column "email"`), or records
// why not: empty, key or type attribute, or taken.
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

// chooseAttributes returns the own columns that become attributes, names
// claimed and marked read, and the c.cols indexes of those written as sets.
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

// checkKeyTemplates marks read the primary key (naming a row in rejects) and
// the key templates' columns. A placeholder names a source column, else a
// stable ID, else a duplicated column; anything else is a problem.
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

// readColumns sets p.cols to the needed columns in source order, points the
// stable IDs at them, and returns each one's p.cols index by its cols index.
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

// buildKeys sets p.keys from templates, resolving placeholders against p's
// columns and IDs.
func (c *compiler) buildKeys(p *Plan, templates []keyTemplate) {
	for _, kt := range templates {
		p.keys = append(p.keys, buildKey(kt, func(name string) (keyValue, keyFormats, bool) {
			kv, ok := p.keyValue(name)
			return kv, p.formats, ok
		}, c.add))
	}
}

// findKeyCols sets p.keyCols, naming a row in rejects: primary key, then own
// key columns.
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

// findSameKeys points each non-mirror key plan at the first earlier one with
// the same parts, to reuse its text.
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

// addAttrPlans appends the chosen columns' plans to p.attrs; remap is
// readColumns'.
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

// findKinds sets p.kinds and p.texts for each row value (columns, then joins),
// kindless for an array.
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

// measureItems sets what Builder needs for sizing: typeSize, sizeByParts,
// gsiAttrs, and mapSize (compile adds the joins' attributes).
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
