package mapping

import (
	"fmt"
	"maps"
	"slices"
)

// JoinKind is the entity field that declares a join rule.
type JoinKind string

// Join kinds.
const (
	JoinDuplicate JoinKind = "duplicate"
	JoinEmbed     JoinKind = "embed"
	JoinAggregate JoinKind = "aggregate"
)

// JoinKinds lists every kind in Entity.Joins order; kind-by-kind stages are
// tested against each.
var JoinKinds = []JoinKind{JoinDuplicate, JoinEmbed, JoinAggregate}

// JoinRule is one duplicate, embed or aggregate joining another source to an
// entity's rows.
type JoinRule struct {
	Kind JoinKind
	// Attr is what an embed or aggregate fills; "" for a duplicate.
	Attr string
	// Index is a duplicate's position in Entity.Duplicate; 0 otherwise.
	Index int
	// Path is the rule's dotted path: entities.Order.duplicate[0],
	// entities.Order.embed.lines.
	Path string
	// Source is the joined source, On the equi-join {its column: entity's
	// column}; zero when undefined.
	Source Source
	On     Join
	// Parent: each row joins at most one Source row (a duplicate); else any
	// number of children.
	Parent bool
	// The rule itself, nil when undefined (empty in the file, or left out by
	// Checkable).
	Duplicate *Duplicate
	Embed     *Embed
	Aggregate *Aggregate
}

// Defined reports whether the rule has a value (see the rule fields).
func (j JoinRule) Defined() bool { return j.Duplicate != nil || j.Embed != nil || j.Aggregate != nil }

// SourcePath is the dotted path of the rule's source.
func (j JoinRule) SourcePath() string { return Path(j.Path, KeySource) }

// Joins returns e's duplicates, embeds, then aggregates by attribute name; an
// undefined rule has only Kind, Attr, Index and Path.
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

// withJoins copies e keeping the rules keep accepts (a dropped duplicate stays
// nil, keeping indexes).
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

// Keys returns the table's partition and sort key names; the sort key's is ""
// without one.
func (t *Table) Keys() [2]string { return [2]string{t.PartitionKey, t.SortKey} }
