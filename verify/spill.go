package verify

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"sync"

	"github.com/pg2dynamo/pg2dynamo/internal/extsort"
)

// spill partitions records by key hash into bucket files so a comparison holds
// one bucket in memory at a time: memory grows with the bucket, not the table.
// Its files are unlinked on creation. Safe for concurrent use.
type spill struct {
	g     *extsort.Group
	files []*os.File
	bufs  []*bufio.Writer
	mus   []sync.Mutex
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

// newSpill creates bucket files for about expected items a side in g's
// directory.
func newSpill(g *extsort.Group, expected int64) (*spill, error) {
	n := int(min(expected/itemsPerBucket+1, maxBuckets))
	size := min(max(spillBuffer/n, 2<<10), 64<<10)
	s := &spill{g: g, mus: make([]sync.Mutex, n)}
	for range n {
		f, err := g.TempFile("bucket-*")
		if err != nil {
			s.close()
			return nil, err
		}
		s.files = append(s.files, f)
		s.bufs = append(s.bufs, bufio.NewWriterSize(f, size))
	}
	return s, nil
}

func (s *spill) bucket(key string) int {
	h := fnv.New64a()
	h.Write([]byte(key))
	return int(h.Sum64() % uint64(len(s.files)))
}

// recordHeader is a record header's size: side, entity, key, item and type
// lengths.
const recordHeader = 1 + 4 + 4 + 4 + 4

// add appends a record: side, entity index (-1 for a table item), key,
// canonical item and, for a table item, its type.
func (s *spill) add(sd side, entity int, key string, item []byte, typ string) error {
	i := s.bucket(key)
	s.mus[i].Lock()
	defer s.mus[i].Unlock()
	w := s.bufs[i]
	var hdr [recordHeader]byte
	hdr[0] = byte(sd)
	binary.LittleEndian.PutUint32(hdr[1:], uint32(int32(entity)))
	binary.LittleEndian.PutUint32(hdr[5:], uint32(len(key)))
	binary.LittleEndian.PutUint32(hdr[9:], uint32(len(item)))
	binary.LittleEndian.PutUint32(hdr[13:], uint32(len(typ)))
	w.Write(hdr[:])
	w.WriteString(key)
	w.Write(item)
	if _, err := w.WriteString(typ); err != nil {
		return fmt.Errorf("verify: write bucket: %w", err)
	}
	return nil
}

type record struct {
	side   side
	entity int
	key    string
	item   []byte
	typ    string
}

// each flushes the buckets and calls fn with each bucket's records, valid
// during the call; no add after.
func (s *spill) each(fn func(records []record) error) error {
	for _, w := range s.bufs {
		if err := w.Flush(); err != nil {
			return fmt.Errorf("verify: write bucket: %w", err)
		}
	}
	s.bufs = nil // their memory, while the buckets are read; no record is added after

	r := bufio.NewReaderSize(nil, 64<<10)
	var recs []record
	for _, f := range s.files {
		recs = recs[:0]
		r.Reset(io.NewSectionReader(f, 0, 1<<62))
		for {
			var hdr [recordHeader]byte
			if _, err := io.ReadFull(r, hdr[:]); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return fmt.Errorf("verify: read bucket: %w", err)
			}
			kl, il, tl := binary.LittleEndian.Uint32(hdr[5:]), binary.LittleEndian.Uint32(hdr[9:]), binary.LittleEndian.Uint32(hdr[13:])
			buf := make([]byte, kl+il+tl)
			if _, err := io.ReadFull(r, buf); err != nil {
				return fmt.Errorf("verify: read bucket: %w", err)
			}
			recs = append(recs, record{side: side(hdr[0]), entity: int(int32(binary.LittleEndian.Uint32(hdr[1:]))),
				key: string(buf[:kl]), item: buf[kl : kl+il], typ: string(buf[kl+il:])})
		}
		if err := fn(recs); err != nil {
			return err
		}
		clear(recs) // let the bucket's records go before the next is read
	}
	return nil
}

func (s *spill) close() {
	for _, f := range s.files {
		f.Close()
	}
	s.files = nil
}
