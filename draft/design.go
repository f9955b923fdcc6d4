package draft

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// Design's thresholds: starting points for human review, stated in the drafted
// file's comments.
const (
	// EmbedMaxChildren: a child table is embedded in its parent when no
	// parent has more children than this in the data.
	EmbedMaxChildren = 10
	// EmbedMaxItems is a drafted embed's max_items: twice EmbedMaxChildren,
	// room to grow.
	EmbedMaxItems = 2 * EmbedMaxChildren
	// EmbedMaxBytes bounds a parent's embedded children (average row size ×
	// EmbedMaxItems), well under the 400 KB item limit
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html).
	EmbedMaxBytes = 64 << 10
	// NestMaxAvg: a foreign key averaging more children per parent is a
	// categorization (status, genre), not ownership; keying by it makes large,
	// hot partitions.
	NestMaxAvg = 100
	// GSI is the overloaded index's name, GSIPK and GSISK its keys.
	GSI, GSIPK, GSISK = "GSI1", "GSI1PK", "GSI1SK"
	// KeyGSI is the sparse index of own keys (key KeyGSIPK), where a Child
	// keyed by its owner writes its own TYPE#key.
	KeyGSI, KeyGSIPK = "GSI2", "GSI2PK"
)

// Role is where a table's items live in the drafted design.
type Role int

const (
	// Root: its own item collection, PK = SK = TYPE#key.
	Root Role = iota
	// Owned: its own collection like a root, reached from its owner's through
	// the GSI.
	Owned
	// Child: in the owner's collection (PK = OWNER#key), found by its key via
	// KeyGSI unless that key holds the owner's.
	Child
	// Embedded: no items of its own; the owner's item holds its rows.
	Embedded
	// Join: a two-foreign-key table, as adjacency-list items in the first
	// parent's collection, inverted in the GSI.
	Join
)

// Design is the drafted single-table design of a Catalog.
type Design struct {
	Catalog       *Catalog
	Table         string
	TypeAttribute string
	// Entities in mapping order: roots, then owners before what they own, then
	// join tables.
	Entities []*Entity
	Patterns []*Pattern
	// Skipped are tables left out, each with why.
	Skipped []Skip
	// UsesGSI and UsesKeyGSI say whether any entity writes GSI1, GSI2.
	UsesGSI, UsesKeyGSI bool
}

// Skip is a table Design left out of the mapping.
type Skip struct {
	Table  *Table
	Reason string
}

// Entity is one drafted entity.
type Entity struct {
	// Name is the entity's name and type, Prefix its key prefix: ASCII, unique
	// (designer.names).
	Name   string
	Prefix string
	Table  *Table
	// Key are the identifying columns (primary key, or a unique key of NOT NULL
	// columns).
	Key  []string
	Role Role
	// Owner is the foreign key to a Child's, Owned's or Embedded's parent; Ends
	// a Join's two foreign keys.
	Owner *ForeignKey
	Ends  [2]*ForeignKey
	// PK and SK are the key templates, Index the GSI1 templates, ByKey a
	// Child's GSI2 partition key template.
	PK, SK string
	Index  *Index
	ByKey  string
	// Embeds, Counts and Duplicates are the parent-side strategies.
	Embeds     []*Entity
	Counts     []Count
	Duplicates []Duplicate
	// As is the owner's attribute holding an Embedded table's rows.
	As string
	// Rename renames columns that would clash with key or type attributes.
	Rename map[string]string
	// Exclude are the columns left out (secrets, full-text vectors: leftOut)
	// with why, in column order.
	Exclude []LeftOut
	// Notes are the comment lines written above the entity.
	Notes []string
	owned []*Entity
	// words is the table name as ASCII snake_case (table_N without one); base
	// the lower-case singular the name and prefix come from (order_line).
	words, base string
	// whyNotEmbedded says why a Child is not Embedded.
	whyNotEmbedded string
	// lead starts a Join's sort keys before the other parent's prefix: "" or
	// its own prefix and '#' when another entity has the same keys.
	lead string
	// plain are the columns its key templates write as ${c:0} (plainKeys).
	plain map[string]bool
	// unusable says why each declared foreign key no key template can
	// follow (parentOf nil) cannot.
	unusable map[*ForeignKey]string
}

// Index is an entity's GSI1 key templates and the foreign key they serve.
type Index struct {
	PK, SK string
	Sparse bool
	FK     *ForeignKey
	Parent *Entity
}

// LeftOut is a column left out of an entity's or embed's items, and why.
type LeftOut struct {
	Column, Why string
}

// Count is a count aggregate kept on a parent.
type Count struct {
	Attr  string
	Child *Entity
	FK    *ForeignKey
}

// Duplicate copies a parent's name column onto a child.
type Duplicate struct {
	Parent *Entity
	FK     *ForeignKey
	Column string
	As     string
}

// Pattern is a drafted access pattern.
type Pattern struct {
	Name, Description, Index, KeyCondition string
}

// Options tune Design.
type Options struct {
	// Table is the DynamoDB table name (default: the database's name).
	Table string
	// DuplicateNames copies each owner's name column (name, title, *_name) onto
	// its owned items.
	DuplicateNames bool
}

type designer struct {
	d      *Design
	opts   Options
	byName map[*Table]*Entity
	// cands are each entity's owner candidates (candidates).
	cands map[*Entity][]*ForeignKey
}

// Propose applies the drafting rules to cat. It never fails: a table it cannot
// map (no placeable primary or NOT NULL unique key) goes to Skipped.
func Propose(cat *Catalog, opts Options) *Design {
	d := &Design{Catalog: cat, Table: tableName(opts.Table, cat.Database), TypeAttribute: "type"}
	g := &designer{d: d, opts: opts, byName: map[*Table]*Entity{}, cands: map[*Entity][]*ForeignKey{}}
	var all []*Entity
	for _, t := range cat.Tables {
		key, why := identity(t)
		if key == nil {
			d.Skipped = append(d.Skipped, Skip{t, why})
			continue
		}
		e := &Entity{Table: t, Key: key, Rename: map[string]string{}, plain: map[string]bool{}}
		g.byName[t] = e
		all = append(all, e)
	}
	g.names(all)
	g.plainKeys(all)
	for _, e := range all {
		g.join(e)
	}
	for _, e := range all {
		if e.Role != Join {
			g.cands[e] = g.candidates(e)
		}
	}
	for _, e := range all {
		g.classify(e)
	}
	for _, e := range all {
		g.leaf(e)
	}
	d.Entities = order(all)
	for _, e := range d.Entities {
		g.keys(e)
		g.unusableFKs(e)
	}
	g.distinctKeys()
	for _, e := range d.Entities {
		plainNote(e)
		g.parentSide(e)
	}
	g.typeAttribute()
	for _, e := range all {
		g.exclude(e)
	}
	for _, e := range d.Entities {
		g.patterns(e)
	}
	return d
}

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

func tableName(asked, db string) string {
	if asked != "" {
		return asked
	}
	n := strings.Trim(unsafeName.ReplaceAllString(latin.Replace(db), "-"), "-")
	if n == "" {
		n = "pg2dynamo" // a name of no ASCII letter or digit
	}
	for len(n) < 3 {
		n += "_"
	}
	return n
}

// identity is the primary key, or the first placeable NOT NULL unique key; or
// nil and why none.
func identity(t *Table) ([]string, string) {
	if len(t.PrimaryKey) > 0 && placeable(t.PrimaryKey) && keyable(t, t.PrimaryKey) {
		return t.PrimaryKey, ""
	}
	for _, u := range t.Uniques {
		ok := placeable(u) && keyable(t, u)
		for _, c := range u {
			if col, _ := t.Column(c); !col.NotNull {
				ok = false
			}
		}
		if ok {
			return u, ""
		}
	}
	switch {
	case len(t.PrimaryKey) > 0 && !placeable(t.PrimaryKey):
		return nil, fmt.Sprintf("its primary key (%s) has a column whose name a key template cannot hold (a '}' or ':', \"${\", or spaces at an end), and no unique key of NOT NULL columns can stand in: rename the column, or map the table through a query source that renames it", strings.Join(t.PrimaryKey, ", "))
	case len(t.PrimaryKey) > 0:
		i := slices.IndexFunc(t.PrimaryKey, func(c string) bool { return !keyable(t, []string{c}) })
		col, _ := t.Column(t.PrimaryKey[i])
		return nil, fmt.Sprintf("its primary key (%s) has a column of type %s, which no string key holds, and no unique key of NOT NULL columns can stand in: map the table through a query source that renders it as text (encode(col, 'hex') for bytea)", strings.Join(t.PrimaryKey, ", "), col.Type)
	}
	return nil, "no primary key and no unique key of NOT NULL columns: nothing identifies a row, so no key can be rendered; " + keyAdvice(t)
}

// keyForm is how a column of format_type typ goes in a string key.
type keyForm int

const (
	// sortsText: its key text sorts as PostgreSQL sorts it (sortedTypes).
	sortsText keyForm = iota
	// plainText: ${c:0}, its exact text, which sorts as text only (floats,
	// enums, numeric without precision, ...): the loader's one form for it.
	plainText
	// noText: no string key can hold it (bytea, json, arrays).
	noText
)

var sortedTypes = regexp.MustCompile(`^(smallint|integer|bigint|numeric\(\d+(,\d+)?\)|text|name|uuid|boolean|date|character( varying)?(\(\d+\))?|timestamp.*|time(\(\d\))? without time zone)$`)

func keyFormOf(typ string) keyForm {
	switch {
	case strings.HasSuffix(typ, "[]") || typ == "bytea" || typ == "json" || typ == "jsonb":
		return noText
	case sortedTypes.MatchString(typ):
		return sortsText
	}
	return plainText
}

// keyable reports whether a string key can hold every column of cols.
func keyable(t *Table, cols []string) bool {
	return !slices.ContainsFunc(cols, func(c string) bool {
		col, _ := t.Column(c)
		return keyFormOf(col.Type) == noText
	})
}

// plainKeys marks the columns each entity's keys write as ${c:0}: plainText
// ones and those a foreign key pairs with one, so both render one text.
func (g *designer) plainKeys(all []*Entity) {
	for _, e := range all {
		for _, c := range e.Table.Columns {
			if keyFormOf(c.Type) == plainText {
				e.plain[c.Name] = true
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, e := range all {
			for _, fk := range e.Table.ForeignKeys {
				p := g.parentOf(fk)
				for i, c := range fk.Columns {
					if p != nil && p.plain[fk.RefColumns[i]] && !e.plain[c] {
						e.plain[c], changed = true, true
					}
				}
			}
		}
	}
}

// keyAdvice says how to give an unidentified t a key: a column the data shows
// unique and never NULL, else an identity column; then rerun init.
func keyAdvice(t *Table) string {
	id := pgx.Identifier{t.Schema, t.Name}.Sanitize()
	if len(t.UniqueColumns) > 0 {
		c := t.UniqueColumns[0]
		others := ""
		if len(t.UniqueColumns) > 1 {
			others = fmt.Sprintf(" (so are %s)", strings.Join(t.UniqueColumns[1:], ", "))
		}
		return fmt.Sprintf("%s is distinct and never NULL in all %s rows%s: make it the key, ALTER TABLE %s ADD PRIMARY KEY (%s); or add a UNIQUE index on NOT NULL columns; then run init again",
			c, count(t.Rows), others, id, pgx.Identifier{c}.Sanitize())
	}
	return fmt.Sprintf("no column is distinct and never NULL in the data: add a key, ALTER TABLE %s ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY; or a UNIQUE index on NOT NULL columns; then run init again", id)
}

// placeable reports whether every column can be a ${column} placeholder
// (mapping.Nameable).
func placeable(cols []string) bool {
	return !slices.ContainsFunc(cols, func(c string) bool { return !mapping.Nameable(c) })
}

// names gives each entity a type name and key prefix from its table name
// (asciiSnake, singular: order_lines → OrderLine, ORDER_LINE), per
// docs/init-and-plan.md "Names": catalog position without an ASCII letter or
// digit, then schema-qualified, then numbered, so no two types share a prefix
// and overwrite each other's items.
func (g *designer) names(all []*Entity) {
	pos := map[*Table]int{}
	for i, t := range g.d.Catalog.Tables {
		pos[t] = i + 1
	}
	schemas := map[string]map[string]bool{} // base → the schemas with a table of that base
	for _, e := range all {
		e.words = asciiSnake(e.Table.Name)
		if e.words == "" {
			e.words = fmt.Sprintf("table_%d", pos[e.Table])
			e.Notes = append(e.Notes, fmt.Sprintf("Named %s after its place in the catalog: its name has no ASCII letter or digit to name it by; rename it freely.", e.words))
		}
		b := strings.ToLower(singular(e.words))
		if schemas[b] == nil {
			schemas[b] = map[string]bool{}
		}
		schemas[b][e.Table.Schema] = true
	}
	names, prefixes := map[string]bool{}, map[string]bool{}
	for _, e := range all {
		base := singular(e.words)
		if len(schemas[strings.ToLower(base)]) > 1 {
			if s := asciiSnake(e.Table.Schema); s != "" {
				base = s + "_" + base
			}
		}
		name, prefix := entityName(base), keyPrefix(base)
		for i := 2; names[name] || prefixes[prefix]; i++ {
			name, prefix = fmt.Sprintf("%s%d", entityName(base), i), fmt.Sprintf("%s%d", keyPrefix(base), i)
		}
		names[name], prefixes[prefix] = true, true
		e.Name, e.Prefix, e.base = name, prefix, strings.ToLower(base)
	}
}

// parentOf returns the mapped table a usable foreign key references by its full
// identifying key, so both sides' templates render one value. A foreign key
// only some partitions declare is unusable: other rows may lack a parent.
func (g *designer) parentOf(fk *ForeignKey) *Entity {
	if !fk.valid || fk.partial || !placeable(fk.Columns) {
		return nil
	}
	p := g.byName[g.d.Catalog.Table(fk.RefSchema, fk.RefTable)]
	if p == nil || len(fk.RefColumns) != len(p.Key) {
		return nil
	}
	for _, k := range p.Key {
		if !slices.Contains(fk.RefColumns, k) {
			return nil
		}
	}
	return p
}

// unusableFKs records why each of e's foreign keys that parentOf refuses,
// though its parent's table was read, is refused.
func (g *designer) unusableFKs(e *Entity) {
	for _, fk := range e.Table.ForeignKeys {
		t := g.d.Catalog.Table(fk.RefSchema, fk.RefTable)
		if !fk.valid || fk.partial || t == nil || g.parentOf(fk) != nil {
			continue
		}
		why := "its columns' names a key template cannot hold"
		if p := g.byName[t]; p == nil {
			why = fmt.Sprintf("%s is left out, with no key to refer to", t.Name)
		} else if placeable(fk.Columns) {
			why = fmt.Sprintf("it refers to %s (%s), not to its key (%s), which %s's keys hold", t.Name, strings.Join(fk.RefColumns, ", "), strings.Join(p.Key, ", "), p.Name)
		}
		if e.unusable == nil {
			e.unusable = map[*ForeignKey]string{}
		}
		e.unusable[fk] = why
	}
}

// childColumns are fk's child columns in the order of the parent's key.
func childColumns(fk *ForeignKey, parent *Entity) []string {
	out := make([]string, len(parent.Key))
	for i, k := range parent.Key {
		out[i] = fk.Columns[slices.Index(fk.RefColumns, k)]
	}
	return out
}

// join makes e a Join when its identifying key is exactly two usable foreign
// keys and it has no other. Its items live in the first end's collection,
// unless that end is a category and the other not (a partition per category is
// hot: docs/init-and-plan.md). Two category ends make no join.
func (g *designer) join(e *Entity) {
	t := e.Table
	var usable []*ForeignKey
	for _, fk := range t.ForeignKeys {
		if g.parentOf(fk) != nil {
			usable = append(usable, fk)
		}
	}
	if len(usable) != 2 || len(t.ForeignKeys) != 2 || !coversExactly(e.Key, usable) {
		return
	}
	a, b := usable[0], usable[1]
	if slices.Index(e.Key, b.Columns[0]) < slices.Index(e.Key, a.Columns[0]) {
		a, b = b, a
	}
	if category(a) && !category(b) {
		a, b = b, a
	}
	if category(a) {
		e.Notes = append(e.Notes, fmt.Sprintf("Not an adjacency list: both %s (%s) and %s (%s) are categories, over %d children per parent on average; an item collection or a GSI partition per parent would be hot.",
			a.RefTable, fanout(a), b.RefTable, fanout(b), NestMaxAvg))
		return
	}
	e.Role = Join
	e.Ends = [2]*ForeignKey{a, b}
}

// category reports whether fk averages over NestMaxAvg children per parent: a
// categorization no collection or GSI partition should be keyed by.
func category(fk *ForeignKey) bool { return fk.Fanout.Avg() > NestMaxAvg }

// candidates are the foreign keys that could own e: usable, NOT NULL, to
// another table, not a category, not a one-to-one reference.
func (g *designer) candidates(e *Entity) []*ForeignKey {
	var out []*ForeignKey
	for _, fk := range e.Table.ForeignKeys {
		if p := g.parentOf(fk); p != nil && p != e && fk.NotNull() && fk.Fanout.Avg() <= NestMaxAvg && !reference(e, fk) {
			out = append(out, fk)
		}
	}
	return out
}

// oneToOne reports whether each parent has at most one child through fk:
// declared (fk holds a unique key of t) or measured (rows exist, no parent has
// two).
func oneToOne(t *Table, fk *ForeignKey) bool {
	return keyOf(t, fk.Columns) || fk.Fanout.Children > 0 && fk.Fanout.Max <= 1
}

// reference reports whether fk is a one-to-one reference outside e's own key,
// hence no ownership (a customer has an address; docs/init-and-plan.md
// "Owners").
func reference(e *Entity, fk *ForeignKey) bool {
	return oneToOne(e.Table, fk) && !subset(fk.Columns, e.Key)
}

// classify chooses e's owner among candidates, preferring
// (docs/init-and-plan.md "Owners"): one inside the table's key; one whose
// parent's name starts the table's (invoice_line → invoice); one to a root;
// fewest children per parent; name.
func (g *designer) classify(e *Entity) {
	if e.Role == Join {
		return
	}
	cands := slices.Clone(g.cands[e])
	if len(cands) == 0 {
		return
	}
	rank := func(fk *ForeignKey) [3]int {
		var r [3]int
		if !subset(fk.Columns, e.Key) {
			r[0] = 1
		}
		p := g.parentOf(fk)
		if !strings.HasPrefix(strings.ToLower(e.words), strings.ToLower(singular(p.words))) {
			r[1] = 1
		}
		if len(g.cands[p]) > 0 || p.Role == Join {
			r[2] = 1
		}
		return r
	}
	slices.SortStableFunc(cands, func(a, b *ForeignKey) int {
		ra, rb := rank(a), rank(b)
		return cmp.Or(slices.Compare(ra[:], rb[:]), cmp.Compare(a.Fanout.Avg(), b.Fanout.Avg()), strings.Compare(a.Name, b.Name))
	})
	e.Owner = cands[0]
	e.Role = Owned // Child or Embedded once leaf knows nothing hangs from it
	p := g.parentOf(e.Owner)
	p.owned = append(p.owned, e)
}

func coversExactly(key []string, fks []*ForeignKey) bool {
	var cols []string
	for _, fk := range fks {
		for _, c := range fk.Columns {
			if slices.Contains(cols, c) {
				return false
			}
			cols = append(cols, c)
		}
	}
	return len(cols) == len(key) && subset(cols, key)
}

func subset(a, b []string) bool {
	for _, v := range a {
		if !slices.Contains(b, v) {
			return false
		}
	}
	return true
}

// leaf makes an owned table nothing hangs from a Child in its owner's
// collection, or Embedded in the owner's item when small and bounded: its only
// foreign key is the owner, at most EmbedMaxChildren children per parent,
// EmbedMaxItems rows within EmbedMaxBytes. Never a referenced table (embedded
// rows have no item) or one whose key order_by cannot name.
func (g *designer) leaf(e *Entity) {
	if e.Role != Owned || len(e.owned) > 0 || g.joinStart(e) {
		return
	}
	e.Role = Child
	f, p := e.Owner.Fanout, g.parentOf(e.Owner)
	refs := g.referrers(e)
	switch {
	case len(e.Table.ForeignKeys) > 1:
		e.whyNotEmbedded = "it has other foreign keys, which embedded rows could not serve"
	case f.Max > EmbedMaxChildren:
		e.whyNotEmbedded = fmt.Sprintf("some %s has %d, over %d", singular(p.Table.Name), f.Max, EmbedMaxChildren)
	case e.Table.AvgRowBytes*EmbedMaxItems > EmbedMaxBytes:
		e.whyNotEmbedded = fmt.Sprintf("%d rows of about %s bytes could pass %s bytes", EmbedMaxItems, count(e.Table.AvgRowBytes), count(EmbedMaxBytes))
	case len(refs) > 0:
		e.whyNotEmbedded = fmt.Sprintf("rows of %s refer to its rows by key, and an embedded row has no item to fetch", strings.Join(refs, " and "))
	case slices.ContainsFunc(e.Key, spaced):
		e.whyNotEmbedded = "a column of its key has a space, which an embed's order_by cannot name"
	default:
		e.Role = Embedded
	}
}

// referrers are the other tables with a usable foreign key to e, in catalog
// order.
func (g *designer) referrers(e *Entity) []string {
	var out []string
	for _, t := range g.d.Catalog.Tables {
		if t == e.Table {
			continue
		}
		for _, fk := range t.ForeignKeys {
			if g.parentOf(fk) == e {
				out = append(out, t.Name)
				break
			}
		}
	}
	return out
}

// spaced reports whether c has a space, which order_by cannot name.
func spaced(c string) bool { return len(strings.Fields(c)) != 1 }

// joinStart reports whether a join table's items live in e's collection.
func (g *designer) joinStart(e *Entity) bool {
	for _, o := range g.byName {
		if o.Role == Join && g.parentOf(o.Ends[0]) == e {
			return true
		}
	}
	return false
}

// order puts roots first, each owned table after its owners (breadth first),
// then joins, each group in catalog order; parents first so patterns sample
// parameters from the parent.
func order(all []*Entity) []*Entity {
	var out []*Entity
	placed := map[*Entity]bool{}
	for _, e := range all {
		if e.Role == Root {
			out = append(out, e)
			placed[e] = true
		}
	}
	for i := 0; i < len(out); i++ {
		for _, c := range out[i].owned {
			if !placed[c] {
				out = append(out, c)
				placed[c] = true
			}
		}
	}
	for _, e := range all {
		if !placed[e] && e.Role != Join {
			out = append(out, e) // an ownership cycle: listed, still correct
			placed[e] = true
		}
	}
	for _, e := range all {
		if e.Role == Join {
			out = append(out, e)
		}
	}
	return out
}

// ref renders "PREFIX#${a}#${b:0}" over e's placeable cols, ${c:0} for
// e.plain ones ("$$" escapes only literal text).
func (e *Entity) ref(prefix string, cols []string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, c := range cols {
		b.WriteString("#${")
		b.WriteString(c)
		if e.plain[c] {
			b.WriteString(":0")
		}
		b.WriteString("}")
	}
	return b.String()
}

// keys renders the key templates and picks the GSI1 entry, and a Child's GSI2
// entry when its key lacks the partition key.
func (g *designer) keys(e *Entity) {
	self := e.ref(e.Prefix, e.Key)
	switch e.Role {
	case Root, Owned:
		e.PK, e.SK = self, self
	case Child:
		p := g.parentOf(e.Owner)
		e.PK, e.SK = e.ref(p.Prefix, childColumns(e.Owner, p)), self
		if !subset(e.Owner.Columns, e.Key) {
			e.ByKey = self
			g.d.UsesKeyGSI = true
		}
	case Join:
		a, b := g.parentOf(e.Ends[0]), g.parentOf(e.Ends[1])
		ak, bk := e.ref(a.Prefix, childColumns(e.Ends[0], a)), e.ref(b.Prefix, childColumns(e.Ends[1], b))
		e.PK, e.SK = ak, bk
		if !category(e.Ends[1]) {
			e.Index = &Index{PK: bk, SK: ak, FK: e.Ends[1], Parent: b}
			g.d.UsesGSI = true
		}
		return
	case Embedded:
		return
	}
	if e.Table.OwnID != "" && slices.Equal(e.Key, e.Table.PrimaryKey) {
		// Found by its own id alone, which its key holds with more.
		e.ByKey = e.ref(e.Prefix, []string{e.Table.OwnID})
		g.d.UsesKeyGSI = true
	}
	fk := e.Owner
	if e.Role != Owned {
		fk = g.lookupFK(e)
	}
	if fk == nil {
		return
	}
	p := g.parentOf(fk)
	e.Index = &Index{PK: e.ref(p.Prefix, childColumns(fk, p)), SK: self, Sparse: !fk.NotNull(), FK: fk, Parent: p}
	g.d.UsesGSI = true
}

// distinctKeys prefixes a Join's sort keys (table and GSI1) with its own prefix
// when another entity's keys, in the table or GSI1, could equal its own (two
// joins of the same parents, a join and a Child of one parent, a join
// inverted as another entity's GSI1 lookup): EMPLOYEE#1 /
// DEPARTMENT_MANAGER#DEPARTMENT#d1.
func (g *designer) distinctKeys() {
	shape := func(pk, sk string) string { return literalLead(pk) + "\x00" + literalLead(sk) }
	seen := map[string][]*Entity{}
	for _, e := range g.d.Entities {
		if e.Role != Embedded {
			seen[shape(e.PK, e.SK)] = append(seen[shape(e.PK, e.SK)], e)
		}
		if e.Index != nil {
			seen["GSI1"+shape(e.Index.PK, e.Index.SK)] = append(seen["GSI1"+shape(e.Index.PK, e.Index.SK)], e)
		}
	}
	for _, es := range seen {
		if len(es) < 2 {
			continue
		}
		for _, e := range es {
			if e.Role != Join || e.lead != "" {
				continue
			}
			e.lead = e.Prefix + "#"
			e.SK = e.lead + e.SK
			if e.Index != nil {
				e.Index.SK = e.lead + e.Index.SK
			}
			var others []string
			for _, o := range es {
				if o != e {
					others = append(others, o.Name)
				}
			}
			e.Notes = append(e.Notes, fmt.Sprintf("Its sort keys start with %s: %s has the same partition and sort key prefixes, and their items would overwrite each other.", e.lead, strings.Join(others, " and ")))
		}
	}
}

// plainNote says which columns e's keys write as their plain text, and what
// that costs.
func plainNote(e *Entity) {
	tpls := e.PK + e.SK + e.ByKey
	if e.Index != nil {
		tpls += e.Index.PK + e.Index.SK
	}
	var cols []string
	for _, c := range e.Table.Columns {
		if e.plain[c.Name] && strings.Contains(tpls, "${"+c.Name+":0}") {
			cols = append(cols, fmt.Sprintf("%s (%s)", c.Name, c.Type))
		}
	}
	if len(cols) > 0 {
		e.Notes = append(e.Notes, fmt.Sprintf("Its keys write %s as ${col:0}, the value's exact text: no key text of its type sorts as PostgreSQL orders it, so keys sort as text, and verify fails a pattern reading them in order where the two orders differ.", strings.Join(cols, ", ")))
	}
}

// literalLead is a key template's text before its first placeholder.
func literalLead(tpl string) string {
	if i := strings.Index(tpl, "${"); i >= 0 {
		return tpl[:i]
	}
	return tpl
}

// lookupFK picks the foreign key a Root or Child serves through GSI1: usable,
// not the owner, not a category; one-to-many before one-to-one, then fewest
// children per parent, then name.
func (g *designer) lookupFK(e *Entity) *ForeignKey {
	var best *ForeignKey
	better := func(fk *ForeignKey) bool {
		if r, rb := reference(e, fk), reference(e, best); r != rb {
			return !r
		}
		return fk.Fanout.Avg() < best.Fanout.Avg()
	}
	for _, fk := range e.Table.ForeignKeys {
		if fk == e.Owner || g.parentOf(fk) == nil || fk.Fanout.Avg() > NestMaxAvg || fk.Fanout.Parents == 0 {
			continue
		}
		if best == nil || better(fk) {
			best = fk
		}
	}
	return best
}

// parentSide adds to e's parent what e's role asks: the embed, a child count,
// the duplicated name.
func (g *designer) parentSide(e *Entity) {
	if e.Owner == nil {
		return
	}
	p := g.parentOf(e.Owner)
	switch e.Role {
	case Embedded:
		e.As = e.Table.Name
		if _, clash := p.Table.Column(e.As); clash {
			e.As += "_list"
		}
		p.Embeds = append(p.Embeds, e)
		return
	case Child, Owned:
		attr := strings.ToLower(e.Prefix) + "_count" // order2_count for Order2: one per child type
		if _, clash := p.Table.Column(attr); !clash {
			p.Counts = append(p.Counts, Count{Attr: attr, Child: e, FK: e.Owner})
		}
	}
	if !g.opts.DuplicateNames {
		return
	}
	if col := nameColumn(p.Table); col != "" {
		as := p.base + "_" + col
		if col != "name" && strings.HasPrefix(col, p.base+"_") {
			as = col
		}
		if _, clash := e.Table.Column(as); !clash {
			e.Duplicates = append(e.Duplicates, Duplicate{Parent: p, FK: e.Owner, Column: col, As: as})
		}
	}
}

var nameType = regexp.MustCompile(`^(text|character varying\((\d+)\)|character\((\d+)\))$`)

// nameColumn is a parent's short name column: name, title or *_name of text or
// (var)char up to 80 ("text" is taken as short, as names are); "" for none.
func nameColumn(t *Table) string {
	for _, c := range t.Columns {
		if c.Name != "name" && c.Name != "title" && !strings.HasSuffix(c.Name, "_name") {
			continue
		}
		m := nameType.FindStringSubmatch(c.Type)
		if m == nil {
			continue
		}
		if n, err := strconv.Atoi(cmp.Or(m[2], m[3])); err == nil && n > 80 {
			continue
		}
		return c.Name
	}
	return ""
}

// freeName is "type", else the first of entity_type, entity_type2, … not taken.
func freeName(taken func(string) bool) string {
	if !taken("type") {
		return "type"
	}
	n := "entity_type"
	for i := 2; taken(n); i++ {
		n = fmt.Sprintf("entity_type%d", i)
	}
	return n
}

// typeAttribute keeps "type" unless a column has that name, and renames columns
// clashing with key attributes.
func (g *designer) typeAttribute() {
	g.d.TypeAttribute = freeName(g.anyColumn)
	reserved := []string{"PK", "SK", g.d.TypeAttribute}
	if g.d.UsesGSI {
		reserved = append(reserved, GSIPK, GSISK)
	}
	if g.d.UsesKeyGSI {
		reserved = append(reserved, KeyGSIPK)
	}
	for _, e := range g.d.Entities {
		for _, c := range e.Table.Columns {
			if slices.Contains(reserved, c.Name) {
				e.Rename[c.Name] = c.Name + "_"
			}
		}
	}
}

// secretWords in a column name (any case) mark a secret or its digest.
var secretWords = []string{"password", "passwd", "token", "secret", "hash", "salt"}

// leftOut says why c is left out, or "": a tsvector (DynamoDB cannot search
// it), or a name containing a secretWord, which also catches innocent names
// (hashtag): copying a secret to every reader is worse (docs/init-and-plan.md
// "Columns left out").
func leftOut(c Column) string {
	if c.Type == "tsvector" {
		return "a tsvector, PostgreSQL's full-text index of other columns, which DynamoDB cannot search"
	}
	n := strings.ToLower(c.Name)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return fmt.Sprintf("named like a secret (%s), which every reader of the table could read", w)
		}
	}
	return ""
}

// exclude lists leftOut's columns of e's items (and embedded rows) except those
// key templates render, which a key holds anyway; the entity's comment says so.
func (g *designer) exclude(e *Entity) {
	inKeys := slices.Clone(e.Key)
	for _, fk := range append([]*ForeignKey{e.Owner, e.Ends[0], e.Ends[1]}, indexFK(e)) {
		if fk != nil {
			inKeys = append(inKeys, fk.Columns...)
		}
	}
	for _, c := range e.Table.Columns {
		why := leftOut(c)
		switch {
		case why == "":
		case slices.Contains(inKeys, c.Name):
			e.Notes = append(e.Notes, fmt.Sprintf("Kept %s, though %s: a key renders it, so its items hold it anyway.", c.Name, why))
		default:
			e.Exclude = append(e.Exclude, LeftOut{Column: c.Name, Why: why})
			delete(e.Rename, c.Name)
		}
	}
}

func indexFK(e *Entity) *ForeignKey {
	if e.Index == nil {
		return nil
	}
	return e.Index.FK
}

func (g *designer) anyColumn(name string) bool {
	for _, e := range g.d.Entities {
		if _, ok := e.Table.Column(name); ok {
			return true
		}
	}
	return false
}

// patterns drafts e's relationship access patterns: a Query of each own item by
// key (via GSI2 when needed), a begins_with Query per child type in a
// collection, a GSI1 Query per reverse lookup. Parameters are named as in the
// child's key template so verify samples them from child rows. An empty table
// gets none.
func (g *designer) patterns(e *Entity) {
	self := e.ref(e.Prefix, e.Key)
	if e.Role == Embedded {
		return
	}
	if e.Table.Rows == 0 {
		e.Notes = append(e.Notes, "No access pattern: the table is empty, so verify could not check one; add them once it has rows.")
		return
	}
	one := singular(e.Table.Name)
	if id := e.Table.OwnID; e.ByKey != "" && slices.Equal(e.Key, e.Table.PrimaryKey) && id != "" {
		g.pattern("Get"+e.Name, fmt.Sprintf("one %s by its own id (%s) alone, through %s: its primary key (%s) holds more", one, id, KeyGSI, strings.Join(e.Key, ", ")),
			KeyGSI, fmt.Sprintf("%s = %s", KeyGSIPK, e.ByKey))
	}
	switch e.Role {
	case Root, Owned:
		desc := "one " + one + " by its key"
		if len(e.Embeds) > 0 {
			var names []string
			for _, c := range e.Embeds {
				names = append(names, c.As)
			}
			desc += ", with its " + strings.Join(names, " and ") + " embedded"
		}
		if e.ByKey == "" {
			g.pattern("Get"+e.Name, desc, "", fmt.Sprintf("PK = %s AND SK = %s", self, self))
		}
	case Child:
		p := g.parentOf(e.Owner)
		switch {
		case e.Table.OwnID != "" && e.ByKey != "":
		case e.ByKey != "":
			g.pattern("Get"+e.Name, fmt.Sprintf("one %s by its key alone, through %s (its item lives in its %s's collection)", one, KeyGSI, singular(p.Table.Name)),
				KeyGSI, fmt.Sprintf("%s = %s", KeyGSIPK, e.ByKey))
		default:
			g.pattern("Get"+e.Name, fmt.Sprintf("one %s by its key, which holds its %s's", one, singular(p.Table.Name)),
				"", fmt.Sprintf("PK = %s AND SK = %s", e.PK, self))
		}
		g.pattern(p.Name+pascal(under(p.words, e.words)), fmt.Sprintf("one %s's %s, in key order, from its item collection", singular(p.Table.Name), many(e.Table.Name)),
			"", fmt.Sprintf("PK = %s AND begins_with(SK, %s#)", e.PK, e.Prefix))
	case Join:
		a, b := g.parentOf(e.Ends[0]), g.parentOf(e.Ends[1])
		// Named after the other parent, or after its own table when
		// distinctKeys prefixed it.
		an, bn := a.Name+pascal(many(b.words)), b.Name+pascal(many(a.words))
		if e.lead != "" {
			an, bn = a.Name+pascal(many(e.words)), b.Name+pascal(many(e.words))
		}
		g.pattern(an, fmt.Sprintf("one %s's %s: adjacency-list items of %s in its item collection", singular(a.Table.Name), many(b.Table.Name), e.Table.Name),
			"", fmt.Sprintf("PK = %s AND begins_with(SK, %s%s#)", e.ref(a.Prefix, childColumns(e.Ends[0], a)), e.lead, b.Prefix))
		if e.Index != nil {
			g.pattern(bn, fmt.Sprintf("one %s's %s: the same items, inverted in %s", singular(b.Table.Name), many(a.Table.Name), GSI),
				GSI, fmt.Sprintf("%s = %s AND begins_with(%s, %s%s#)", GSIPK, e.ref(b.Prefix, childColumns(e.Ends[1], b)), GSISK, e.lead, a.Prefix))
		}
		return
	}
	if ix := e.Index; ix != nil && ix.FK.Fanout.Children > 0 {
		by := ix.Parent.Name
		if len(ix.FK.Columns) == 1 && ix.FK.Columns[0] != ix.Parent.Key[0] {
			if w := pascal(strings.TrimSuffix(asciiSnake(ix.FK.Columns[0]), "_id")); w != "" {
				by = w
			}
		}
		name, desc := entityName(many(e.words))+"By"+by, fmt.Sprintf("the %s of one %s (%s), through %s", many(e.Table.Name), singular(ix.Parent.Table.Name), strings.Join(ix.FK.Columns, ", "), GSI)
		if reference(e, ix.FK) {
			name, desc = e.Name+"By"+by, fmt.Sprintf("the %s of one %s (%s), one to one, through %s", one, singular(ix.Parent.Table.Name), strings.Join(ix.FK.Columns, ", "), GSI)
		}
		g.pattern(name, desc, GSI, fmt.Sprintf("%s = %s AND begins_with(%s, %s#)", GSIPK, ix.PK, GSISK, e.Prefix))
	}
}

// pattern adds an access pattern under a unique name: a taken one gets "In" and
// its index, or "InTable", and a number last.
func (g *designer) pattern(name, desc, index, cond string) {
	taken := func(n string) bool {
		return slices.ContainsFunc(g.d.Patterns, func(p *Pattern) bool { return p.Name == n })
	}
	if taken(name) {
		if alt := name + "In" + cmp.Or(index, "Table"); !taken(alt) {
			name = alt
		}
	}
	base := name
	for i := 2; taken(name); i++ {
		name = fmt.Sprintf("%s%d", base, i)
	}
	g.d.Patterns = append(g.d.Patterns, &Pattern{Name: name, Description: desc, Index: index, KeyCondition: cond})
}
