package draft

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Write renders d as a mapping file: YAML that mapping.Load accepts, with
// comments that give each decision and the numbers it rests on. The output
// depends only on d (no clock, no map order), so the same database gives
// the same file.
func Write(w io.Writer, d *Design) error {
	bw := bufio.NewWriter(w)
	p := &printer{w: bw}
	p.line(0, "# yaml-language-server: $schema=mapping.schema.json")
	p.comment(0, "(editor completion: pg2dynamo schema > mapping.schema.json, beside this file)")
	p.header(d)
	p.line(0, "version: 1")
	p.line(0, "table:")
	p.line(1, "name: %s", q(d.Table))
	if d.UsesGSI || d.UsesKeyGSI {
		p.line(1, "gsis:")
	}
	if d.UsesGSI {
		p.comment(2, "%s is overloaded: each entity puts at most one reverse lookup in it (a parent's children,", GSI)
		p.comment(2, "or a join table inverted); the sort key's TYPE# prefix tells them apart.")
		p.line(2, "- {name: %s, partition_key: %s, sort_key: %s}", GSI, GSIPK, GSISK)
	}
	if d.UsesKeyGSI {
		p.comment(2, "%s finds by its own key an item that lives in its owner's collection: only such items", KeyGSI)
		p.comment(2, "write %s (their TYPE#key), so the index is sparse and costs nothing for the others.", KeyGSIPK)
		p.line(2, "- {name: %s, partition_key: %s}", KeyGSI, KeyGSIPK)
	}
	if d.TypeAttribute != "type" {
		p.comment(0, `a source column is named "type": the entity type goes in %q instead`, d.TypeAttribute)
		p.line(0, "type_attribute: %s", q(d.TypeAttribute))
	}
	p.line(0, "entities:")
	for _, e := range d.Entities {
		if e.Role != Embedded {
			p.entity(d, e)
		}
	}
	if len(d.Patterns) > 0 {
		p.line(0, "access_patterns:")
		for _, ap := range d.Patterns {
			p.line(1, "%s:", q(ap.Name))
			p.line(2, "description: %s", q(ap.Description))
			if ap.Index != "" {
				p.line(2, "index: %s", ap.Index)
			}
			p.line(2, "key_condition: %s", strconv.Quote(ap.KeyCondition))
		}
	}
	if len(d.Skipped) > 0 {
		p.line(0, "")
		p.comment(0, "Left out:")
		for _, s := range d.Skipped {
			p.comment(0, "- %s (%s rows): %s", s.Table.Name, count(s.Table.Rows), s.Reason)
		}
	}
	return bw.Flush()
}

type printer struct{ w *bufio.Writer }

func (p *printer) line(depth int, format string, args ...any) {
	if format == "" {
		p.w.WriteString("\n")
		return
	}
	p.w.WriteString(strings.Repeat("  ", depth))
	fmt.Fprintf(p.w, format, args...)
	p.w.WriteString("\n")
}

// comment writes a comment line. A line break or other control character
// (a table or column name may hold one) is written as its Go escape, so
// that it cannot end the comment and start a line of YAML.
func (p *printer) comment(depth int, format string, args ...any) {
	p.line(depth, "# %s", controls.ReplaceAllStringFunc(fmt.Sprintf(format, args...), func(c string) string {
		return strings.Trim(strconv.QuoteToASCII(c), `"`)
	}))
}

// controls matches the characters a comment cannot hold: C0 and C1
// controls, and the Unicode line and paragraph separators.
var controls = regexp.MustCompile(`[\x00-\x1f\x7f-\x9f\x{2028}\x{2029}]`)

func (p *printer) header(d *Design) {
	c := d.Catalog
	var rows int64
	for _, t := range c.Tables {
		rows += t.Rows
	}
	p.comment(0, "Drafted by `pg2dynamo init` from database %q, schema %s: %d tables, %s rows,", c.Database, strings.Join(c.Schemas, ", "), len(c.Tables), count(rows))
	if len(c.Exclude) > 0 {
		p.comment(0, "excluding the tables that match %s,", strings.Join(c.Exclude, ", "))
	}
	p.comment(0, "measured in one snapshot. Each entity's comment gives the decision and its numbers.")
	p.comment(0, "Rules: a table is its own item collection (TYPE#key); a table a NOT NULL foreign key")
	p.comment(0, "owns lives in its owner's collection, found by its own key through %s, or is embedded", KeyGSI)
	p.comment(0, "in the owner's item when no owner has over %d of it; a table of two foreign keys is an", EmbedMaxChildren)
	p.comment(0, "adjacency list, inverted in %s; owners with over %d children on average are categories,", GSI, NestMaxAvg)
	p.comment(0, "and one-to-one foreign keys references, not owners. Secret-looking and tsvector columns")
	p.comment(0, "are left out. Review, then `pg2dynamo plan --mapping FILE --with-source` and `pg2dynamo migrate`.")
}

func (p *printer) entity(d *Design, e *Entity) {
	t := e.Table
	p.line(0, "")
	p.comment(1, "%s: %s rows, about %s bytes each as stored; key: %s (%s).", t.Name, count(t.Rows), count(t.AvgRowBytes), strings.Join(e.Key, ", "), keyKind(e))
	for _, n := range append(roleNotes(e), notOwners(e)...) {
		p.comment(1, "%s", n)
	}
	for _, n := range e.Notes {
		p.comment(1, "%s", n)
	}
	p.line(1, "%s:", q(e.Name))
	p.line(2, "source: %s", source(t))
	p.line(2, "pk: %s", strconv.Quote(e.PK))
	p.line(2, "sk: %s", strconv.Quote(e.SK))
	if e.Index != nil || e.ByKey != "" {
		p.line(2, "indexes:")
	}
	if ix := e.Index; ix != nil {
		sparse := ""
		if ix.Sparse {
			sparse = ", sparse: true"
		}
		p.line(3, "%s: {pk: %s, sk: %s%s}", GSI, strconv.Quote(ix.PK), strconv.Quote(ix.SK), sparse)
	}
	if e.ByKey != "" {
		p.line(3, "%s: {pk: %s}", KeyGSI, strconv.Quote(e.ByKey))
	}
	if len(e.Rename) > 0 || len(e.Exclude) > 0 {
		p.line(2, "attributes:")
	}
	if len(e.Exclude) > 0 {
		p.excluded(3, e.Exclude)
		p.line(3, "exclude: [%s]", list(columnsOf(e.Exclude)))
	}
	if len(e.Rename) > 0 {
		p.line(3, "rename: {%s}", pairs(e.Rename))
	}
	p.embeds(e)
	if len(e.Counts) > 0 {
		p.line(2, "aggregates:")
		for _, c := range e.Counts {
			p.line(3, "%s: {function: count, source: %s, join: {%s}}", q(c.Attr), source(c.Child.Table), joinPairs(childColumns(c.FK, e), e.Key))
		}
	}
	if len(e.Duplicates) > 0 {
		p.line(2, "duplicate:")
		for _, du := range e.Duplicates {
			p.comment(3, "%s's %s, copied: a rename of one %s rewrites its items", du.Parent.Table.Name, du.Column, singular(du.Parent.Table.Name))
			p.line(3, "- source: %s", source(du.Parent.Table))
			p.line(4, "join: {%s}", joinPairs(du.Parent.Key, childColumns(du.FK, du.Parent)))
			p.line(4, "attributes: {select: [%s], rename: {%s: %s}}", q(du.Column), q(du.Column), q(du.As))
		}
	}
}

func (p *printer) embeds(e *Entity) {
	if len(e.Embeds) == 0 {
		return
	}
	p.line(2, "embed:")
	for _, c := range e.Embeds {
		f := c.Owner.Fanout
		p.comment(3, "%s per %s: avg %.1f, max %d (at most %d), about %s bytes a row: small and bounded, so", c.Table.Name, singular(e.Table.Name), f.Avg(), f.Max, EmbedMaxChildren, count(c.Table.AvgRowBytes))
		p.comment(3, "embedded; one GetItem returns them. A %s with over %d is rejected, listed with the reason.", singular(e.Table.Name), EmbedMaxItems)
		fkCols := childColumns(c.Owner, e)
		p.line(3, "%s:", q(c.As))
		p.line(4, "source: %s", source(c.Table))
		p.line(4, "join: {%s}", joinPairs(fkCols, e.Key))
		p.line(4, "order_by: [%s]", list(c.Key))
		p.line(4, "max_items: %d", EmbedMaxItems)
		ex := slices.Clone(fkCols)
		for _, x := range columnsOf(c.Exclude) {
			if !slices.Contains(ex, x) {
				ex = append(ex, x)
			}
		}
		if len(ex) < len(c.Table.Columns) || len(c.Exclude) > 0 {
			p.excluded(4, c.Exclude)
			p.line(4, "attributes: {exclude: [%s]}", list(ex))
		}
	}
}

// excluded comments on each column left out, with why.
func (p *printer) excluded(depth int, cols []LeftOut) {
	for _, x := range cols {
		p.comment(depth, "%s left out: %s.", x.Column, x.Why)
	}
}

func columnsOf(cols []LeftOut) []string {
	out := make([]string, len(cols))
	for i, x := range cols {
		out[i] = x.Column
	}
	return out
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
		if e.ByKey != "" {
			out = append(out, fmt.Sprintf("%s finds one by its own key alone; its partition key is its %s's.", KeyGSI, singular(e.Owner.RefTable)))
		}
	case Join:
		out = append(out, fmt.Sprintf("A join table: adjacency-list items in each %s's collection (%s),", singular(e.Ends[0].RefTable), fanout(e.Ends[0])))
		out = append(out, fmt.Sprintf("inverted in %s for each %s (%s).", GSI, singular(e.Ends[1].RefTable), fanout(e.Ends[1])))
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
		out = append(out, fmt.Sprintf("Not indexed: %s (%s)%s.", fk.RefTable, fanout(fk), whyNot(fk)))
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
			if oneToOneDeclared(e.Table, fk) {
				how = "its columns hold a unique key"
			}
			out = append(out, fmt.Sprintf("Not owned by %s (%s): one to one, %s; each row refers to its %s, it does not belong to it.",
				fk.RefTable, strings.Join(fk.Columns, ", "), how, singular(fk.RefTable)))
		}
	}
	return out
}

func whyNot(fk *ForeignKey) string {
	switch {
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
	return fmt.Sprintf("%s, %s; %s rows over %s parents, per parent avg %.1f, max %d", strings.Join(fk.Columns, ", "), null, count(f.Children), count(f.Parents), f.Avg(), f.Max)
}

func keyKind(e *Entity) string {
	if slices.Equal(e.Key, e.Table.PrimaryKey) {
		return "primary key"
	}
	return "unique, NOT NULL"
}

func source(t *Table) string {
	if t.Schema == "public" {
		return fmt.Sprintf("{table: %s}", q(t.Name))
	}
	return fmt.Sprintf("{schema: %s, table: %s}", q(t.Schema), q(t.Name))
}

func joinPairs(keys, values []string) string {
	s := make([]string, len(keys))
	for i := range keys {
		s[i] = q(keys[i]) + ": " + q(values[i])
	}
	return strings.Join(s, ", ")
}

func pairs(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = m[k]
	}
	return joinPairs(keys, vals)
}

func list(s []string) string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = q(v)
	}
	return strings.Join(out, ", ")
}

var plain = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// q is s as a YAML scalar: plain when it is an identifier YAML reads as a
// string, double-quoted (Go's escapes are YAML's) otherwise.
func q(s string) string {
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "true", "false", "on", "off", "null":
		return strconv.Quote(s)
	}
	if plain.MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}

// count formats n with thousands separators.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return s
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
