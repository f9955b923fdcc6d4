package pipeline

import (
	"fmt"
	"hash/maphash"
	"math/bits"

	"github.com/pg2dynamo/pg2dynamo/transform"
)

// dupKind says where a row's item key was taken: its own items, the batch, or
// the run (keySet).
type dupKind int

const (
	dupOwnItems dupKind = iota
	dupInBatch
	dupEarlier
)

// duplicate is a row's item key already taken, and by whom.
type duplicate struct {
	key  [2]string
	kind dupKind
	// keeper is the keeping item's batch index, or the keeping entity's.
	keeper int
}

// reason names the keeper; dupEarlier only its entity, as keySet keeps hashes.
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

// keyCheck is one reader's scratch checking that no two items share a key: the
// row's and the batch's keys (at most 25) with their hashes.
type keyCheck struct {
	keyAttrs [2]string
	seed     maphash.Seed
	row      keyList
	batch    keyList // by index in the batch
}

type keyList struct {
	sums []uint64
	keys [][2]string
}

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

func (c *keyCheck) newBatch() { c.batch.reset() }

// check reports a key of the row's items taken by another, by the batch, or
// (seen set) by the run; else it claims them in seen for owner, and accept must
// follow. A rejected row leaves no trace.
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

// accept adds the keys of the row check last passed to the batch.
func (c *keyCheck) accept() {
	for j, k := range c.row.keys {
		c.batch.add(c.row.sums[j], k)
	}
}

// keySet holds a 64-bit hash of every key a collision group claimed, with the
// claiming entity, in an open-addressing table (8 bytes a slot, 11 to 21 an
// item). The owner takes the low b = ⌈log₂ entities⌉ bits: two keys collide with
// probability about n²/2^(64−b), and the later row is then rejected, not lost.
// Not safe for concurrent use.
type keySet struct {
	h       maphash.Hash
	members []int    // the group's entities (indexes in plans), by owner
	bits    uint     // low bits of a slot holding the owner
	slots   []uint64 // 0 marks an empty slot
	n       int
}

func newKeySet(members []int) *keySet {
	s := &keySet{members: members, bits: uint(bits.Len(uint(len(members) - 1))), slots: make([]uint64, 1<<12)}
	s.h.SetSeed(maphash.MakeSeed())
	return s
}

// value is k's hash, top bit set (0 is empty), owner in the low bits.
func (s *keySet) value(k [2]string, owner int) uint64 {
	s.h.Reset()
	s.h.WriteString(k[0])
	s.h.WriteByte(0)
	s.h.WriteString(k[1])
	mask := uint64(1)<<s.bits - 1
	return (s.h.Sum64()|1<<63)&^mask | uint64(owner)
}

// claim records a row's keys, all or none, or returns a taken key and its
// entity.
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

func (s *keySet) find(v uint64) (int, bool) {
	i, ok := s.probe(v)
	return int(s.slots[i] & (1<<s.bits - 1)), ok
}

func (s *keySet) insert(v uint64) bool {
	i, ok := s.probe(v)
	if !ok {
		s.slots[i] = v
	}
	return ok
}

// probe returns v's slot and true, or the empty slot for it and false.
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
