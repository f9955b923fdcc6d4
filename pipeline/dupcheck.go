package pipeline

import (
	"fmt"
	"hash/maphash"
	"math/bits"

	"github.com/pg2dynamo/pg2dynamo/transform"
)

// dupKind says where a row's item key was already taken.
type dupKind int

const (
	// dupOwnItems: two of the row's own items (it and its mirror).
	dupOwnItems dupKind = iota
	// dupInBatch: an item of an earlier row in the batch being filled.
	dupInBatch
	// dupEarlier: an item of an earlier row of the run (keySet).
	dupEarlier
)

// duplicate is an item key of a row that is already taken, and by whom.
type duplicate struct {
	key  [2]string
	kind dupKind
	// keeper is, for dupInBatch, the index in the batch of the item that
	// keeps the key; for dupEarlier, the entity (index in plans) of the
	// row that keeps it.
	keeper int
}

// reason is the reject reason: the item key and the row that keeps it.
// For dupInBatch that row is named by its source key; for dupEarlier by its
// entity only, since the run-wide check keeps a hash of each key and no
// more (the row is the first of that entity, in its read order, that
// renders the key). batch is the batch being filled.
func (d duplicate) reason(plans []*transform.Plan, batch []transform.Item, keyAttrs [2]string) string {
	head := fmt.Sprintf("duplicate primary key (%s)", transform.DescribeKey(keyAttrs, d.key))
	switch d.kind {
	case dupOwnItems:
		return head + ": the row's own items (a mirror of itself) have the same key"
	case dupInBatch:
		it := batch[d.keeper]
		p := plans[it.Entity]
		return fmt.Sprintf("%s: row %s of entity %s keeps it", head, transform.FormatSourceKey(p.SourceKey(it.Row)), p.Entity().Name)
	}
	return fmt.Sprintf("%s: an earlier row of entity %s keeps it", head, plans[d.keeper].Entity().Name)
}

// keyCheck is one reader's scratch for checking that no two items share a
// primary key: the keys of the row being checked and of the items of the
// batch being filled (at most 25), each with a hash, so that a look-up is
// a scan of a few words. With reading the key attributes it costs about
// 0.1 µs an item (BenchmarkKeyCheck), 2–3% of converting a row
// (transform's BenchmarkItems). Not safe for concurrent use.
type keyCheck struct {
	keyAttrs [2]string
	seed     maphash.Seed
	row      keyList
	batch    keyList // by index in the batch
}

// keyList is a short list of item keys with their hashes.
type keyList struct {
	sums []uint64
	keys [][2]string
}

// index returns the index of key k, of hash h, in l, or -1.
func (l *keyList) index(h uint64, k [2]string) int {
	for j, s := range l.sums {
		if s == h && l.keys[j] == k {
			return j
		}
	}
	return -1
}

func (l *keyList) add(h uint64, k [2]string) {
	l.sums = append(l.sums, h)
	l.keys = append(l.keys, k)
}

func (l *keyList) reset() {
	l.sums, l.keys = l.sums[:0], l.keys[:0]
}

func newKeyCheck(keyAttrs [2]string) *keyCheck {
	return &keyCheck{keyAttrs: keyAttrs, seed: maphash.MakeSeed()}
}

// newBatch forgets the keys of the batch: a new one is being filled.
func (c *keyCheck) newBatch() { c.batch.reset() }

// check looks for an item key of items (one row's) that is taken: by
// another of the row's items, by an item of the batch, or, when seen is not
// nil, by a row seen claimed earlier in the run. When none is, the row's
// keys are claimed in seen for owner (the row's entity's index in its
// collision group) and check returns false; accept must then follow when
// the row joins the batch. A rejected row leaves no trace.
func (c *keyCheck) check(items []transform.Item, seen *keySet, owner int) (duplicate, bool) {
	c.row.reset()
	for _, it := range items {
		k := transform.ItemKey(it.Attrs, c.keyAttrs)
		h := maphash.String(c.seed, k[0]) ^ bits.RotateLeft64(maphash.String(c.seed, k[1]), 1)
		if c.row.index(h, k) >= 0 {
			return duplicate{key: k, kind: dupOwnItems}, true
		}
		if at := c.batch.index(h, k); at >= 0 {
			return duplicate{key: k, kind: dupInBatch, keeper: at}, true
		}
		c.row.add(h, k)
	}
	if seen != nil {
		if k, keeper, taken := seen.claim(c.row.keys, owner); taken {
			return duplicate{key: k, kind: dupEarlier, keeper: keeper}, true
		}
	}
	return duplicate{}, false
}

// accept records the keys of the row check last passed as items of the
// batch, in order.
func (c *keyCheck) accept() {
	for j, k := range c.row.keys {
		c.batch.add(c.row.sums[j], k)
	}
}

// keySet remembers a 64-bit hash of every primary key a collision group's
// rows claimed in a run, with the entity that claimed it, to catch two rows
// that render one key. It is an open-addressing table of hashes (linear
// probing, at most 3/4 full, doubled when it is): 8 bytes a slot, 11 to 21
// bytes an item. The entity's index in the group takes the low
// b = ⌈log₂ entities⌉ bits of a slot and the top bit marks it used, so
// 63−b bits of hash remain: two different keys share them with probability
// about n²/2^(64−b) (1 in 18 million for 1M items of a one-entity group);
// the later row would then be rejected as a duplicate, not lost.
//
// A collision group is read by one reader at a time, so keySet is not safe
// for concurrent use.
type keySet struct {
	h       maphash.Hash
	members []int    // the group's entities (indexes in plans), by owner
	bits    uint     // low bits of a slot holding the owner
	slots   []uint64 // 0 marks an empty slot
	n       int
}

// newKeySet returns an empty set for the group of entities members (at
// least one; indexes in plans); an entity's owner index is its index in
// members.
func newKeySet(members []int) *keySet {
	s := &keySet{members: members, bits: uint(bits.Len(uint(len(members) - 1))), slots: make([]uint64, 1<<12)}
	s.h.SetSeed(maphash.MakeSeed())
	return s
}

// value is the slot value of key k claimed by owner: the hash with its top
// bit set (never 0, the empty mark) and its low bits replaced by owner.
func (s *keySet) value(k [2]string, owner int) uint64 {
	s.h.Reset()
	s.h.WriteString(k[0])
	s.h.WriteByte(0)
	s.h.WriteString(k[1])
	mask := uint64(1)<<s.bits - 1
	return (s.h.Sum64()|1<<63)&^mask | uint64(owner)
}

// claim records the keys of one row of the group's entity owner (an index
// in members), all or none: when one of them was claimed before, it
// returns that key, the entity (index in plans) that claimed it and true,
// and records nothing.
func (s *keySet) claim(keys [][2]string, owner int) ([2]string, int, bool) {
	for _, k := range keys {
		if prev, ok := s.find(s.value(k, owner)); ok {
			return k, s.members[prev], true
		}
	}
	for _, k := range keys {
		if s.insert(s.value(k, owner)) {
			continue // a key of the row that shares another's hash
		}
		s.n++
		if s.n*4 > len(s.slots)*3 {
			old := s.slots
			s.slots = make([]uint64, 2*len(old))
			for _, v := range old {
				if v != 0 {
					s.insert(v)
				}
			}
		}
	}
	return [2]string{}, 0, false
}

// find returns the owner that claimed v's hash, if one did.
func (s *keySet) find(v uint64) (int, bool) {
	i, ok := s.probe(v)
	return int(s.slots[i] & (1<<s.bits - 1)), ok
}

// insert puts v in the table unless its hash is there, and reports whether
// it was.
func (s *keySet) insert(v uint64) bool {
	i, ok := s.probe(v)
	if !ok {
		s.slots[i] = v
	}
	return ok
}

// probe returns the index of the slot holding v's hash and true, or of the
// empty slot where it belongs and false.
func (s *keySet) probe(v uint64) (uint64, bool) {
	owner := uint64(1)<<s.bits - 1
	mask := uint64(len(s.slots) - 1)
	for i := (v >> s.bits) & mask; ; i = (i + 1) & mask {
		switch w := s.slots[i]; {
		case w == 0:
			return i, false
		case w&^owner == v&^owner:
			return i, true
		}
	}
}
