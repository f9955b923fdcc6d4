package draft

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// WriteBound renders b as a mapping file that mapping.Load accepts, from
// designed table b.Design of the file named from: each entity with a
// comment on how its table was chosen, and everything unbound as comments
// where it belongs and in a list at the end. The output depends only on b.
func WriteBound(w io.Writer, b *Bound, from string) error {
	bw := bufio.NewWriter(w)
	p := &printer{w: bw}
	p.line(0, "# yaml-language-server: $schema=mapping.schema.json")
	p.comment(0, "Drafted by `pg2dynamo init --from-design` from the DynamoDB MCP server's design")
	p.comment(0, "%s, table %s, bound to database %q, schema %s:", from, b.Design.Config.TableName, b.Catalog.Database, strings.Join(b.Catalog.Schemas, ", "))
	p.comment(0, "each entity over the table that holds its key and most of its fields; its other fields")
	p.comment(0, "copied from a parent (duplicate), counted (a *_count of a child table) or embedded (an")
	p.comment(0, "array a child table fills). Numbers in keys are zero-padded, so that they sort. Review,")
	p.comment(0, "then `pg2dynamo migrate` and `pg2dynamo verify`.")
	if len(b.Unbound) > 0 {
		p.comment(0, "UNBOUND: %d parts of the design are not bound (listed at the end): init exits 5 until they are.", len(b.Unbound))
	}
	p.line(0, "version: 1")
	p.line(0, "table:")
	p.line(1, "name: %s", q(b.Table))
	p.line(1, "partition_key: %s", q(b.PartitionKey))
	p.line(1, "sort_key: %s", q(cmpOr(b.SortKey, "SK")))
	if len(b.GSIs) > 0 {
		p.line(1, "gsis:")
	}
	for _, x := range b.GSIs {
		sk := ""
		if x.SortKey != "" {
			sk = ", sort_key: " + q(x.SortKey)
		}
		p.line(2, "- {name: %s, partition_key: %s%s}", q(x.Name), q(x.PartitionKey), sk)
	}
	if b.TypeAttribute != "type" {
		p.comment(0, `an entity has a field named "type": the entity type goes in %q instead`, b.TypeAttribute)
		p.line(0, "type_attribute: %s", q(b.TypeAttribute))
	}
	p.line(0, "entities:")
	for _, e := range b.Entities {
		p.boundEntity(b, e)
	}
	p.boundPatterns(b)
	if len(b.Unbound) > 0 {
		p.line(0, "")
		p.comment(0, "UNBOUND (resolve each: add the column or table to the source, or change the design):")
		for _, u := range b.Unbound {
			p.comment(0, "- %s", u)
		}
	}
	return bw.Flush()
}

func (p *printer) boundEntity(b *Bound, e *BoundEntity) {
	de := e.Design
	p.line(0, "")
	if e.Table == nil {
		p.comment(1, "UNBOUND entity %s (%s): pk %s, sk %s; see the end.", de.Name, de.EntityType, de.PKTemplate, de.SKTemplate)
		return
	}
	p.comment(1, "%s (%s): over %s, %s rows: %s.", de.Name, de.EntityType, e.Table.Name, count(e.Table.Rows), e.Why)
	for _, u := range b.Unbound {
		if strings.HasPrefix(u.Where, "entity "+de.Name+",") {
			p.comment(1, "UNBOUND %s: %s", strings.TrimPrefix(u.Where, "entity "+de.Name+", "), u.Why)
		}
	}
	for _, n := range e.Notes {
		p.comment(1, "%s", n)
	}
	p.line(1, "%s:", q(de.Name))
	p.line(2, "source: %s", source(e.Table))
	if de.EntityType != "" && de.EntityType != de.Name {
		p.line(2, "type: %s", q(de.EntityType))
	}
	p.line(2, "pk: %s", strconv.Quote(e.PK))
	p.line(2, "sk: %s", strconv.Quote(e.SK))
	if len(e.Indexes) > 0 {
		p.line(2, "indexes:")
	}
	for _, ix := range e.Indexes {
		sk, sparse := "", ""
		if ix.SK != "" {
			sk = ", sk: " + strconv.Quote(ix.SK)
		}
		if ix.Sparse {
			sparse = ", sparse: true"
		}
		p.line(3, "%s: {pk: %s%s%s}", q(ix.Name), strconv.Quote(ix.PK), sk, sparse)
	}
	p.line(2, "attributes:")
	p.line(3, "select: [%s]", list(e.Select))
	if len(e.Rename) > 0 {
		p.line(3, "rename: {%s}", pairs(e.Rename))
	}
	p.boundStrategies(e)
}

func (p *printer) boundStrategies(e *BoundEntity) {
	if len(e.Embeds) > 0 {
		p.line(2, "embed:")
	}
	for _, em := range e.Embeds {
		p.comment(3, "%s: the rows of %s (at most %d per %s in the data).", em.Attr, em.Child.Name, em.Max, singular(e.Table.Name))
		p.line(3, "%s:", q(em.Attr))
		p.line(4, "source: %s", source(em.Child))
		p.line(4, "join: {%s}", joinList(em.Join))
		if em.Column != "" {
			p.comment(4, "an array of values: a set of %s (no duplicates, no order)", em.Column)
			p.line(4, "as: set")
			p.line(4, "attributes: {select: [%s]}", q(em.Column))
			continue
		}
		if len(em.OrderBy) > 0 {
			p.line(4, "order_by: [%s]", list(em.OrderBy))
		}
		p.line(4, "attributes: {exclude: [%s]}", list(em.Exclude))
	}
	if len(e.Counts) > 0 {
		p.line(2, "aggregates:")
	}
	for _, c := range e.Counts {
		p.line(3, "%s: {function: count, source: %s, join: {%s}}", q(c.Attr), source(c.Child), joinList(c.Join))
	}
	if len(e.Duplicates) > 0 {
		p.line(2, "duplicate:")
	}
	for _, d := range e.Duplicates {
		p.comment(3, "from %s", d.Via)
		p.line(3, "- source: %s", source(d.Parent))
		p.line(4, "join: {%s}", joinList(d.Join))
		if len(d.Rename) > 0 {
			p.line(4, "attributes: {select: [%s], rename: {%s}}", list(d.Select), pairs(d.Rename))
		} else {
			p.line(4, "attributes: {select: [%s]}", list(d.Select))
		}
	}
}

func (p *printer) boundPatterns(b *Bound) {
	if len(b.Patterns) > 0 {
		p.line(0, "access_patterns:")
	}
	for _, bp := range b.Patterns {
		if bp.Why != "" {
			p.comment(1, "UNBOUND %s (entity %s): %s", bp.Name, bp.Entity.Name, bp.Why)
			continue
		}
		p.line(1, "%s:", q(bp.Name))
		p.line(2, "description: %s", strconv.Quote(bp.Description))
		if bp.Index != "" {
			p.line(2, "index: %s", q(bp.Index))
		}
		p.line(2, "key_condition: %s", strconv.Quote(bp.KeyCondition))
	}
	if len(b.Untranslated) > 0 {
		p.line(0, "")
		p.comment(0, "Not translated (not a read by key):")
		for _, s := range b.Untranslated {
			p.comment(0, "- %s", s)
		}
	}
}

func joinList(join [][2]string) string {
	var k, v []string
	for _, j := range join {
		k, v = append(k, j[0]), append(v, j[1])
	}
	return joinPairs(k, v)
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
		plurals(kinds[1], "count", "counts"), plurals(kinds[2], "embed", "embeds"), translated, plurals(len(b.Patterns), "access pattern", "access patterns"), cmpOr(out, "standard output"))
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
