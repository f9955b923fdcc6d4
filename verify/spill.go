package verify

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/pg2dynamo/pg2dynamo/internal/extsort"
)

// spill partitions records by key hash into buckets, so that a comparison holds
// one bucket in memory at a time: memory grows with the bucket, not the table.
// add is safe for concurrent use.
type spill struct {
	*extsort.Buckets
}

// Bucket sizing: expected items / itemsPerBucket buckets, from 1 to maxBuckets
// (open files); past that, buckets grow with the table. The write buffers share
// spillBuffer bytes, each between 2 and 64 KB.
const (
	itemsPerBucket = 1_000
	maxBuckets     = 1024
	spillBuffer    = 2 << 20
)

type side byte

const (
	fromSource side = 'S'
	fromTable  side = 'T'
)

// newSpill creates buckets for about expected items a side in g's directory.
func newSpill(g *extsort.Group, expected int64) (spill, error) {
	n := int(min(expected/itemsPerBucket+1, maxBuckets))
	b, err := g.NewBuckets("bucket-*", n, min(max(spillBuffer/n, 2<<10), 64<<10))
	if err != nil {
		return spill{}, err
	}
	return spill{b}, nil
}

// recordHeader is a record header's size: side, entity, key and item lengths.
const recordHeader = 1 + 4 + 4 + 4

// add appends a record: side, entity index (-1 for a table item), key,
// canonical item and, for a table item, its type.
func (s spill) add(sd side, entity int, key string, item []byte, typ string) error {
	err := s.Add(s.bucket(key), func(b []byte) []byte {
		b = append(b, byte(sd))
		b = binary.LittleEndian.AppendUint32(b, uint32(int32(entity)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(key)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(item)))
		return append(append(append(b, key...), item...), typ...)
	})
	if err != nil {
		return fmt.Errorf("verify: write bucket: %w", err)
	}
	return nil
}

// bucket is key's FNV-1a hash modulo the buckets: the same bucket in every run,
// so that the lists' samples are.
func (s spill) bucket(key string) int {
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h = (h ^ uint64(key[i])) * 1099511628211
	}
	return int(h % uint64(s.Len()))
}

type record struct {
	side   side
	entity int
	key    string
	item   []byte
	typ    string
}

// each calls fn with each bucket's records, valid during the call; no add
// after.
func (s spill) each(fn func(records []record) error) error {
	if err := s.Flush(); err != nil {
		return fmt.Errorf("verify: write bucket: %w", err)
	}
	var recs []record
	for i := range s.Len() {
		recs = recs[:0]
		err := s.Each(i, func(b []byte) error {
			if len(b) < recordHeader {
				return errRecord
			}
			kl, il := binary.LittleEndian.Uint32(b[5:]), binary.LittleEndian.Uint32(b[9:])
			if uint64(len(b)-recordHeader) < uint64(kl)+uint64(il) {
				return errRecord
			}
			body := b[recordHeader:]
			recs = append(recs, record{side: side(b[0]), entity: int(int32(binary.LittleEndian.Uint32(b[1:]))),
				key: string(body[:kl]), item: append([]byte(nil), body[kl:kl+il]...), typ: string(body[kl+il:])})
			return nil
		})
		if err != nil {
			return err
		}
		if err := fn(recs); err != nil {
			return err
		}
		clear(recs) // let the bucket's records go before the next is read
	}
	return nil
}

var errRecord = errors.New("verify: read bucket: a record cut short")
