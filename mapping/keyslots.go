package mapping

// KeySlot is one key attribute an entity's items carry (table, GSI or mirror
// key) and the template rendering it: the one list of an entity's keys every
// stage reads.
type KeySlot struct {
	// Attr is the key attribute.
	Attr string
	// Template renders it.
	Template Template
	// Index is the GSI; "" for the table's keys and the mirror's.
	Index string
	// Mirror: a key of the mirror item (always a table key).
	Mirror bool
	// Sort: a sort key; else a partition key.
	Sort bool
	// Type is Attr's type (Table.KeyType); an N or B template is written as the
	// value itself.
	Type string
	// Sorted: some index sorts by Attr (Table.Sorts), so its numbers are
	// zero-padded.
	Sorted bool
	// Sparse: a NULL placeholder leaves the item out of Index
	// (IndexKeys.Sparse).
	Sparse bool
	// Path is the template's dotted path (entities.Order.indexes.ByDate.sk).
	Path string
}

// KeySlots are an entity's key slots (Mapping.KeySlots).
type KeySlots []KeySlot

// KeySlots returns e's key slots: table keys, then each templated GSI key in
// table order, then the mirror's.
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

// KeySlots returns ap's key condition templates as slots of the queried index
// (a BETWEEN's upper bound a second slot), at the key condition's path; none on
// a multi-attribute GSI (KeyCondition.Terms).
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

// Find returns the slot of attr on the own items (mirror items if mirror), and
// whether there is one. When two GSIs share attr, the last in table order wins.
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

// Mirrored reports whether the slots end with a mirror's keys.
func (ss KeySlots) Mirrored() bool { return len(ss) > 0 && ss[len(ss)-1].Mirror }

// Sorts reports whether some index sorts by attr (a sort key, or an inverted
// index's table partition key): its numbers are zero-padded.
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
