package draft

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// WriteBound renders b, designed table b.Design of the file named from,
// as Write renders a draft: the *mapping.Mapping b binds (buildBound),
// with a comment on how each entity's table was chosen and everything
// unbound as comments where it belongs and in a list at the end.
// mapping.Parse reads the file back to that Mapping, its defaults applied
// (with no entity bound the file does not load: a mapping needs one). The
// output depends only on b and from. An error is the marshaller's or w's.
func WriteBound(w io.Writer, b *Bound, from string) error {
	m, l := buildBound(b, from)
	return writeMapping(w, m, l, "write the bound draft")
}

// buildBound returns the mapping b binds, with nothing Load would fill in
// but the table's key attributes, and its layout: an unbound entity's or
// pattern's comment goes above the next bound one of its map, or below
// the last; the lists of what is unbound go at the end of the file.
func buildBound(b *Bound, from string) (*mapping.Mapping, layout) {
	m := &mapping.Mapping{Version: 1, Name: MappingName(b.Table), Table: mapping.Table{Name: b.Table, PartitionKey: b.PartitionKey, SortKey: b.SortKey,
		PartitionKeyType: b.keyType(b.PartitionKey), SortKeyType: b.keyType(b.SortKey)}}
	var l layout
	l.add(note{path: at(mapping.KeyVersion), head: boundHeader(b, from)})
	l.add(note{path: at(mapping.KeyName), head: nameComment})
	for _, x := range b.GSIs {
		g := mapping.GSI{Name: x.Name, PartitionKey: x.PartitionKey, SortKey: x.SortKey}
		// The design's projection; ALL is the mapping's default.
		if x.Projection != mapping.ProjectAll {
			g.Projection, g.NonKeyAttributes = x.Projection, nonEmpty(x.Included)
		}
		if b.multi(x) {
			g.PartitionKey, g.SortKey = "", ""
			g.PartitionKeys, g.SortKeys = b.multiKeyAttrs(x)
			m.Table.GSIs = append(m.Table.GSIs, g)
			continue
		}
		// A table key attribute the index reuses has the table's type.
		if g.PartitionKey != b.PartitionKey && g.PartitionKey != b.SortKey {
			g.PartitionKeyType = b.keyType(g.PartitionKey)
		}
		if g.SortKey != b.PartitionKey && g.SortKey != b.SortKey {
			g.SortKeyType = b.keyType(g.SortKey)
		}
		m.Table.GSIs = append(m.Table.GSIs, g)
	}
	if b.TypeAttribute != mapping.DefaultTypeAttribute {
		m.TypeAttribute = b.TypeAttribute
		l.add(note{path: at(mapping.KeyTypeAttribute), head: []string{
			commentText(`an entity has a field named "type": the entity type goes in %q instead`, b.TypeAttribute),
		}})
	}
	tail := slices.Concat(boundEntities(b, m, &l), boundPatterns(b, m, &l), boundLists(b))
	if len(tail) == 0 {
		return m, l
	}
	// The last top-level key written.
	last := mapping.KeyTable
	switch {
	case len(m.AccessPatterns) > 0:
		last = mapping.KeyAccessPatterns
	case len(m.Entities) > 0:
		last = mapping.KeyEntities
	case m.TypeAttribute != "":
		last = mapping.KeyTypeAttribute
	}
	l.add(note{path: at(last), foot: tail, blank: true})
	return m, l
}

// boundEntities adds b's bound entities to m, laying out their comments
// (see buildBound). It returns the comment lines left to place at the
// end: the unbound entities' when none is bound.
func boundEntities(b *Bound, m *mapping.Mapping, l *layout) []string {
	// loose are the comment lines of unbound entities not yet placed,
	// each followed by a blank line.
	var loose []string
	for _, e := range b.Entities {
		de := e.Design
		if e.Table == nil {
			loose = append(loose, commentText("UNBOUND entity %s (%s): pk %s, sk %s; see the end.", de.Name, de.EntityType, de.PKTemplate, de.SKTemplate), "")
			continue
		}
		l.add(note{path: at(mapping.KeyEntities, de.Name), head: append(loose, entityComment(b, e)...), blank: true})
		loose = nil
		m.Entities = append(m.Entities, boundEntity(e, l))
	}
	if len(m.Entities) == 0 || len(loose) == 0 {
		return loose
	}
	l.add(note{path: at(mapping.KeyEntities, m.Entities[len(m.Entities)-1].Name), foot: loose[:len(loose)-1], blank: true})
	return nil
}

// boundPatterns adds b's translated access patterns to m as
// boundEntities adds entities.
func boundPatterns(b *Bound, m *mapping.Mapping, l *layout) []string {
	var loose []string
	for _, bp := range b.Patterns {
		if bp.Why != "" {
			loose = append(loose, commentText("UNBOUND %s (entity %s): %s", bp.Name, bp.Entity.Name, bp.Why))
			continue
		}
		if len(loose) > 0 {
			l.add(note{path: at(mapping.KeyAccessPatterns, bp.Name), head: loose})
			loose = nil
		}
		m.AccessPatterns = append(m.AccessPatterns, &mapping.AccessPattern{
			Name: bp.Name, Description: bp.Description, Index: bp.Index, KeyCondition: bp.KeyCondition, Filter: bp.Filter,
		})
	}
	if len(loose) == 0 {
		return nil
	}
	if len(m.AccessPatterns) == 0 {
		return append(loose, "")
	}
	l.add(note{path: at(mapping.KeyAccessPatterns, m.AccessPatterns[len(m.AccessPatterns)-1].Name), foot: loose})
	return nil
}

// boundLists are the comment lines at the end of the file: the access
// patterns not translated, then what is unbound, a blank line between.
func boundLists(b *Bound) []string {
	var out []string
	if len(b.Untranslated) > 0 {
		out = append(out, commentText("Not translated (not a read by key):"))
		for _, s := range b.Untranslated {
			out = append(out, commentText("- %s", s))
		}
		out = append(out, "")
	}
	if len(b.Unbound) > 0 {
		out = append(out, commentText("UNBOUND (resolve each: add the column or table to the source, or change the design):"))
		for _, u := range b.Unbound {
			out = append(out, commentText("- %s", u))
		}
	}
	return out
}

// boundHeader is the comment at the top of the file: where the draft
// comes from, how it binds, and how much of it is unbound.
func boundHeader(b *Bound, from string) []string {
	out := []string{
		"yaml-language-server: $schema=mapping.schema.json",
		"Drafted by `pg2dynamo init --from-design` from the DynamoDB MCP server's design",
		commentText("%s, table %s, bound to database %q, schema %s:", from, b.Design.Config.TableName, b.Catalog.Database, strings.Join(b.Catalog.Schemas, ", ")),
		"each entity over the table that holds its key and most of its fields; its other fields",
		"copied from a parent (duplicate), counted (a *_count of a child table) or embedded (an",
		"array a child table fills). Keys hold the design's text: a {number} as plain digits, as",
		"the design's code writes it, zero-padded only where the design says so ({n:010d}).",
		"Review, then `pg2dynamo migrate` and `pg2dynamo verify`.",
	}
	if len(b.Unbound) > 0 {
		out = append(out, fmt.Sprintf("UNBOUND: %d parts of the design are not bound (listed at the end): init exits 5 until they are.", len(b.Unbound)))
	}
	return out
}

// entityComment is the comment above bound entity e: its table and why,
// what of it is unbound, and its notes.
func entityComment(b *Bound, e *BoundEntity) []string {
	de := e.Design
	out := []string{commentText("%s (%s): over %s, %s rows: %s.", de.Name, de.EntityType, e.Table.Name, count(e.Table.Rows), e.Why)}
	prefix := "entity " + de.Name + ", "
	for _, u := range b.Unbound {
		if where, ok := strings.CutPrefix(u.Where, prefix); ok {
			out = append(out, commentText("UNBOUND %s: %s", where, u.Why))
		}
	}
	for _, n := range e.Notes {
		out = append(out, commentText("%s", n))
	}
	return out
}

// boundEntity returns bound entity e's mapping entity, and lays out the
// comments and flow style of its strategies.
func boundEntity(e *BoundEntity, l *layout) *mapping.Entity {
	de := e.Design
	here := func(path ...any) []any { return append([]any{mapping.KeyEntities, de.Name}, path...) }
	me := &mapping.Entity{Name: de.Name, Source: entitySource(e), PK: e.PK, SK: e.SK,
		Attributes: mapping.Attributes{Select: nonEmpty(e.Select), Rename: nonEmptyMap(e.Rename)}}
	if de.EntityType != de.Name {
		me.Type = de.EntityType
	}
	for _, ix := range e.Indexes {
		put(&me.Indexes, ix.Name, mapping.IndexKeys{PK: ix.PK, SK: ix.SK, Sparse: ix.Sparse})
	}
	for _, em := range e.Embeds {
		path := here(mapping.KeyEmbed, em.Attr)
		l.add(note{path: path, head: []string{
			commentText("%s: the rows of %s (at most %d per %s in the data).", em.Attr, em.Child.Name, em.Max, singular(e.Table.Name)),
		}})
		x := &mapping.Embed{Source: sourceOf(em.Child), Join: joinOf(em.Join)}
		if em.Column != "" {
			l.add(note{path: append(slices.Clip(path), mapping.KeyAs), head: []string{
				commentText("an array of values: a set of %s (no duplicates, no order)", em.Column),
			}})
			x.As, x.Attributes.Select = mapping.EmbedSet, []string{em.Column}
		} else {
			x.OrderBy, x.Attributes.Exclude = nonEmpty(em.OrderBy), nonEmpty(em.Exclude)
		}
		if !isZero(x.Attributes) {
			l.add(note{path: append(slices.Clip(path), mapping.KeyAttributes), flow: true})
		}
		put(&me.Embed, em.Attr, x)
	}
	for _, c := range e.Counts {
		put(&me.Aggregates, c.Attr, &mapping.Aggregate{Function: mapping.AggCount, Source: sourceOf(c.Child), Join: joinOf(c.Join)})
	}
	for i, d := range e.Duplicates {
		x := &mapping.Duplicate{Source: sourceOf(d.Parent), Join: joinOf(d.Join),
			Attributes: mapping.Attributes{Select: nonEmpty(d.Select), Rename: nonEmptyMap(d.Rename)}}
		l.add(note{path: here(mapping.KeyDuplicate, i), head: []string{commentText("from %s", d.Via)}})
		if !isZero(x.Attributes) {
			l.add(note{path: here(mapping.KeyDuplicate, i, mapping.KeyAttributes), flow: true})
		}
		me.Duplicate = append(me.Duplicate, x)
	}
	return me
}

// isZero reports whether a is empty, so that the marshaller leaves it out.
func isZero(a mapping.Attributes) bool {
	return len(a.Select) == 0 && len(a.Exclude) == 0 && len(a.Rename) == 0 && len(a.Sets) == 0
}

// joinOf is pairs, each (other source's column, this entity's), as a
// mapping join.
func joinOf(pairs [][2]string) mapping.Join {
	j := make(mapping.Join, len(pairs))
	for _, p := range pairs {
		j[p[0]] = p[1]
	}
	return j
}

// nonEmpty is s, or nil when s is empty: a mapping file reads no empty
// list back.
func nonEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// nonEmptyMap is m, or nil when m is empty.
func nonEmptyMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// Summary is init's closing lines for b: what was bound, where it went,
// and what is unbound.
func (b *Bound) Summary(out string) string {
	n := 0
	var kinds [3]int
	for _, e := range b.Entities {
		if e.Table != nil {
			n++
		}
		kinds[0] += len(e.Duplicates)
		kinds[1] += len(e.Counts)
		kinds[2] += len(e.Embeds)
	}
	translated := len(slices.DeleteFunc(slices.Clone(b.Patterns), func(p *BoundPattern) bool { return p.Why != "" }))
	s := fmt.Sprintf("bound %d of %s of %s (%s, %s, %s) and %d of %s to %s",
		n, plurals(len(b.Entities), "entity", "entities"), b.Design.Config.TableName, plurals(kinds[0], "duplicate", "duplicates"),
		plurals(kinds[1], "count", "counts"), plurals(kinds[2], "embed", "embeds"), translated, plurals(len(b.Patterns), "access pattern", "access patterns"), cmp.Or(out, "standard output"))
	for _, u := range b.Untranslated {
		s += "\nnot translated: " + u
	}
	if len(b.Unbound) == 0 {
		return s
	}
	s += fmt.Sprintf("\n%d unbound (also listed as comments in the draft):", len(b.Unbound))
	for _, u := range b.Unbound {
		s += "\n  " + u.String()
	}
	return s
}

// plurals is "1 entity", "2 entities".
func plurals(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
