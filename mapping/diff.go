package mapping

import (
	"cmp"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// Diff is what changes between two versions of a mapping: per entity what its
// items gain or lose, the GSIs and access patterns added and removed, and the
// changes the table cannot take in place. It reads no database.
type Diff struct {
	// Entities are the changed entities in new order, then the removed ones in
	// old order.
	Entities []EntityDiff
	// GSIsAdded are the new mapping's GSIs the old lacks, in new order;
	// GSIsRemoved the reverse.
	GSIsAdded, GSIsRemoved []string
	// PatternsAdded, PatternsRemoved and PatternsChanged name access patterns;
	// they change no item.
	PatternsAdded, PatternsRemoved, PatternsChanged []string
	// Refusals say what changed that needs a new table.
	Refusals []string
}

// EntityDiff is one entity whose items change.
type EntityDiff struct {
	Entity string
	// Added: only the new mapping has it; Removed: only the old one (its items
	// are deleted).
	Added, Removed bool
	// Changes are one entry a change, e.g. "attribute added: email".
	Changes []string
	// Rekeyed: pk, sk or mirror templates change; old-key items are deleted and
	// new ones put.
	Rekeyed bool
	// OldType and NewType are the type attribute values in each mapping (""
	// where absent).
	OldType, NewType string
}

// Empty reports whether d changes no entity's items, GSI or access pattern.
func (d *Diff) Empty() bool {
	return len(d.Entities) == 0 && len(d.GSIsAdded) == 0 && len(d.GSIsRemoved) == 0 &&
		len(d.PatternsAdded) == 0 && len(d.PatternsRemoved) == 0 && len(d.PatternsChanged) == 0 && len(d.Refusals) == 0
}

// Compared returns the entities of new to compare with the table when d is
// applied: every entity whose type is an old or new type of d's entities. Types
// are all a table tells entities apart by, so a type's items are compared
// whole; an omitted entity of a compared type would have its items deleted as
// stale.
func (d *Diff) Compared(new *Mapping) []string {
	types := d.ComparedTypes()
	var out []string
	for _, e := range new.Entities {
		if slices.Contains(types, e.Type) {
			out = append(out, e.Name)
		}
	}
	return out
}

// ComparedTypes returns, sorted, every old and new type of d's entities.
func (d *Diff) ComparedTypes() []string {
	var out []string
	for _, e := range d.Entities {
		for _, t := range []string{e.OldType, e.NewType} {
			if t != "" && !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return out
}

// CheckVersions refuses next as a version of prev unless both share a non-empty
// name, the table's tag (load.OwnerOf). The error names both paths and names.
func CheckVersions(prev, next *Mapping, prevPath, nextPath string) error {
	if prev.Name == "" || next.Name == "" {
		return fmt.Errorf("the previous version %s is mapping %q, and %s is mapping %q: versions of a mapping are told apart by their common name (the identity the table is tagged with); give both the same name", prevPath, prev.Name, nextPath, next.Name)
	}
	if prev.Name != next.Name {
		return fmt.Errorf("the previous version %s is mapping %q, and %s is mapping %q: a new version of a mapping keeps its name (the identity the table is tagged with)", prevPath, prev.Name, nextPath, next.Name)
	}
	return nil
}

// RetiredTypes returns, sorted, the types old wrote and new does not; their
// items are deleted.
func (d *Diff) RetiredTypes(old, new *Mapping) []string {
	var out []string
	for _, e := range old.Entities {
		if !slices.ContainsFunc(new.Entities, func(n *Entity) bool { return n.Type == e.Type }) && !slices.Contains(out, e.Type) {
			out = append(out, e.Type)
		}
	}
	slices.Sort(out)
	return out
}

// Changes returns d as (what, change) lines in d's order, what an entity, GSI,
// pattern or "refused"; one "nothing" line when Empty.
func (d *Diff) Changes() [][2]string {
	var out [][2]string
	for _, e := range d.Entities {
		for _, c := range e.Changes {
			out = append(out, [2]string{"entity " + e.Entity, c})
		}
	}
	for _, g := range d.GSIsAdded {
		out = append(out, [2]string{"GSI " + g, "added (created before any item is written)"})
	}
	for _, g := range d.GSIsRemoved {
		out = append(out, [2]string{"GSI " + g, "removed (deleted once the items are in line with --drop-gsis, else kept in the table)"})
	}
	for _, ps := range []struct {
		names []string
		what  string
	}{{d.PatternsAdded, "added"}, {d.PatternsRemoved, "removed"}, {d.PatternsChanged, "changed"}} {
		for _, p := range ps.names {
			out = append(out, [2]string{"access pattern " + p, ps.what})
		}
	}
	for _, r := range d.Refusals {
		out = append(out, [2]string{"refused", r + " (needs a new table)"})
	}
	if len(out) == 0 {
		out = append(out, [2]string{"nothing", "the two versions write the same items"})
	}
	return out
}

// RefusedError refuses a new mapping version whose changes the table cannot
// take in place.
type RefusedError struct {
	Name     string
	Refusals []string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("mapping %s: these changes cannot be applied to the table in place: %s; nothing was written. Migrate into a new table with the new mapping (--table NEW --create-table --follow), then cut over to it (pg2dynamo cutover)",
		e.Name, strings.Join(e.Refusals, "; "))
}

// Err is a *RefusedError when d has refusals, else nil.
func (d *Diff) Err(name string) error {
	if len(d.Refusals) == 0 {
		return nil
	}
	return &RefusedError{Name: name, Refusals: d.Refusals}
}

// CompareMappings returns what changes from old to new, matching by name. An
// entity changes when anything shaping its items differs, every entity when the
// library does. Refused: table key attributes or types, the type attribute, a
// kept GSI's keys, key types or projection
// (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTable.html).
func CompareMappings(old, new *Mapping) *Diff {
	d := &Diff{}
	d.compareTable(old, new)
	library := !reflect.DeepEqual(old.Library, new.Library)
	for _, e := range new.Entities {
		o := old.Entity(e.Name)
		if o == nil {
			d.Entities = append(d.Entities, EntityDiff{Entity: e.Name, Added: true, NewType: e.Type, Changes: []string{"entity added"}})
			continue
		}
		ed := compareEntity(o, e)
		if library {
			ed.Changes = append(ed.Changes, "library: "+libraryName(old.Library)+" → "+libraryName(new.Library))
		}
		if len(ed.Changes) > 0 {
			d.Entities = append(d.Entities, ed)
		}
	}
	for _, o := range old.Entities {
		if new.Entity(o.Name) == nil {
			d.Entities = append(d.Entities, EntityDiff{Entity: o.Name, Removed: true, OldType: o.Type, Changes: []string{"entity removed"}})
		}
	}
	d.comparePatterns(old, new)
	return d
}

func libraryName(l Library) string {
	if l.Name == "" {
		return "none"
	}
	return l.Name
}

// compareTable fills d's GSIs and the table's refusals.
func (d *Diff) compareTable(old, new *Mapping) {
	ot, nt := &old.Table, &new.Table
	for i, attr := range [2][2]string{{ot.PartitionKey, nt.PartitionKey}, {ot.SortKey, nt.SortKey}} {
		what := [2]string{"partition key", "sort key"}[i]
		switch {
		case attr[0] != attr[1]:
			d.Refusals = append(d.Refusals, fmt.Sprintf("the table's %s attribute: %s → %s", what, orNone(attr[0]), orNone(attr[1])))
		case attr[0] != "" && ot.KeyType(attr[0]) != nt.KeyType(attr[1]):
			d.Refusals = append(d.Refusals, fmt.Sprintf("the type of the table's %s %s: %s → %s", what, attr[0], ot.KeyType(attr[0]), nt.KeyType(attr[1])))
		}
	}
	if old.TypeAttribute != new.TypeAttribute {
		d.Refusals = append(d.Refusals, fmt.Sprintf("the type attribute: %s → %s (it tells each entity's items apart in the table)", old.TypeAttribute, new.TypeAttribute))
	}
	for _, g := range nt.GSIs {
		og := ot.GSI(g.Name)
		if og == nil {
			d.GSIsAdded = append(d.GSIsAdded, g.Name)
			continue
		}
		if what := gsiKeyChange(ot, og, nt, &g); what != "" {
			d.Refusals = append(d.Refusals, fmt.Sprintf("GSI %s: %s (give the new index another name, and drop this one with --drop-gsis once nothing reads it)", g.Name, what))
		}
	}
	for _, g := range ot.GSIs {
		if nt.GSI(g.Name) == nil {
			d.GSIsRemoved = append(d.GSIsRemoved, g.Name)
		}
	}
}

// gsiKeyChange says how GSI n differs from o in what DynamoDB fixes at
// creation, or "".
func gsiKeyChange(ot *Table, o *GSI, nt *Table, n *GSI) string {
	switch {
	case !slices.Equal(o.KeyNames(), n.KeyNames()):
		return fmt.Sprintf("key attributes %s → %s", strings.Join(o.KeyNames(), ", "), strings.Join(n.KeyNames(), ", "))
	case !slices.Equal(gsiKeyTypes(ot, o), gsiKeyTypes(nt, n)):
		return fmt.Sprintf("key attribute types %s → %s", strings.Join(gsiKeyTypes(ot, o), ", "), strings.Join(gsiKeyTypes(nt, n), ", "))
	case o.Projection != n.Projection || !slices.Equal(o.NonKeyAttributes, n.NonKeyAttributes):
		return fmt.Sprintf("projection %s → %s", projection(o), projection(n))
	}
	return ""
}

// gsiKeyTypes are the types of g's key attributes, in KeyNames order.
func gsiKeyTypes(t *Table, g *GSI) []string {
	if g.MultiAttribute() {
		var out []string
		for _, a := range slices.Concat(g.PartitionKeys, g.SortKeys) {
			out = append(out, a.Type)
		}
		return out
	}
	var out []string
	for _, n := range g.KeyNames() {
		out = append(out, t.KeyType(n))
	}
	return out
}

func projection(g *GSI) string {
	p := cmp.Or(g.Projection, "ALL")
	if len(g.NonKeyAttributes) > 0 {
		p += " (" + strings.Join(g.NonKeyAttributes, ", ") + ")"
	}
	return p
}

func orNone(s string) string { return cmp.Or(s, "none") }

func compareEntity(o, n *Entity) EntityDiff {
	ed := EntityDiff{Entity: n.Name, OldType: o.Type, NewType: n.Type}
	add := func(format string, args ...any) { ed.Changes = append(ed.Changes, fmt.Sprintf(format, args...)) }
	if !reflect.DeepEqual(o.Source, n.Source) {
		add("source: %s → %s", o.Source, n.Source)
	}
	for _, k := range [][3]string{{"pk", o.PK, n.PK}, {"sk", o.SK, n.SK}} {
		if k[1] != k[2] {
			add("%s: %s → %s", k[0], orNone(k[1]), orNone(k[2]))
			ed.Rekeyed = true
		}
	}
	if !reflect.DeepEqual(o.Mirror, n.Mirror) {
		add("mirror: %s → %s", mirrorText(o.Mirror), mirrorText(n.Mirror))
		ed.Rekeyed = true
	}
	if o.Type != n.Type {
		add("type: %s → %s", o.Type, n.Type)
	}
	for _, g := range keysOf(o.Indexes, n.Indexes) {
		ok, nk := o.Indexes[g], n.Indexes[g]
		switch {
		case ok == nk:
		case ok == IndexKeys{}:
			add("GSI keys added: %s (%s)", g, indexText(nk))
		case nk == IndexKeys{}:
			add("GSI keys removed: %s", g)
		default:
			add("GSI keys of %s: %s → %s", g, indexText(ok), indexText(nk))
		}
	}
	compareAttributes(o.Attributes, n.Attributes, "", add)
	compareNamed("embedded child", o.Embed, n.Embed, add)
	compareNamed("aggregate", o.Aggregates, n.Aggregates, add)
	compareNamed("stable ID", o.IDs, n.IDs, add)
	compareDuplicates(o.Duplicate, n.Duplicate, add)
	return ed
}

func mirrorText(m *Mirror) string {
	if m == nil {
		return "none"
	}
	return "pk " + m.PK + ", sk " + m.SK
}

func indexText(k IndexKeys) string {
	if k.SK == "" {
		return "pk " + k.PK
	}
	return "pk " + k.PK + ", sk " + k.SK
}

func keysOf[V any](a, b map[string]V) []string {
	ks := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

// compareNamed reports which of o's and n's entries (by name) were added,
// removed or changed.
func compareNamed[V any](what string, o, n map[string]V, add func(string, ...any)) {
	for _, k := range keysOf(o, n) {
		ov, inOld := o[k]
		nv, inNew := n[k]
		switch {
		case !inOld:
			add("%s added: %s", what, k)
		case !inNew:
			add("%s removed: %s", what, k)
		case !reflect.DeepEqual(ov, nv):
			add("%s changed: %s", what, k)
		}
	}
}

// compareDuplicates reports duplicates (by source) added, removed or changed.
func compareDuplicates(o, n []*Duplicate, add func(string, ...any)) {
	bySource := func(ds []*Duplicate) map[string]*Duplicate {
		out := map[string]*Duplicate{}
		for i, d := range ds {
			k := d.Source.String()
			if _, ok := out[k]; ok || d.Source.IsQuery() {
				k = fmt.Sprintf("%s (#%d)", k, i+1)
			}
			out[k] = d
		}
		return out
	}
	compareNamed("duplicate", bySource(o), bySource(n), add)
}

// compareAttributes reports selects, excludes, renames and sets that differ,
// both ways.
func compareAttributes(o, n Attributes, prefix string, add func(string, ...any)) {
	lists := []struct {
		what string
		o, n []string
	}{
		{"attribute", o.Select, n.Select},
		{"excluded column", o.Exclude, n.Exclude},
		{"set attribute", o.Sets, n.Sets},
	}
	for _, l := range lists {
		for _, a := range l.n {
			if !slices.Contains(l.o, a) {
				add("%s%s added: %s", prefix, l.what, a)
			}
		}
		for _, a := range l.o {
			if !slices.Contains(l.n, a) {
				add("%s%s removed: %s", prefix, l.what, a)
			}
		}
	}
	for _, k := range keysOf(o.Rename, n.Rename) {
		if ov, nv := o.Rename[k], n.Rename[k]; ov != nv {
			add("%srename of %s: %s → %s", prefix, k, orNone(ov), orNone(nv))
		}
	}
}

// comparePatterns fills d's access patterns.
func (d *Diff) comparePatterns(old, new *Mapping) {
	find := func(m *Mapping, name string) *AccessPattern {
		for _, p := range m.AccessPatterns {
			if p.Name == name {
				return p
			}
		}
		return nil
	}
	for _, p := range new.AccessPatterns {
		switch o := find(old, p.Name); {
		case o == nil:
			d.PatternsAdded = append(d.PatternsAdded, p.Name)
		case o.Index != p.Index || o.KeyCondition != p.KeyCondition || o.Filter != p.Filter || !reflect.DeepEqual(o.ScanForward, p.ScanForward):
			d.PatternsChanged = append(d.PatternsChanged, p.Name)
		}
	}
	for _, p := range old.AccessPatterns {
		if find(new, p.Name) == nil {
			d.PatternsRemoved = append(d.PatternsRemoved, p.Name)
		}
	}
}
