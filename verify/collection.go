package verify

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// memberKey names the items of one entity, or of its mirror.
type memberKey struct {
	entity int
	mirror bool
}

// collectionMember is an entity (or its mirror) in the item collection a
// pattern reads whole: its partition key template matches the pattern's,
// placeholder for placeholder. For extract.Source.CountMatching, pairs places
// the pattern's columns against the entity's and notNull are its GSI sort key's
// columns. skip says why PostgreSQL cannot count it (a duplicated parent column
// or stable ID placeholder).
type collectionMember struct {
	memberKey
	pairs   []extract.ColumnPair
	notNull []string
	skip    string
}

// collectionMembers returns the members of the collection pp reads, parameters
// sampled from plans[from]: all of it on the partition key alone; with
// begins_with of a literal, the entities whose sort key template starts with
// it; no parameter: the entities of that literal. nil for another sort key
// condition or a filter.
func collectionMembers(m *mapping.Mapping, plans []*transform.Plan, pp *transform.PatternPlan, from int) []collectionMember {
	if pp.MultiAttribute() {
		return nil // its partition key attributes are the items' own, no key templates
	}
	kc := pp.Pattern.Condition
	prefix, byPrefix := "", kc.SortOp == "begins_with" && len(kc.Sort.Columns()) == 0
	if byPrefix {
		prefix = kc.Sort.Source
	}
	if kc.SortAttr != "" && !byPrefix || pp.Pattern.FilterExpr != nil || from < 0 && len(pp.Params) > 0 {
		return nil
	}
	sortAttr := m.Table.SortKey
	if g := m.Table.GSI(pp.Pattern.Index); g != nil {
		sortAttr = g.SortKey
	}
	var out []collectionMember
	for i, p := range plans {
		slots := p.KeySlots()
		for _, s := range slots {
			if s.Attr != kc.PartitionAttr || s.Index != "" && s.Index != pp.Pattern.Index {
				continue
			}
			pairs, ok := sameShape(kc.Partition, s.Template)
			if !ok {
				continue
			}
			for j := range pairs {
				pairs[j].SameType = sameType(plans[from], pairs[j].Home, p, pairs[j].Other)
			}
			cm := collectionMember{memberKey: memberKey{i, s.Mirror}, pairs: pairs}
			ss, hasSort := findSlot(slots, sortAttr, s.Mirror, pp.Pattern.Index)
			switch {
			case pp.Pattern.Index != "" && sortAttr != "" && !hasSort:
				continue // not in the index
			case pp.Pattern.Index != "" && sortAttr != "":
				cm.notNull = ss.Template.Columns()
			}
			if byPrefix {
				in, why := startsWith(ss.Template, prefix)
				if !in && why == "" {
					continue // its keys never begin with the prefix
				}
				cm.skip = why
			}
			var cols []string
			for _, pr := range pairs {
				cols = append(cols, pr.Other)
			}
			if cm.skip == "" && !hasColumns(p.SourceColumns(), slices.Concat(cols, cm.notNull)) {
				cm.skip = fmt.Sprintf("its template %q names a column its source does not have", s.Template.Source)
			}
			out = append(out, cm)
		}
	}
	return out
}

// startsWith reports whether every sort key tpl renders begins with prefix, by
// its literal text, or why that text is too short to say (POST# then a
// placeholder, for POST#2024).
func startsWith(tpl mapping.Template, prefix string) (bool, string) {
	lit := tpl.Prefix()
	whole := len(tpl.Columns()) == 0
	switch {
	case strings.HasPrefix(lit, prefix):
		return true, ""
	case whole || !strings.HasPrefix(prefix, lit):
		return false, ""
	}
	return false, fmt.Sprintf("its sort key template %q does not say whether its keys begin with %q", tpl.Source, prefix)
}

// sameType reports whether the two columns have one type, neither an array.
func sameType(pa *transform.Plan, a string, pb *transform.Plan, b string) bool {
	find := func(p *transform.Plan, name string) *extract.Column {
		cols := p.SourceColumns()
		if i := slices.IndexFunc(cols, func(c extract.Column) bool { return c.Name == name }); i >= 0 {
			return &cols[i]
		}
		return nil
	}
	ca, cb := find(pa, a), find(pb, b)
	return ca != nil && cb != nil && ca.Type == cb.Type && !ca.Array && !cb.Array
}

func findSlot(slots mapping.KeySlots, attr string, mirror bool, index string) (mapping.KeySlot, bool) {
	for _, s := range slots {
		if s.Attr == attr && s.Mirror == mirror && (s.Index == "" || s.Index == index) {
			return s, true
		}
	}
	return mapping.KeySlot{}, false
}

// sameShape reports whether t and u have the same literals and placeholder
// places, pairing t's placeholders with u's. Widths are not compared: the count
// finds their different key text.
func sameShape(t, u mapping.Template) ([]extract.ColumnPair, bool) {
	if len(t.Parts) != len(u.Parts) {
		return nil, false
	}
	var pairs []extract.ColumnPair
	for i, a := range t.Parts {
		b := u.Parts[i]
		switch {
		case (a.Column == "") != (b.Column == ""):
			return nil, false
		case a.Column == "" && a.Literal != b.Literal:
			return nil, false
		case a.Column != "":
			pairs = append(pairs, extract.ColumnPair{Home: a.Column, Other: b.Column})
		}
	}
	return pairs, true
}

// checkCollection compares, for a matched check, each member's items in the
// answer with PostgreSQL's count of that collection for the check's parameters;
// a difference fails res. Members PostgreSQL cannot count are named in res's
// Note, which says so when none can be.
func (ps *patternSample) checkCollection(ctx context.Context, src source, plans []*transform.Plan, c *patternCheck, res *outcome.PatternResult) error {
	if len(ps.members) == 0 {
		return nil
	}
	addNote(res, ps.skippedMembers(plans))
	if !res.OK || res.InFlight > 0 {
		return nil
	}
	var home mapping.Source
	if ps.from >= 0 {
		home = plans[ps.from].Entity().Source
	}
	var problems []string
	for _, cm := range ps.members {
		if cm.skip != "" {
			continue
		}
		e := plans[cm.entity].Entity()
		name := memberName(e, cm.mirror)
		exclude, why := ps.rejected.of(e.Name)
		if why != "" {
			addNote(res, fmt.Sprintf("entity %s is not counted in the item collection: %s", name, why))
			continue
		}
		n, err := src.CountMatching(ctx, home, ps.pp.Params, c.values, e.Source, cm.pairs, cm.notNull, exclude)
		if err != nil {
			return fmt.Errorf("pattern %s: %w", ps.pp.Pattern.Name, err)
		}
		c.counted, c.collection = true, c.collection+n
		if got := c.members[cm.memberKey]; got != n {
			var on []string
			for _, p := range cm.pairs {
				on = append(on, p.Other+" has the text of the parameter "+p.Home)
			}
			if len(on) == 0 && len(cm.notNull) > 0 {
				on = append(on, strings.Join(cm.notNull, ", ")+" are not NULL")
			}
			whose := ""
			if len(on) > 0 {
				whose = " whose " + strings.Join(on, " and ")
			}
			problems = append(problems, fmt.Sprintf("entity %s has %d items in it, but PostgreSQL has %d rows of %s%s",
				name, got, n, sourceName(e.Source), whose))
		}
	}
	if len(problems) > 0 {
		res.OK = false
		res.Problem = "the item collection differs from the source's: " + strings.Join(problems, "; ") +
			": an entity's partition key text differs from the pattern's, or rows give no item"
	}
	return nil
}

// memberName names an entity, or its mirror, in a message.
func memberName(e *mapping.Entity, mirror bool) string {
	if mirror {
		return e.Name + "'s mirror"
	}
	return e.Name
}

// skippedMembers says which members PostgreSQL cannot count and why; "" for
// none.
func (ps *patternSample) skippedMembers(plans []*transform.Plan) string {
	var skipped []string
	for _, cm := range ps.members {
		if cm.skip != "" {
			skipped = append(skipped, fmt.Sprintf("entity %s (%s)", memberName(plans[cm.entity].Entity(), cm.mirror), cm.skip))
		}
	}
	switch {
	case len(skipped) == 0:
		return ""
	case len(skipped) == len(ps.members):
		return "the item collection is not checked whole: PostgreSQL can count none of its entities, " + strings.Join(skipped, "; ") +
			"; its items are compared with the derived items alone"
	}
	return "not counted by PostgreSQL in the item collection: " + strings.Join(skipped, "; ")
}

func addNote(res *outcome.PatternResult, note string) {
	switch {
	case note == "":
	case res.Note == "":
		res.Note = note
	default:
		res.Note += "; " + note
	}
}

// maxRejectedKeys bounds the rejected rows an entity's collection counts
// leave out, each a condition of PostgreSQL's count.
const maxRejectedKeys = 1000

// keyTypes are the primary key column types whose text (transform's, in a
// reject's source key) PostgreSQL reads back as the same value.
var keyTypes = map[string]bool{"int2": true, "int4": true, "int8": true, "text": true, "varchar": true, "uuid": true}

// rejectedRows are the rows a source pass rejected, by entity: each row's
// primary key, or why its rows cannot be left out of a count. Safe for
// concurrent use; the zero value is empty.
type rejectedRows struct {
	mu   sync.Mutex
	keys map[string][]map[string]any
	why  map[string]string
}

// add records r, a row of an entity of plans.
func (rr *rejectedRows) add(plans []*transform.Plan, r pipeline.Reject) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if rr.keys == nil {
		rr.keys, rr.why = map[string][]map[string]any{}, map[string]string{}
	}
	if rr.why[r.Entity] != "" {
		return
	}
	if len(rr.keys[r.Entity]) == maxRejectedKeys {
		rr.why[r.Entity] = fmt.Sprintf("more than %d of its rows were rejected", maxRejectedKeys)
		return
	}
	i := slices.IndexFunc(plans, func(p *transform.Plan) bool { return p.Entity().Name == r.Entity })
	key := map[string]any{}
	if i >= 0 {
		for _, c := range plans[i].Query().Columns {
			if !c.PrimaryKey {
				continue
			}
			v := r.SourceKey[c.Name]
			if !keyTypes[c.Type] || c.Array || v == nil {
				rr.why[r.Entity] = fmt.Sprintf("rows of it were rejected, and PostgreSQL cannot tell them by their primary key column %s (%s)", c.Name, c.Type)
				return
			}
			key[c.Name] = v
		}
	}
	if len(key) == 0 {
		rr.why[r.Entity] = "rows of it were rejected, and its source has no primary key to tell them by"
		return
	}
	rr.keys[r.Entity] = append(rr.keys[r.Entity], key)
}

// of returns the primary keys of entity's rejected rows, or why they cannot
// be left out of a count.
func (rr *rejectedRows) of(entity string) ([]map[string]any, string) {
	if rr == nil {
		return nil, ""
	}
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return rr.keys[entity], rr.why[entity]
}
