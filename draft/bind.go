package draft

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Bound is one MCPDesign table bound to a Catalog: each entity over the source
// table holding its fields, other fields as strategies (duplicate, count,
// embed), templates and GSI mappings as key templates, GetItem and Query
// patterns as access patterns. What cannot be bound is in Unbound, never
// dropped silently.
type Bound struct {
	Catalog *Catalog
	Design  *MCPTable
	// Table is the DynamoDB table name; PartitionKey, SortKey and GSIs the
	// design's key attributes.
	Table, PartitionKey, SortKey string
	GSIs                         []MCPGSI
	TypeAttribute                string
	Entities                     []*BoundEntity
	Patterns                     []*BoundPattern
	// Unbound lists what the draft lacks in design order: unheld entities,
	// unfilled fields, GSI mappings or patterns over them.
	Unbound []Unbound
	// Untranslated are patterns verify cannot run (writes, Scan, BatchGetItem)
	// with why; the draft comments them.
	Untranslated []string
	// numberKeys are the design's number key attributes (NumberKeys), found
	// once by keyType.
	numberKeys map[string]bool
}

// Unbound is a part of the design the source does not give: where (entity
// Order, field loyalty_points) and why.
type Unbound struct {
	Where, Why string
}

func (u Unbound) String() string { return u.Where + ": " + u.Why }

// BoundEntity is a designed entity and how the source fills it; Table nil when
// no table holds it (then Unbound and commented).
type BoundEntity struct {
	Design *MCPEntity
	Table  *Table
	// Why says how Table was chosen.
	Why     string
	PK, SK  string
	Indexes []BoundIndex
	// Select are the written source columns, Rename those written under the
	// design's name (column → field).
	Select []string
	Rename map[string]string
	// Dropped are columns left out because a same-named key attribute holds
	// them.
	Dropped []string
	// Casts are columns read as text through a query source, so their
	// attributes hold the design's string.
	Casts      []string
	Duplicates []*BoundDuplicate
	Counts     []BoundCount
	Embeds     []BoundEmbed
	Notes      []string
	// keyName gives each key-placeable field its placeholder (source column or
	// duplicated attribute, marked in dup) and whether it is a number.
	keyName map[string]keyColumn
	dup     map[string]bool
	// nullable marks the placeholders that may be NULL (sparse indexes).
	nullable map[string]bool
	// multi are the multi-attribute-key GSIs the items are in (no Indexes
	// entry).
	multi []string
}

// BoundIndex is an entity's key templates in one GSI.
type BoundIndex struct {
	Name, PK, SK string
	Sparse       bool
}

// BoundDuplicate copies columns of a parent row reached by a foreign key.
type BoundDuplicate struct {
	Parent *Table
	// Join pairs each parent column with the entity's column.
	Join   [][2]string
	Select []string
	Rename map[string]string
	Via    string
}

// BoundCount is a count of a child table's rows, kept on the entity.
type BoundCount struct {
	Attr  string
	Child *Table
	// Join pairs each child column with the entity's column.
	Join [][2]string
}

// BoundEmbed is a child table's rows in an array field: a list of maps, or for
// scalars a set of one column.
type BoundEmbed struct {
	Attr    string
	Child   *Table
	Join    [][2]string
	Column  string // the set's column; "" for a list
	OrderBy []string
	Exclude []string
	Max     int64
}

// BoundPattern is a translated access pattern, or one that could not be (Why
// set, KeyCondition empty).
type BoundPattern struct {
	Name, Description, Index, KeyCondition string
	// Filter is filter_expression as the mapping's filter ("" for none).
	Filter string
	Design *MCPPattern
	Entity *MCPEntity
	Why    string
}

// SelectMCPTable returns the design's table of that name, or its only one when
// name is "".
func SelectMCPTable(d *MCPDesign, name string) (*MCPTable, error) {
	var names []string
	for _, t := range d.Tables {
		if t.Config.TableName == name || name == "" && len(d.Tables) == 1 {
			return t, nil
		}
		names = append(names, t.Config.TableName)
	}
	if name == "" {
		return nil, fmt.Errorf("the design has %d tables (%s): choose one with --design-table NAME (one mapping per table)", len(names), strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("the design has no table %q; its tables: %s", name, strings.Join(names, ", "))
}

// link is a table's relationship: to a parent (Join pairs the parent's columns
// with the table's) or from a child.
type link struct {
	Other *Table
	Join  [][2]string
	// Bases are field name starts naming a parent column through this foreign
	// key: the column without _id (author_id → author) or _<parent>_id
	// (owner_user_id → owner).
	Bases []string
	Via   string
	// NotNull: every row has the parent.
	NotNull bool
	// chained: a parent of a parent, whose key the table holds too.
	chained bool
}

type binder struct {
	b *Bound
}

// BindDesign binds designed table t to cat (see Bound); name is the table name
// (default table_name).
func BindDesign(cat *Catalog, t *MCPTable, name string) *Bound {
	b := &Bound{Catalog: cat, Design: t, Table: cmp.Or(name, t.Config.TableName), PartitionKey: t.Config.PartitionKey,
		SortKey: t.Config.SortKey, GSIs: t.GSIs(), TypeAttribute: "type"}
	g := &binder{b: b}
	b.GSIs = g.gsis(b.GSIs)
	for _, de := range t.Entities {
		b.Entities = append(b.Entities, g.entity(de))
	}
	g.typeAttribute()
	for _, e := range b.Entities {
		g.reserve(e)
	}
	for _, e := range b.Entities {
		for i := range e.Design.Patterns {
			g.pattern(e, &e.Design.Patterns[i])
		}
	}
	g.crossPatterns()
	return b
}

func (g *binder) unbound(where, format string, args ...any) {
	g.b.Unbound = append(g.b.Unbound, Unbound{Where: where, Why: fmt.Sprintf(format, args...)})
}

// parents are t's parents through its foreign keys, and through theirs whose
// columns t holds too (a task's tenant, via its project's (tenant_id,
// project_id)).
func (g *binder) parents(t *Table) []link {
	var out []link
	for _, fk := range t.ForeignKeys {
		p := g.b.Catalog.Table(fk.RefSchema, fk.RefTable)
		if p == nil {
			continue
		}
		l := link{Other: p, Via: fmt.Sprintf("%s (%s)", fk.RefTable, strings.Join(fk.Columns, ", ")), NotNull: fk.NotNull()}
		for i, c := range fk.Columns {
			l.Join = append(l.Join, [2]string{fk.RefColumns[i], c})
		}
		l.Bases = bases(fk, p)
		out = append(out, l)
		for _, fk2 := range p.ForeignKeys {
			gp := g.b.Catalog.Table(fk2.RefSchema, fk2.RefTable)
			if gp == nil || gp == t {
				continue
			}
			l2 := link{Other: gp, Via: fmt.Sprintf("%s, through %s", fk2.RefTable, l.Via), NotNull: l.NotNull && fk2.NotNull(), chained: true}
			for i, c := range fk2.Columns {
				j := slices.IndexFunc(l.Join, func(p [2]string) bool { return p[0] == c })
				if j < 0 {
					l2.Join = nil
					break
				}
				l2.Join = append(l2.Join, [2]string{fk2.RefColumns[i], l.Join[j][1]})
			}
			if len(l2.Join) == len(fk2.Columns) {
				out = append(out, l2)
			}
		}
	}
	// Direct parents first, then those every row has.
	slices.SortStableFunc(out, func(a, b link) int {
		return cmp.Or(compareBool(a.chained, b.chained), compareBool(!a.NotNull, !b.NotNull))
	})
	return out
}

// bases are the name starts for parent p's columns through fk: the
// parent-naming column of fk (not the tenant one) without _<p's singular>_id
// (owner_user_id → owner) or _id (author_id → author).
func bases(fk *ForeignKey, p *Table) []string {
	var own []string
	for i, c := range fk.Columns {
		if c != fk.RefColumns[i] || len(fk.Columns) == 1 {
			own = append(own, c)
		}
	}
	if len(own) != 1 {
		return nil
	}
	var out []string
	c := strings.ToLower(own[0])
	for _, suf := range []string{"_" + singularSnake(p.Name) + "_id", "_id"} {
		if b, ok := strings.CutSuffix(c, suf); ok && b != "" {
			out = append(out, b)
		}
	}
	return out
}

// children are the tables with a foreign key to t.
func (g *binder) children(t *Table) []link {
	var out []link
	for _, c := range g.b.Catalog.Tables {
		for _, fk := range c.ForeignKeys {
			if g.b.Catalog.Table(fk.RefSchema, fk.RefTable) != t {
				continue
			}
			l := link{Other: c, Via: fmt.Sprintf("%s (%s)", c.Name, strings.Join(fk.Columns, ", "))}
			for i, col := range fk.Columns {
				l.Join = append(l.Join, [2]string{col, fk.RefColumns[i]})
			}
			l.Bases = []string{strings.ToLower(fk.Columns[0])}
			out = append(out, l)
		}
	}
	return out
}

// direct finds field f among t's columns: column f, else c for <t's singular>_c
// (product_name → products.name).
func direct(t *Table, f string) (string, bool) {
	if _, ok := t.Column(f); ok {
		return f, true
	}
	if c, ok := strings.CutPrefix(f, singularSnake(t.Name)+"_"); ok {
		if _, ok := t.Column(c); ok {
			return c, true
		}
	}
	return "", false
}

// fromParent finds f in a parent: a column named via the foreign key
// (author_handle → users.handle), the parent (user_handle) or f itself (email).
func fromParent(parents []link, f string) (link, string, bool) {
	for _, pass := range []int{0, 1, 2} {
		for _, l := range parents {
			var c string
			switch pass {
			case 0:
				for _, b := range l.Bases {
					if rest, ok := strings.CutPrefix(f, b+"_"); ok {
						c = rest
					}
				}
			case 1:
				c, _ = strings.CutPrefix(f, singularSnake(l.Other.Name)+"_")
			case 2:
				c = f
			}
			if _, ok := l.Other.Column(c); ok && c != "" {
				return l, c, true
			}
		}
	}
	return link{}, "", false
}

var countField = regexp.MustCompile(`^(?:(.+)_count|num_(.+))$`)

// childNamed finds the child table a field names: by singular matching the
// child's last words (lines → order_lines) or first words (player →
// player_achievements), else by the child's other foreign key (a user's
// followers: follows rows reaching the user via followee_id).
func childNamed(children []link, name string) (link, bool) {
	s := singularSnake(name)
	for _, l := range children {
		c := singularSnake(l.Other.Name)
		if c == s || strings.HasSuffix(c, "_"+s) || strings.HasPrefix(c, s+"_") {
			return l, true
		}
	}
	for _, l := range children {
		for _, fk := range l.Other.ForeignKeys {
			if len(fk.Columns) == 1 && fk.Columns[0] != l.Join[0][0] && strings.ToLower(fk.Columns[0]) == s+"_id" {
				return l, true
			}
		}
	}
	return link{}, false
}

// keyOf reports whether cols hold a unique key of t, so no two rows render one
// item key.
func keyOf(t *Table, cols []string) bool {
	for _, k := range append([][]string{t.PrimaryKey}, t.Uniques...) {
		if len(k) > 0 && subset(k, cols) {
			return true
		}
	}
	return false
}

// keyFields are the fields of the entity's table keys.
func keyFields(de *MCPEntity) []string {
	return slices.Concat(templateFields(de.PKTemplate), templateFields(de.SKTemplate))
}

// fit measures how well t holds de: placeable key fields holding a key of t,
// fields that are t's columns, name match.
func (g *binder) fit(de *MCPEntity, t *Table) (keys bool, cols, name int) {
	parents := g.parents(t)
	var keyCols []string
	keys = true
	for _, f := range keyFields(de) {
		if c, ok := direct(t, f); ok {
			keyCols = append(keyCols, c)
		} else if _, _, ok := fromParent(parents, f); !ok {
			keys = false
		}
	}
	keys = keys && keyOf(t, keyCols)
	for _, f := range de.Fields {
		if _, ok := direct(t, f.Name); ok {
			cols++
		}
	}
	return keys, cols, nameMatch(de.Name, t.Name)
}

// How an entity's name matches a table's, best first.
const (
	nameNone    = iota
	namePart    // a word of one is the other: CustomerOrder and orders
	nameLoose   // alike but for case, word breaks and singular or plural: Title and titles
	nameExactly // the same text: titles and titles
)

// nameMatch is how entity name en matches table name tn.
func nameMatch(en, tn string) int {
	if en == tn {
		return nameExactly
	}
	e, t := singularSnake(strings.ToLower(asciiSnake(en))), singularSnake(strings.ToLower(asciiSnake(tn)))
	switch {
	case e == t:
		return nameLoose
	case slices.Contains(strings.Split(e, "_"), t) || strings.HasSuffix(e, "_"+t) || strings.HasPrefix(e, t+"_") ||
		strings.HasSuffix(t, "_"+e) || strings.HasPrefix(t, e+"_"):
		return namePart
	}
	return nameNone
}

// candidate is a table that could hold an entity, with the evidence.
type candidate struct {
	t          *Table
	keys       bool
	cols, name int
}

func (c candidate) evidence(de *MCPEntity) string {
	how := map[int]string{nameExactly: "named exactly so", nameLoose: "named alike (case, singular or plural)", namePart: "named in part alike", nameNone: "not named alike"}[c.name]
	return fmt.Sprintf("%s (%d of its %d fields are columns, %s)", c.t.Name, c.cols, len(de.Fields), how)
}

// table chooses de's source table among those whose columns hold its key
// fields, none a column of lists: named as the entity, else alike but for case
// and number (Titles → titles), else the most fields as columns. A tie or near
// miss leaves de unbound, listing candidates, and returns "" as why.
func (g *binder) table(de *MCPEntity) (*Table, string) {
	var cands []candidate
	var best candidate
	for _, t := range g.b.Catalog.Tables {
		k, c, n := g.fit(de, t)
		cands = append(cands, candidate{t, k, c, n})
		if best.t == nil || cmp.Or(compareBool(k, best.keys), cmp.Compare(c, best.cols)) > 0 {
			best = candidate{t, k, c, n}
		}
	}
	var holding []candidate
	var lists []string // the candidates left out for a key column of lists
	for _, c := range cands {
		if !c.keys || c.cols == 0 {
			continue
		}
		if why := listKey(de, c.t); why != "" {
			lists = append(lists, why)
			continue
		}
		holding = append(holding, c)
	}
	if len(holding) == 0 && len(lists) > 0 {
		g.unbound("entity "+de.Name, "%s: a key would hold the whole list, where the design means an item per element, which only a child table of one row per element gives", strings.Join(lists, "; "))
		return nil, ""
	}
	switch {
	case best.t == nil || best.cols == 0:
		return nil, "no table of the source has any of its fields as a column"
	case len(holding) == 0:
		return nil, fmt.Sprintf("no table holds its key fields (%s) as a key of its rows: %s has the most of its fields (%d of %d), but its key (%s) is not among them, so rows would share an item key",
			strings.Join(keyFields(de), ", "), best.t.Name, best.cols, len(de.Fields), strings.Join(best.t.PrimaryKey, ", "))
	}
	slices.SortStableFunc(holding, func(a, b candidate) int {
		an, bn := a.name, b.name
		if an < nameLoose {
			an = nameNone // a partial name match decides nothing
		}
		if bn < nameLoose {
			bn = nameNone
		}
		return cmp.Or(cmp.Compare(bn, an), cmp.Compare(b.cols, a.cols))
	})
	top := holding[0]
	var tied []candidate
	for _, c := range holding[1:] {
		sameName := c.name == top.name || c.name < nameLoose && top.name < nameLoose
		if sameName && c.cols == top.cols {
			tied = append(tied, c)
		}
	}
	if len(tied) > 0 {
		var ev []string
		for _, c := range append([]candidate{top}, tied...) {
			ev = append(ev, c.evidence(de))
		}
		g.unbound("entity "+de.Name, "%d tables hold its key fields (%s) equally well: %s; name the entity as its table, or leave the others out (--exclude)",
			len(ev), strings.Join(keyFields(de), ", "), strings.Join(ev, "; "))
		return nil, ""
	}
	why := fmt.Sprintf("%d of its %d fields are columns of %s, and its key fields (%s) hold a key of its rows", top.cols, len(de.Fields), top.t.Name, strings.Join(keyFields(de), ", "))
	switch top.name {
	case nameExactly:
		why = "named exactly so; " + why
	case nameLoose:
		why = "named alike; " + why
	}
	return top.t, why
}

// listKey says which key field of de is a column of lists in t, or "".
func listKey(de *MCPEntity, t *Table) string {
	for _, f := range keyFields(de) {
		if c, ok := direct(t, f); ok && t.Delimited[c] != "" {
			return fmt.Sprintf("its key field %s would be %s.%s, a text column of lists (%q)", f, t.Name, c, t.Delimited[c])
		}
	}
	return ""
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
