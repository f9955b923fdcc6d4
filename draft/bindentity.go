package draft

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// scalarItems are the array item types a set can hold.
var scalarItems = []string{"string", "integer", "float", "decimal", "number", "uuid"}

// entity binds de: its table, then each field, then its key templates.
func (g *binder) entity(de *MCPEntity) *BoundEntity {
	e := &BoundEntity{Design: de, Rename: map[string]string{}, keyName: map[string]keyColumn{}, dup: map[string]bool{}, nullable: map[string]bool{}}
	where := "entity " + de.Name
	switch {
	case g.b.SortKey == "" && de.SKTemplate != "":
		g.unbound(where, "it has an sk_template, and the table has no sort key: remove sk_template, or add a sort_key to table_config")
		return e
	case g.b.SortKey != "" && de.SKTemplate == "":
		g.unbound(where, "it has no sk_template, and the table has a sort key (%s): every item needs one", g.b.SortKey)
		return e
	}
	t, why := g.table(de)
	if t == nil && why == "" {
		return e // ambiguous: unbound already, with the candidates
	}
	if t == nil {
		g.unbound(where, "%s", why)
		return e
	}
	e.Table, e.Why = t, why
	parents, children := g.parents(t), g.children(t)
	for _, f := range de.Fields {
		if why := g.field(e, f, parents, children); why != "" {
			g.unbound(fmt.Sprintf("entity %s, field %s", de.Name, f.Name), "%s", why)
		}
	}
	g.casts(e)
	g.keys(e)
	return e
}

// field binds one field of e, or says why it cannot.
func (g *binder) field(e *BoundEntity, f MCPField, parents, children []link) string {
	t := e.Table
	if c, ok := direct(t, f.Name); ok {
		e.Select = append(e.Select, c)
		if c != f.Name {
			e.Rename[c] = f.Name
		}
		col, _ := t.Column(c)
		if why := fieldFits(f, col); why != "" {
			return fmt.Sprintf("%s.%s: %s", t.Name, c, why)
		}
		if castable(f, col, slices.Contains(allKeyFields(e.Design), f.Name)) {
			e.Casts = append(e.Casts, c)
		}
		e.keyName[f.Name] = keyColumnOf(c, col.Type)
		e.nullable[f.Name] = !col.NotNull
		return ""
	}
	if f.Type == "array" {
		return g.embed(e, f, children)
	}
	if m := countField.FindStringSubmatch(f.Name); m != nil && f.Type != "array" && f.Type != "object" {
		if l, ok := childNamed(children, m[1]+m[2]); ok {
			e.Counts = append(e.Counts, BoundCount{Attr: f.Name, Child: l.Other, Join: l.Join})
			return ""
		}
	}
	if l, c, ok := fromParent(parents, f.Name); ok {
		col, _ := l.Other.Column(c)
		if why := fieldFits(f, col); why != "" {
			return fmt.Sprintf("%s.%s (through %s): %s", l.Other.Name, c, l.Via, why)
		}
		d := e.duplicate(l)
		d.Select = append(d.Select, c)
		if c != f.Name {
			d.Rename[c] = f.Name
		}
		e.keyName[f.Name], e.dup[f.Name] = keyColumnOf(f.Name, col.Type), true
		e.nullable[f.Name] = !l.NotNull
		return ""
	}
	return fmt.Sprintf("%s has no column %s, no parent reached by a foreign key has one (%s), and no child table counts or fills it",
		t.Name, f.Name, names(parents))
}

// duplicate returns e's duplicate of parent l, adding it on first use.
func (e *BoundEntity) duplicate(l link) *BoundDuplicate {
	for _, d := range e.Duplicates {
		if d.Parent == l.Other && slices.Equal(d.Join, l.Join) {
			return d
		}
	}
	d := &BoundDuplicate{Parent: l.Other, Join: l.Join, Rename: map[string]string{}, Via: l.Via}
	e.Duplicates = append(e.Duplicates, d)
	return d
}

// embed fills an array field from the child table it names: a list of its
// rows (their columns but the foreign key's), or, for an array of scalars,
// a set of the one column the child has besides its foreign key (or the
// one named like the field's singular).
func (g *binder) embed(e *BoundEntity, f MCPField, children []link) string {
	l, ok := childNamed(children, f.Name)
	if !ok {
		return fmt.Sprintf("an array, but %s has no column %s and no child table named like it (%s)", e.Table.Name, f.Name, names(children))
	}
	var fkCols, rest []string
	for _, p := range l.Join {
		fkCols = append(fkCols, p[0])
	}
	for _, c := range l.Other.Columns {
		if !slices.Contains(fkCols, c.Name) {
			rest = append(rest, c.Name)
		}
	}
	em := BoundEmbed{Attr: f.Name, Child: l.Other, Join: l.Join, Max: maxChildren(l)}
	if slices.Contains(scalarItems, f.ItemType) {
		col := singularSnake(f.Name)
		if len(rest) == 1 {
			col = rest[0]
		}
		if !slices.Contains(rest, col) {
			return fmt.Sprintf("an array of %s, but its child table %s has several columns besides its foreign key (%s) and none named %s to take the values from",
				f.ItemType, l.Other.Name, strings.Join(rest, ", "), col)
		}
		em.Column = col
		e.Embeds = append(e.Embeds, em)
		return ""
	}
	em.Exclude = fkCols
	for _, k := range l.Other.PrimaryKey {
		if !slices.Contains(fkCols, k) {
			em.OrderBy = append(em.OrderBy, k)
		}
	}
	e.Embeds = append(e.Embeds, em)
	return ""
}

// maxChildren is the most rows one parent has through the child link, as
// measured (0 when not measured).
func maxChildren(l link) int64 {
	for _, fk := range l.Other.ForeignKeys {
		if len(fk.Columns) > 0 && fk.Columns[0] == l.Join[0][0] {
			return fk.Fanout.Max
		}
	}
	return 0
}

func names(ls []link) string {
	if len(ls) == 0 {
		return "there is none"
	}
	var out []string
	for _, l := range ls {
		out = append(out, l.Via)
	}
	return strings.Join(out, "; ")
}

// keys translates the entity's templates: {field} → ${column}, or
// ${field} for a duplicated field. A GSI mapping over a field that is not
// placeable is unbound; the index is sparse when a placeholder may be
// NULL (an optional column, a parent a row may lack).
func (g *binder) keys(e *BoundEntity) {
	de := e.Design
	place := func(f string) (keyColumn, bool) {
		c, ok := e.keyName[f]
		return c, ok
	}
	pk, pkMiss, pkU := translateTemplate(de.PKTemplate, place)
	sk, skMiss, skU := translateTemplate(de.SKTemplate, place)
	switch u, miss := slices.Concat(pkU, skU), slices.Concat(pkMiss, skMiss); {
	case len(u) > 0:
		g.unbound("entity "+de.Name, "its key templates format %s in a way pg2dynamo cannot render (it renders {field} as the field's text, {number:0Nd} and {decimal:0W.Sf} zero-padded)", strings.Join(u, ", "))
		e.Table = nil
		return
	case len(miss) > 0:
		g.unbound("entity "+de.Name, "its key templates hold %s, which are unbound (listed with its fields)", strings.Join(slices.Compact(miss), ", "))
		e.Table = nil
		return
	}
	e.PK, e.SK = g.b.typedTemplate(g.b.PartitionKey, pk), g.b.typedTemplate(g.b.SortKey, sk)
	g.orderNotes(e)
	for _, m := range de.GSIMappings {
		if gsi := g.b.Design.GSI(m.Name); gsi != nil && !slices.ContainsFunc(g.b.GSIs, func(x MCPGSI) bool { return x.Name == m.Name }) {
			continue // the GSI is unbound (binder.gsis)
		}
		if gsi := g.b.Design.GSI(m.Name); gsi != nil && g.b.multi(*gsi) {
			if why := g.multiIndex(e, m, *gsi); why != "" {
				g.unbound(fmt.Sprintf("entity %s, GSI %s", de.Name, m.Name), "%s", why)
			} else {
				e.multi = append(e.multi, m.Name)
			}
			continue
		}
		if m.PKTemplates != nil || m.SKTemplates != nil {
			g.unbound(fmt.Sprintf("entity %s, GSI %s", de.Name, m.Name), "a list of templates for an index whose keys are single attributes")
			continue
		}
		pk, miss, u := translateTemplate(m.PKTemplate, place)
		sk, miss2, u2 := translateTemplate(m.SKTemplate, place)
		if u = append(u, u2...); len(u) > 0 {
			g.unbound(fmt.Sprintf("entity %s, GSI %s", de.Name, m.Name), "its templates format %s in a way pg2dynamo cannot render", strings.Join(u, ", "))
			continue
		}
		if miss = append(miss, miss2...); len(miss) > 0 {
			g.unbound(fmt.Sprintf("entity %s, GSI %s", de.Name, m.Name), "its templates hold %s, which no column of %s gives", strings.Join(miss, ", "), e.Table.Name)
			continue
		}
		gsi := g.b.Design.GSI(m.Name)
		if gsi == nil {
			continue // not in gsi_list: a format error, reported
		} else if gsi.SortKey == "" && sk != "" {
			g.unbound(fmt.Sprintf("entity %s, GSI %s", de.Name, m.Name), "an sk_template for an index without a sort key")
			continue
		}
		pk, sk = g.b.typedTemplate(gsi.PartitionKey, pk), g.b.typedTemplate(gsi.SortKey, sk)
		var why string
		if pk, why = g.tableKeyAttr(e, gsi.PartitionKey, pk); why == "" {
			sk, why = g.tableKeyAttr(e, gsi.SortKey, sk)
		}
		if why != "" {
			g.unbound(fmt.Sprintf("entity %s, GSI %s", de.Name, m.Name), "%s", why)
			continue
		}
		ix := BoundIndex{Name: m.Name, PK: pk, SK: sk}
		for _, f := range slices.Concat(templateFields(m.PKTemplate), templateFields(m.SKTemplate)) {
			ix.Sparse = ix.Sparse || e.nullable[f]
		}
		e.Indexes = append(e.Indexes, ix)
	}
	g.unmappedGSIs(e)
}

// unmappedGSIs puts e in each GSI it does not map whose key attributes are
// all its fields, as DynamoDB indexes the design's items; a field that is
// only part of such a key is unbound.
func (g *binder) unmappedGSIs(e *BoundEntity) {
	de := e.Design
	isField := func(a string) bool {
		return slices.ContainsFunc(de.Fields, func(f MCPField) bool { return f.Name == a })
	}
	for _, gsi := range g.b.GSIs {
		if g.b.multi(gsi) || slices.ContainsFunc(de.GSIMappings, func(m MCPGSIMapping) bool { return m.Name == gsi.Name }) {
			continue
		}
		var fields, missing []string
		for _, a := range []string{gsi.PartitionKey, gsi.SortKey} {
			_, placed := e.keyName[a]
			switch {
			case a == "" || a == g.b.PartitionKey || a == g.b.SortKey:
			case isField(a) && placed:
				fields = append(fields, a)
			default:
				missing = append(missing, a)
			}
		}
		if len(fields) == 0 {
			continue
		}
		if len(missing) > 0 {
			for _, f := range fields {
				e.Select = slices.DeleteFunc(e.Select, func(c string) bool { return cmp.Or(e.Rename[c], c) == f })
				g.unbound(fmt.Sprintf("entity %s, field %s", de.Name, f), "it is a key attribute of GSI %s, which the entity has no mapping for and whose key attribute %s it lacks: the design's code writes it under its own name, which the mapping keeps for the index's keys; map the entity into %s, or rename the field", gsi.Name, strings.Join(missing, ", "), gsi.Name)
			}
			continue
		}
		ix := BoundIndex{Name: gsi.Name}
		for _, a := range []string{gsi.PartitionKey, gsi.SortKey} {
			if !slices.Contains(fields, a) {
				continue
			}
			tpl, _, _ := translateTemplate("{"+a+"}", func(f string) (keyColumn, bool) { c, ok := e.keyName[f]; return c, ok })
			tpl = g.b.typedTemplate(a, tpl)
			if a == gsi.PartitionKey {
				ix.PK = tpl
			} else {
				ix.SK = tpl
			}
			ix.Sparse = ix.Sparse || e.nullable[a]
		}
		e.Indexes = append(e.Indexes, ix)
		e.Notes = append(e.Notes, fmt.Sprintf("In GSI %s, which the design does not map it into: the design's code writes its field %s, the index's key attribute, so DynamoDB indexes its items there too.", gsi.Name, strings.Join(fields, " and ")))
	}
}

// tableKeyAttr is the template a GSI key attribute attr takes from the
// entity's GSI mapping, tpl: "" when attr is one of the table's key
// attributes, which the item writes from its own pk or sk (a mapping
// names it once), as long as tpl renders the same text; else why not.
func (g *binder) tableKeyAttr(e *BoundEntity, attr, tpl string) (string, string) {
	own := map[string]string{g.b.PartitionKey: e.PK, g.b.SortKey: e.SK}
	t, shared := own[attr]
	switch {
	case attr == "" || !shared:
		return tpl, ""
	case tpl == t:
		return "", ""
	}
	return "", fmt.Sprintf("its key attribute %s is the table's, which the item's own key writes as %q, but its template gives %q: one attribute holds one value", attr, t, tpl)
}

// index returns e's templates in the GSI of that name, or nil.
func (e *BoundEntity) index(name string) *BoundIndex {
	for i := range e.Indexes {
		if e.Indexes[i].Name == name {
			return &e.Indexes[i]
		}
	}
	return nil
}

// attrs are the attribute names e writes besides its keys.
func (e *BoundEntity) attrs() []string {
	var out []string
	for _, c := range e.Select {
		out = append(out, cmp.Or(e.Rename[c], c))
	}
	for _, d := range e.Duplicates {
		for _, c := range d.Select {
			out = append(out, cmp.Or(d.Rename[c], c))
		}
	}
	for _, c := range e.Counts {
		out = append(out, c.Attr)
	}
	for _, em := range e.Embeds {
		out = append(out, em.Attr)
	}
	return out
}

// typeAttribute keeps "type" unless an entity writes an attribute of that
// name.
func (g *binder) typeAttribute() {
	g.b.TypeAttribute = freeName(func(n string) bool {
		return slices.ContainsFunc(g.b.Entities, func(e *BoundEntity) bool { return slices.Contains(e.attrs(), n) })
	})
}

// reserve keeps e's attributes off the key and type attributes: a column
// that a key attribute of its own name holds whole (the design's
// partition key attribute user_id = {user_id}) is dropped, as that key
// attribute is the field; another is renamed with a trailing '_'.
func (g *binder) reserve(e *BoundEntity) {
	if e.Table == nil {
		return
	}
	keys := map[string]string{g.b.PartitionKey: e.PK, g.b.SortKey: e.SK}
	for _, ix := range e.Indexes {
		// An empty template is a GSI key attribute that is one of the
		// table's: the item's own key, already in keys.
		gsi := g.b.Design.GSI(ix.Name)
		if ix.PK != "" {
			keys[gsi.PartitionKey] = ix.PK
		}
		if ix.SK != "" {
			keys[gsi.SortKey] = ix.SK
		}
	}
	reserved := func(n string) bool {
		return n == g.b.PartitionKey || n == g.b.SortKey || n == g.b.TypeAttribute || g.keyAttr(n)
	}
	for _, c := range slices.Clone(e.Select) {
		attr := cmp.Or(e.Rename[c], c)
		if !reserved(attr) {
			continue
		}
		if whole(keys[attr], c) {
			e.Select = slices.DeleteFunc(e.Select, func(s string) bool { return s == c })
			delete(e.Rename, c)
			e.Dropped = append(e.Dropped, c)
			as := "its text"
			if g.b.keyType(attr) == mapping.TypeNumber {
				as = "a number"
			}
			e.Notes = append(e.Notes, fmt.Sprintf("%s is not written as an attribute: the key attribute %s is the field (as %s).", c, attr, as))
			continue
		}
		e.Rename[c] = attr + "_"
		e.Notes = append(e.Notes, fmt.Sprintf("Field %s is written as %s_: %s is a key or type attribute.", attr, attr, attr))
	}
}

// keyAttr reports whether n is a key attribute of a GSI rendered from
// templates (a multi-attribute key's are the items' own attributes).
func (g *binder) keyAttr(n string) bool {
	for _, x := range g.b.GSIs {
		if !g.b.multi(x) && (x.PartitionKey == n || x.SortKey == n) {
			return true
		}
	}
	return false
}

// whole reports whether key template text is the placeholder of column c
// alone, so that the key attribute holds the column's value whole.
func whole(text, c string) bool {
	tpl, err := mapping.ParseTemplate(text)
	return err == nil && len(tpl.Parts) == 1 && tpl.Parts[0].Column == c && tpl.Parts[0].Width <= 0
}
