package mapping

import (
	"fmt"
	"maps"
	"slices"
)

// JoinKind is the kind of a join rule: the entity field that declares it.
type JoinKind string

// Join kinds.
const (
	JoinDuplicate JoinKind = "duplicate"
	JoinEmbed     JoinKind = "embed"
	JoinAggregate JoinKind = "aggregate"
)

// JoinKinds lists every join kind, in the order Entity.Joins lists them.
// A stage that handles joins kind by kind is tested against each.
var JoinKinds = []JoinKind{JoinDuplicate, JoinEmbed, JoinAggregate}

// JoinRule is one rule of an entity that joins another source to its
// rows: a duplicate, an embed or an aggregate. It is the one list of an
// entity's joins that every stage reads (Load checks them, prepare
// describes their sources, transform compiles them, follow follows their
// tables, plan prints them).
type JoinRule struct {
	Kind JoinKind
	// Attr is the attribute the rule fills (an embed's, an aggregate's);
	// "" for a duplicate, whose Duplicate.Attributes name those it copies.
	Attr string
	// Index is a duplicate's position in Entity.Duplicate; 0 otherwise.
	Index int
	// Path is the rule's dotted path: entities.Order.duplicate[0],
	// entities.Order.embed.lines.
	Path string
	// Source is the joined source; On the equi-join, {its column: the
	// entity's column}. Zero for an undefined rule.
	Source Source
	On     Join
	// Parent: each row joins at most one row of Source (a duplicate),
	// whose join columns must be a unique key of it; else Source's rows
	// are children, any number per row.
	Parent bool
	// The rule itself: the field of its kind is set, nil for a rule the
	// file leaves undefined (an empty value, or one Checkable leaves out).
	Duplicate *Duplicate
	Embed     *Embed
	Aggregate *Aggregate
}

// Defined reports whether the rule has a value (see the rule fields).
func (j JoinRule) Defined() bool { return j.Duplicate != nil || j.Embed != nil || j.Aggregate != nil }

// SourcePath is the dotted path of the rule's source.
func (j JoinRule) SourcePath() string { return Path(j.Path, KeySource) }

// Joins returns entity e's join rules: its duplicates in Duplicate
// order, then its embeds, then its aggregates, each by attribute name.
// An undefined rule (nil) is listed too, with only Kind, Attr, Index and
// Path set (Defined is false).
func (e *Entity) Joins() []JoinRule {
	ep := Path(KeyEntities, e.Name)
	out := make([]JoinRule, 0, len(e.Duplicate)+len(e.Embed)+len(e.Aggregates))
	for i, d := range e.Duplicate {
		j := JoinRule{Kind: JoinDuplicate, Index: i, Path: fmt.Sprintf("%s.%s[%d]", ep, KeyDuplicate, i), Parent: true, Duplicate: d}
		if d != nil {
			j.Source, j.On = d.Source, d.Join
		}
		out = append(out, j)
	}
	for _, name := range slices.Sorted(maps.Keys(e.Embed)) {
		em := e.Embed[name]
		j := JoinRule{Kind: JoinEmbed, Attr: name, Path: Path(ep, KeyEmbed, name), Embed: em}
		if em != nil {
			j.Source, j.On = em.Source, em.Join
		}
		out = append(out, j)
	}
	for _, name := range slices.Sorted(maps.Keys(e.Aggregates)) {
		a := e.Aggregates[name]
		j := JoinRule{Kind: JoinAggregate, Attr: name, Path: Path(ep, KeyAggregates, name), Aggregate: a}
		if a != nil {
			j.Source, j.On = a.Source, a.Join
		}
		out = append(out, j)
	}
	return out
}

// withJoins returns a copy of e holding only the join rules keep accepts
// (a duplicate left out stays as nil, so that the others keep their index
// and path).
func (e *Entity) withJoins(keep func(JoinRule) bool) *Entity {
	c := *e
	c.Duplicate = make([]*Duplicate, len(e.Duplicate))
	c.Embed = map[string]*Embed{}
	c.Aggregates = map[string]*Aggregate{}
	for _, j := range e.Joins() {
		if !keep(j) {
			continue
		}
		switch j.Kind {
		case JoinDuplicate:
			c.Duplicate[j.Index] = j.Duplicate
		case JoinEmbed:
			c.Embed[j.Attr] = j.Embed
		case JoinAggregate:
			c.Aggregates[j.Attr] = j.Aggregate
		}
	}
	return &c
}

// Keys returns the names of the table's partition and sort key
// attributes, in that order; the sort key's is "" when the table has none.
func (t *Table) Keys() [2]string { return [2]string{t.PartitionKey, t.SortKey} }
