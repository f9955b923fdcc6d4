package mapping

// KeySlot is one key attribute an entity's items carry and the parsed
// template that renders it: the table's partition or sort key, a GSI's, or
// one of the mirror item's. It is the one list of an entity's keys that
// every stage reads (transform compiles its slots into key plans, the
// library checks hold them to the preset, verify orders by them, plan
// prints them).
type KeySlot struct {
	// Attr is the key attribute.
	Attr string
	// Template renders it.
	Template Template
	// Index is the GSI the attribute keys; "" for the table's keys (and
	// the mirror's).
	Index string
	// Mirror: a key of the entity's mirror item (always a table key).
	Mirror bool
	// Sort: the sort key of its index (or of the table); else the
	// partition key.
	Sort bool
	// Type is Attr's type (Table.KeyType): TypeString, or TypeNumber or
	// TypeBinary, whose template is one placeholder (or, for a number, a
	// literal number) written as the value itself.
	Type string
	// Sorted: some index sorts by Attr (Table.Sorts), so its numbers are
	// zero-padded to sort in numeric order.
	Sorted bool
	// Sparse: Index is sparse for the entity (IndexKeys.Sparse): a NULL
	// placeholder leaves the item out of it.
	Sparse bool
	// Path is the template's dotted path in the mapping file
	// (entities.Order.indexes.ByDate.sk).
	Path string
}

// KeySlots are an entity's key slots (Mapping.KeySlots).
type KeySlots []KeySlot

// KeySlots returns entity e's key slots: partition and sort key (the
// partition key alone when the table has no sort key), then the keys of
// each GSI the entity is in, in the table's GSI order (an index key
// without a template is left out), then its mirror's partition and sort
// key (its partition key alone without a table sort key). The templates
// are those Load parsed.
func (m *Mapping) KeySlots(e *Entity) KeySlots {
	t := &m.Table
	ep := Path(KeyEntities, e.Name)
	slot := func(attr string, tpl Template, sort bool, path string) KeySlot {
		return KeySlot{Attr: attr, Template: tpl, Type: t.KeyType(attr), Sort: sort, Sorted: t.Sorts(attr), Path: path}
	}
	out := KeySlots{slot(t.PartitionKey, e.PKTemplate, false, Path(ep, KeyPK))}
	if t.SortKey != "" {
		out = append(out, slot(t.SortKey, e.SKTemplate, true, Path(ep, KeySK)))
	}
	for _, g := range t.GSIs {
		pair, ok := e.IndexTemplate[g.Name]
		if !ok {
			continue
		}
		ip := Path(ep, KeyIndexes, g.Name)
		for i, k := range []struct{ attr, key string }{{g.PartitionKey, KeyPK}, {g.SortKey, KeySK}} {
			if pair[i].IsZero() {
				continue
			}
			s := slot(k.attr, pair[i], i == 1, Path(ip, k.key))
			s.Index, s.Sparse = g.Name, e.Indexes[g.Name].Sparse
			out = append(out, s)
		}
	}
	if mi := e.Mirror; mi != nil {
		mp := Path(ep, KeyMirror)
		keys := []KeySlot{slot(t.PartitionKey, mi.PKTemplate, false, Path(mp, KeyPK))}
		if t.SortKey != "" {
			keys = append(keys, slot(t.SortKey, mi.SKTemplate, true, Path(mp, KeySK)))
		}
		for _, s := range keys {
			s.Mirror = true
			out = append(out, s)
		}
	}
	return out
}

// KeySlots returns the key templates of access pattern ap's key condition
// as slots of the index it queries: the partition key, then the sort key
// and, for BETWEEN, its upper bound (a second slot of the same attribute),
// each at the path of the key condition. A pattern on a GSI with
// multi-attribute keys has none: its values are attributes' values, not
// rendered keys (KeyCondition.Terms, AccessPattern.TermTypes).
func (ap *AccessPattern) KeySlots(t *Table) []KeySlot {
	if ap.MultiAttributeIndex(t) != nil {
		return nil
	}
	kc := ap.Condition
	path := Path(KeyAccessPatterns, ap.Name, KeyKeyCondition)
	slot := func(attr string, tpl Template, sort bool) KeySlot {
		return KeySlot{Attr: attr, Template: tpl, Type: t.KeyType(attr), Index: ap.Index, Sort: sort, Sorted: t.Sorts(attr), Path: path}
	}
	out := []KeySlot{slot(kc.PartitionAttr, kc.Partition, false)}
	if kc.SortAttr != "" {
		out = append(out, slot(kc.SortAttr, kc.Sort, true))
		if kc.SortOp == "between" {
			out = append(out, slot(kc.SortAttr, kc.SortHigh, true))
		}
	}
	return out
}

// Find returns the slot of key attribute attr on the entity's own items
// (on its mirror items if mirror), as the item writes it, and whether
// there is one (never for attr ""): the table's keys come from pk and sk (mirror.pk and
// mirror.sk), a GSI's from its indexes entry, the last in the table's GSI
// order when two GSIs share the attribute (a mirror item has no GSI
// keys).
func (ss KeySlots) Find(attr string, mirror bool) (KeySlot, bool) {
	var found KeySlot
	ok := false
	if attr == "" {
		return found, false // no such key (a table without a sort key)
	}
	for _, s := range ss {
		if s.Attr != attr || s.Mirror != mirror {
			continue
		}
		if s.Index == "" {
			return s, true // a table key attribute is no GSI's (Load)
		}
		found, ok = s, true
	}
	return found, ok
}

// Mirrored reports whether the entity writes a mirror item: its slots
// end with the mirror's keys.
func (ss KeySlots) Mirrored() bool { return len(ss) > 0 && ss[len(ss)-1].Mirror }

// Sorts reports whether some index sorts by attr: the table's sort key, or
// a GSI's sort key (an inverted index sorts by the table's partition key).
// Number placeholders are zero-padded in such attributes, so that string
// order equals numeric order wherever order matters.
func (t *Table) Sorts(attr string) bool {
	if attr == "" {
		return false
	}
	if attr == t.SortKey {
		return true
	}
	for _, g := range t.GSIs {
		if g.SortKey == attr {
			return true
		}
	}
	return false
}
