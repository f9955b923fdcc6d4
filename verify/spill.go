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
)

// spill partitions records by a hash of their key into bucket files, so
// that a comparison can hold one bucket in memory at a time: memory grows
// with the bucket (about recordsPerBucket records), never with the table.
// Safe for concurrent use.
type spill struct {
	dir   string
	files []*os.File
	bufs  []*bufio.Writer
	mus   []sync.Mutex
}

// recordsPerBucket sizes the partitioning: buckets = expected records /
// recordsPerBucket, at least 1 and at most maxBuckets (open files).
const (
	recordsPerBucket = 10_000
	maxBuckets       = 1000
)

// side tells which side of the comparison a record comes from.
type side byte

const (
	fromSource side = 'S'
	fromTable  side = 'T'
)

func newSpill(expected int64) (*spill, error) {
	n := min(int(expected/recordsPerBucket)+1, maxBuckets)
	dir, err := os.MkdirTemp("", "pg2dynamo-verify-")
	if err != nil {
		return nil, fmt.Errorf("verify: temp dir: %w", err)
	}
	s := &spill{dir: dir, mus: make([]sync.Mutex, n)}
	for i := range n {
		f, err := os.Create(fmt.Sprintf("%s/bucket-%04d", dir, i))
		if err != nil {
			s.remove()
			return nil, fmt.Errorf("verify: bucket file: %w", err)
		}
		s.files = append(s.files, f)
		s.bufs = append(s.bufs, bufio.NewWriterSize(f, 16<<10))
	}
	return s, nil
}

func (s *spill) bucket(key string) int {
	h := fnv.New64a()
	h.Write([]byte(key))
	return int(h.Sum64() % uint64(len(s.files)))
}

// add appends one record: side, entity index (source) or -1, key, item.
func (s *spill) add(sd side, entity int, key string, item []byte) error {
	i := s.bucket(key)
	s.mus[i].Lock()
	defer s.mus[i].Unlock()
	w := s.bufs[i]
	var hdr [1 + 4 + 4 + 4]byte
	hdr[0] = byte(sd)
	binary.LittleEndian.PutUint32(hdr[1:], uint32(int32(entity)))
	binary.LittleEndian.PutUint32(hdr[5:], uint32(len(key)))
	binary.LittleEndian.PutUint32(hdr[9:], uint32(len(item)))
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	if _, err := w.WriteString(key); err != nil {
		return err
	}
	_, err := w.Write(item)
	return err
}

type record struct {
	side   side
	entity int
	key    string
	item   []byte
}

// each flushes the buckets and calls fn with the records of each bucket
// in turn.
func (s *spill) each(fn func(records []record) error) error {
	for i, w := range s.bufs {
		if err := w.Flush(); err != nil {
			return err
		}
		if _, err := s.files[i].Seek(0, io.SeekStart); err != nil {
			return err
		}
	}
	for _, f := range s.files {
		var recs []record
		r := bufio.NewReaderSize(f, 64<<10)
		for {
			var hdr [13]byte
			if _, err := io.ReadFull(r, hdr[:]); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return err
			}
			kl, il := binary.LittleEndian.Uint32(hdr[5:]), binary.LittleEndian.Uint32(hdr[9:])
			buf := make([]byte, kl+il)
			if _, err := io.ReadFull(r, buf); err != nil {
				return err
			}
			recs = append(recs, record{side: side(hdr[0]), entity: int(int32(binary.LittleEndian.Uint32(hdr[1:]))),
				key: string(buf[:kl]), item: buf[kl:]})
		}
		if err := fn(recs); err != nil {
			return err
		}
	}
	return nil
}

func (s *spill) remove() {
	for _, f := range s.files {
		f.Close()
	}
	os.RemoveAll(s.dir)
}
