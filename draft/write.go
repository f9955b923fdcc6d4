package draft

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// Write renders d as a mapping file: the *mapping.Mapping that d drafts
// (see build), marshalled with goccy/go-yaml, with comments that give each
// decision and the numbers it rests on. mapping.Parse reads the file back
// to that Mapping, its defaults applied. The output depends only on d (no
// clock, no map order), so the same database gives the same file. An
// error is the marshaller's or w's.
func Write(w io.Writer, d *Design) error {
	m, l := build(d)
	return writeMapping(w, m, l, "write the draft")
}

// writeMapping writes m marshalled with l to w, a marshal error wrapped in what.
func writeMapping(w io.Writer, m *mapping.Mapping, l layout, what string) error {
	data, err := marshal(m, l)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	_, err = w.Write(data)
	return err
}

// put sets (*m)[k] to v, making *m first if it is nil.
func put[K comparable, V any](m *map[K]V, k K, v V) {
	if *m == nil {
		*m = map[K]V{}
	}
	(*m)[k] = v
}

// layout is what a Mapping value does not hold: the comments around its
// values and the values written in flow style, by where they are in the
// file.
type layout []note

// note lays out the value at path (a key of a mapping, or an entry of a
// sequence): head comment lines above it (after a blank line if blank),
// foot comment lines below it, and flow style for it. An empty line in
// head or foot is a blank line between comment lines.
type note struct {
	path  []any // each a key (string) or a sequence index (int)
	head  []string
	foot  []string
	blank bool
	flow  bool
}

func (l *layout) add(n note) { *l = append(*l, n) }

// at returns path as a path []any: keys, then the indexes given as ints.
func at(path ...any) []any { return path }

// build returns the mapping d drafts, with nothing Load would fill in
// (defaults, templates), and its layout.
func build(d *Design) (*mapping.Mapping, layout) {
	m := &mapping.Mapping{Version: 1, Name: MappingName(d.Table), Table: mapping.Table{Name: d.Table, SortKey: mapping.DefaultSortKey}}
	var l layout
	l.add(note{path: at(mapping.KeyVersion), head: header(d)})
	l.add(note{path: at(mapping.KeyName), head: nameComment})
	if d.UsesGSI {
		l.add(note{path: at(mapping.KeyTable, mapping.KeyGSIs, len(m.Table.GSIs)), head: []string{
			commentText("%s is overloaded: each entity puts at most one reverse lookup in it (a parent's children,", GSI),
			commentText("or a join table inverted); the sort key's TYPE# prefix tells them apart."),
		}})
		m.Table.GSIs = append(m.Table.GSIs, mapping.GSI{Name: GSI, PartitionKey: GSIPK, SortKey: GSISK})
	}
	if d.UsesKeyGSI {
		l.add(note{path: at(mapping.KeyTable, mapping.KeyGSIs, len(m.Table.GSIs)), head: []string{
			commentText("%s finds by its own key an item that lives in its owner's collection: only such items", KeyGSI),
			commentText("write %s (their TYPE#key), so the index is sparse and costs nothing for the others.", KeyGSIPK),
		}})
		m.Table.GSIs = append(m.Table.GSIs, mapping.GSI{Name: KeyGSI, PartitionKey: KeyGSIPK})
	}
	if d.TypeAttribute != mapping.DefaultTypeAttribute {
		m.TypeAttribute = d.TypeAttribute
		l.add(note{path: at(mapping.KeyTypeAttribute), head: []string{
			commentText(`a source column is named "type": the entity type goes in %q instead`, d.TypeAttribute),
		}})
	}
	for _, e := range d.Entities {
		if e.Role != Embedded {
			m.Entities = append(m.Entities, mappingEntity(e, &l))
		}
	}
	for _, ap := range d.Patterns {
		m.AccessPatterns = append(m.AccessPatterns, &mapping.AccessPattern{
			Name: ap.Name, Description: ap.Description, Index: ap.Index, KeyCondition: ap.KeyCondition,
		})
	}
	if len(d.Skipped) > 0 {
		last := mapping.KeyEntities
		if len(m.AccessPatterns) > 0 {
			last = mapping.KeyAccessPatterns
		}
		n := note{path: at(last), blank: true, foot: []string{commentText("Left out:")}}
		for _, s := range d.Skipped {
			n.foot = append(n.foot, commentText("- %s (%s rows): %s", s.Table.Name, count(s.Table.Rows), s.Reason))
		}
		l.add(n)
	}
	return m, l
}

// header is the comment at the top of the file: where the draft comes
// from and the rules it follows.
func header(d *Design) []string {
	c := d.Catalog
	var rows int64
	for _, t := range c.Tables {
		rows += t.Rows
	}
	out := []string{
		"yaml-language-server: $schema=mapping.schema.json",
		"(editor completion: pg2dynamo schema > mapping.schema.json, beside this file)",
		commentText("Drafted by `pg2dynamo init` from database %q, schema %s: %d tables, %s rows,", c.Database, strings.Join(c.Schemas, ", "), len(c.Tables), count(rows)),
	}
	if len(c.Exclude) > 0 {
		out = append(out, commentText("excluding the tables that match %s,", strings.Join(c.Exclude, ", ")))
	}
	return append(out,
		"measured in one snapshot. Each entity's comment gives the decision and its numbers.",
		"Rules: a table is its own item collection (TYPE#key); a table a NOT NULL foreign key",
		fmt.Sprintf("owns lives in its owner's collection, found by its own key through %s, or is embedded", KeyGSI),
		fmt.Sprintf("in the owner's item when no owner has over %d of it; a table of two foreign keys is an", EmbedMaxChildren),
		fmt.Sprintf("adjacency list, inverted in %s; owners with over %d children on average are categories,", GSI, NestMaxAvg),
		"and one-to-one foreign keys references, not owners. Secret-looking and tsvector columns",
		"are left out. Review, then `pg2dynamo plan --mapping FILE --with-source` and `pg2dynamo migrate`.",
	)
}

// mappingEntity returns e's mapping entity, and lays out its comments.
func mappingEntity(e *Entity, l *layout) *mapping.Entity {
	t := e.Table
	me := &mapping.Entity{Name: e.Name, Source: sourceOf(t), PK: e.PK, SK: e.SK}
	here := func(path ...any) []any { return append([]any{mapping.KeyEntities, e.Name}, path...) }
	head := []string{commentText("%s: %s rows, about %s bytes each as stored; key: %s (%s).", t.Name, count(t.Rows), count(t.AvgRowBytes), strings.Join(e.Key, ", "), keyKind(e))}
	var suggested []string
	for _, sg := range t.Suggestions {
		suggested = append(suggested, sg.evidence(t))
	}
	for _, n := range slices.Concat(roleNotes(e), notOwners(e), suggested, e.Notes) {
		head = append(head, commentText("%s", n))
	}
	l.add(note{path: here(), head: head, blank: true})
	if ix := e.Index; ix != nil {
		me.Indexes = map[string]mapping.IndexKeys{GSI: {PK: ix.PK, SK: ix.SK, Sparse: ix.Sparse}}
	}
	if e.ByKey != "" {
		put(&me.Indexes, KeyGSI, mapping.IndexKeys{PK: e.ByKey})
	}
	if len(e.Exclude) > 0 {
		me.Attributes.Exclude = columnsOf(e.Exclude)
		l.add(note{path: here(mapping.KeyAttributes, mapping.KeyExclude), head: excluded(e.Exclude)})
	}
	if len(e.Rename) > 0 {
		me.Attributes.Rename = e.Rename
	}
	for _, c := range e.Embeds {
		put(&me.Embed, c.As, embed(e, c, l, here(mapping.KeyEmbed, c.As)))
	}
	for _, c := range e.Counts {
		put(&me.Aggregates, c.Attr, &mapping.Aggregate{Function: mapping.AggCount, Source: sourceOf(c.Child.Table), Join: join(childColumns(c.FK, e), e.Key)})
	}
	for i, du := range e.Duplicates {
		me.Duplicate = append(me.Duplicate, &mapping.Duplicate{
			Source:     sourceOf(du.Parent.Table),
			Join:       join(du.Parent.Key, childColumns(du.FK, du.Parent)),
			Attributes: mapping.Attributes{Select: []string{du.Column}, Rename: map[string]string{du.Column: du.As}},
		})
		l.add(note{path: here(mapping.KeyDuplicate, i), head: []string{
			commentText("%s's %s, copied: a rename of one %s rewrites its items", du.Parent.Table.Name, du.Column, singular(du.Parent.Table.Name)),
		}})
		l.add(note{path: here(mapping.KeyDuplicate, i, mapping.KeyAttributes), flow: true})
	}
	return me
}

// embed returns the embed of c's rows in e's items, at path, and lays out
// its comments.
func embed(e, c *Entity, l *layout, path []any) *mapping.Embed {
	f := c.Owner.Fanout
	head := []string{
		commentText("%s per %s: avg %.1f, max %d (at most %d), about %s bytes a row: small and bounded, so", c.Table.Name, singular(e.Table.Name), f.Avg(), f.Max, EmbedMaxChildren, count(c.Table.AvgRowBytes)),
		commentText("embedded; one GetItem returns them. A %s with over %d is rejected, listed with the reason.", singular(e.Table.Name), EmbedMaxItems),
	}
	for _, sg := range c.Table.Suggestions {
		head = append(head, commentText("%s", sg.evidence(c.Table)))
	}
	l.add(note{path: path, head: head})
	fkCols := childColumns(c.Owner, e)
	me := &mapping.Embed{Source: sourceOf(c.Table), Join: join(fkCols, e.Key), OrderBy: slices.Clone(c.Key), MaxItems: EmbedMaxItems}
	ex := slices.Clone(fkCols)
	for _, x := range columnsOf(c.Exclude) {
		if !slices.Contains(ex, x) {
			ex = append(ex, x)
		}
	}
	if len(ex) < len(c.Table.Columns) || len(c.Exclude) > 0 {
		me.Attributes.Exclude = ex
		l.add(note{path: append(slices.Clip(path), mapping.KeyAttributes), head: excluded(c.Exclude), flow: true})
	}
	return me
}

// excluded is a comment line on each column left out, with why.
func excluded(cols []LeftOut) []string {
	var out []string
	for _, x := range cols {
		out = append(out, commentText("%s left out: %s.", x.Column, x.Why))
	}
	return out
}

func columnsOf(cols []LeftOut) []string {
	out := make([]string, len(cols))
	for i, x := range cols {
		out[i] = x.Column
	}
	return out
}

// sourceOf is table t as a mapping source; the schema is left out when it
// is the default.
func sourceOf(t *Table) mapping.Source {
	if t.Schema == mapping.DefaultSchema {
		return mapping.Source{Table: t.Name}
	}
	return mapping.Source{Schema: t.Schema, Table: t.Name}
}

// join pairs keys[i] (the other source's columns) with values[i] (this
// entity's).
func join(keys, values []string) mapping.Join {
	j := make(mapping.Join, len(keys))
	for i, k := range keys {
		j[k] = values[i]
	}
	return j
}

// roleNotes says where the entity's items live and why.
func roleNotes(e *Entity) []string {
	var out []string
	switch e.Role {
	case Root:
		out = append(out, "Its own item collection: no NOT NULL foreign key owns it.")
	case Owned:
		out = append(out, fmt.Sprintf("Its own item collection, since %s rows hang from it; owned by %s (%s), reached from there through %s.",
			ownedNames(e), e.Owner.RefTable, fanout(e.Owner), GSI))
	case Child:
		out = append(out, fmt.Sprintf("In each %s's item collection: owned by %s (%s).", singular(e.Owner.RefTable), e.Owner.RefTable, fanout(e.Owner)))
		out = append(out, fmt.Sprintf("Not embedded: %s.", e.whyNotEmbedded))
		if e.ByKey != "" && e.Table.OwnID == "" {
			out = append(out, fmt.Sprintf("%s finds one by its own key alone; its partition key is its %s's.", KeyGSI, singular(e.Owner.RefTable)))
		}
	case Join:
		out = append(out, fmt.Sprintf("A join table: adjacency-list items in each %s's collection (%s),", singular(e.Ends[0].RefTable), fanout(e.Ends[0])))
		if e.Index != nil {
			out = append(out, fmt.Sprintf("inverted in %s for each %s (%s).", GSI, singular(e.Ends[1].RefTable), fanout(e.Ends[1])))
		} else {
			out = append(out, fmt.Sprintf("not inverted in %s: %s (%s) is a category, over %d children per parent on average; a GSI partition per %s would be hot; to list them by %s, add a GSI whose key spreads them (write sharding).",
				GSI, e.Ends[1].RefTable, fanout(e.Ends[1]), NestMaxAvg, singular(e.Ends[1].RefTable), singular(e.Ends[1].RefTable)))
		}
	}
	if id := e.Table.OwnID; id != "" && e.ByKey != "" {
		out = append(out, fmt.Sprintf("%s finds one by its own id, %s, alone: distinct and never NULL in all %s rows, though its primary key also holds %s. No unique key enforces it (a partitioned table's must hold the partition key): should two rows share one, a Query of %s returns both.",
			KeyGSI, id, count(e.Table.Rows), strings.Join(slices.DeleteFunc(slices.Clone(e.Key), func(c string) bool { return c == id }), ", "), KeyGSI))
	}
	if ix := e.Index; ix != nil && e.Role != Owned && e.Role != Join {
		sparse := ""
		if ix.Sparse {
			sparse = "; sparse: rows without one are not indexed"
		}
		out = append(out, fmt.Sprintf("%s looks it up by %s (%s)%s.", GSI, ix.FK.RefTable, fanout(ix.FK), sparse))
	}
	for _, fk := range e.Table.ForeignKeys {
		if fk == e.Owner || (e.Index != nil && fk == e.Index.FK) || slices.Contains(e.Ends[:], fk) {
			continue
		}
		out = append(out, fmt.Sprintf("Not indexed: %s (%s)%s.", fk.RefTable, fanout(fk), whyNot(e, fk)))
	}
	return out
}

// notOwners says why the NOT NULL foreign keys that are one-to-one
// references (reference) own nothing.
func notOwners(e *Entity) []string {
	var out []string
	for _, fk := range e.Table.ForeignKeys {
		if fk != e.Owner && fk.valid && !fk.partial && fk.NotNull() && reference(e, fk) {
			how := "no parent has two in the data"
			if keyOf(e.Table, fk.Columns) {
				how = "its columns hold a unique key"
			}
			out = append(out, fmt.Sprintf("Not owned by %s (%s): one to one, %s; each row refers to its %s, it does not belong to it.",
				fk.RefTable, strings.Join(fk.Columns, ", "), how, singular(fk.RefTable)))
		}
	}
	return out
}

// whyNot says why fk of e has no GSI1 lookup.
func whyNot(e *Entity, fk *ForeignKey) string {
	switch {
	case e.unusable[fk] != "":
		return ": " + e.unusable[fk]
	case !fk.valid:
		return ": its table is not among those read (another schema, or excluded)"
	case fk.partial:
		return ": only some of the table's partitions declare it, so rows of the others may have no parent"
	case fk.Fanout.Avg() > NestMaxAvg:
		return fmt.Sprintf(": over %d on average, a category; a GSI on it would be a hot partition", NestMaxAvg)
	}
	return fmt.Sprintf(": %s holds one lookup per entity; add a GSI if you query by it", GSI)
}

func ownedNames(e *Entity) string {
	var n []string
	for _, c := range e.owned {
		n = append(n, c.Table.Name)
	}
	return strings.Join(n, " and ")
}

// fanout describes a foreign key's measured shape.
func fanout(fk *ForeignKey) string {
	f := fk.Fanout
	null := "NOT NULL"
	if !fk.NotNull() {
		null = "nullable"
	}
	switch {
	case fk.suggested != nil && fk.suggested.Partial:
		null += ", declared by some partitions only, every value with a parent row"
	case fk.suggested != nil:
		null += ", suggested by its name: no foreign key declares it"
	}
	return fmt.Sprintf("%s, %s; %s rows over %s parents, per parent avg %.1f, max %d", strings.Join(fk.Columns, ", "), null, count(f.Children), count(f.Parents), f.Avg(), f.Max)
}

func keyKind(e *Entity) string {
	if slices.Equal(e.Key, e.Table.PrimaryKey) {
		return "primary key"
	}
	return "unique, NOT NULL"
}

// marshal renders m as YAML laid out by l: key templates and other
// strings quoted as q quotes them, short values (sources, joins, lists,
// GSIs, index keys, aggregates) in flow style, empty fields left out.
func marshal(m *mapping.Mapping, l layout) ([]byte, error) {
	node, err := yaml.ValueToNode(m, encodeOptions()...)
	if err != nil {
		return nil, err
	}
	for _, n := range l {
		if err := n.apply(node); err != nil {
			return nil, err
		}
	}
	return []byte(node.String() + "\n"), nil
}

// encodeOptions are the options Write marshals a Mapping with.
func encodeOptions() []yaml.EncodeOption {
	// The flow values are marshalled by themselves in flow style, strings
	// as everywhere else.
	str := yaml.CustomMarshaler(func(s string) ([]byte, error) { return []byte(q(s)), nil })
	inFlow := []yaml.EncodeOption{yaml.Flow(true), yaml.OmitEmpty(), yaml.OmitZero(), str}
	return []yaml.EncodeOption{
		yaml.IndentSequence(true), yaml.OmitEmpty(), yaml.OmitZero(), str,
		flowStyle[mapping.Source](inFlow),
		flowStyle[mapping.Join](inFlow),
		flowStyle[mapping.GSI](inFlow),
		flowStyle[mapping.IndexKeys](inFlow),
		flowStyle[*mapping.Aggregate](inFlow),
		flowStyle[[]string](inFlow),
		flowStyle[map[string]string](inFlow),
	}
}

// flowStyle marshals each value of type T with opts.
func flowStyle[T any](opts []yaml.EncodeOption) yaml.EncodeOption {
	return yaml.CustomMarshaler(func(v T) ([]byte, error) { return yaml.MarshalWithOptions(v, opts...) })
}

// apply lays out the value at n.path in the tree under root. A path that
// is not in the tree is a bug in build.
func (n note) apply(root ast.Node) error {
	mv, seq, i, err := find(root, n.path)
	if err != nil {
		return err
	}
	if n.flow {
		v := mv.Value
		if seq != nil {
			v = seq.Values[i]
		}
		if f, ok := v.(interface{ SetIsFlowStyle(bool) }); ok {
			f.SetIsFlowStyle(true)
		}
	}
	if len(n.head) > 0 {
		c := comments(n.head, n.blank)
		if seq != nil {
			if len(seq.ValueHeadComments) == 0 {
				seq.ValueHeadComments = make([]*ast.CommentGroupNode, len(seq.Values))
			}
			seq.ValueHeadComments[i] = c
		} else if err := mv.SetComment(c); err != nil {
			return err
		}
	}
	if len(n.foot) > 0 {
		if seq != nil {
			return fmt.Errorf("a foot comment on entry %d of %v", i, n.path)
		}
		mv.FootComment = comments(n.foot, n.blank)
	}
	return nil
}

// comments is a comment group of lines, after a blank line if blank, an
// empty line a blank line before the next: goccy prints one before a
// comment that sits lines below its previous token.
func comments(lines []string, blank bool) *ast.CommentGroupNode {
	var tks []*token.Token
	for _, s := range lines {
		if s == "" {
			blank = true
			continue
		}
		tk := token.New(" "+s, " "+s, nil)
		if blank {
			tk.Position = &token.Position{Line: 3}
			tk.Prev = token.New("blank", "blank", &token.Position{Line: 1})
			blank = false
		}
		tks = append(tks, tk)
	}
	return ast.CommentGroup(tks)
}

// find returns the key-value pair at path under root, or the sequence
// and index of its last element when that is an index.
func find(root ast.Node, path []any) (mv *ast.MappingValueNode, seq *ast.SequenceNode, idx int, err error) {
	node := root
	for i, p := range path {
		switch p := p.(type) {
		case string:
			mv = pair(node, p)
			if mv == nil {
				return nil, nil, 0, fmt.Errorf("no key %q at %v", p, path[:i])
			}
			node = mv.Value
		case int:
			s, ok := node.(*ast.SequenceNode)
			if !ok || p >= len(s.Values) {
				return nil, nil, 0, fmt.Errorf("no entry %d at %v", p, path[:i])
			}
			if i == len(path)-1 {
				return nil, s, p, nil
			}
			node = s.Values[p]
		}
	}
	if mv == nil {
		return nil, nil, 0, fmt.Errorf("no key at %v", path)
	}
	return mv, nil, 0, nil
}

// pair returns the pair of node (a mapping) whose key is key, or nil.
func pair(node ast.Node, key string) *ast.MappingValueNode {
	var pairs []*ast.MappingValueNode
	switch n := node.(type) {
	case *ast.MappingNode:
		pairs = n.Values
	case *ast.MappingValueNode:
		pairs = []*ast.MappingValueNode{n}
	}
	for _, mv := range pairs {
		if s, ok := mv.Key.(*ast.StringNode); ok && keyText(s) == key {
			return mv
		}
	}
	return nil
}

// keyText is the string a key node stands for: the encoder keeps the
// quotes of a key it quoted in its value.
func keyText(s *ast.StringNode) string {
	v := s.Value
	if s.Token.Type != token.StringType || len(v) < 2 {
		return v
	}
	switch {
	case v[0] == '"':
		if u, err := strconv.Unquote(v); err == nil {
			return u
		}
	case v[0] == '\'' && v[len(v)-1] == '\'':
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	return v
}
