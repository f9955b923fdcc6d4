package follow

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/pg2dynamo/pg2dynamo/internal/extsort"
)

// auditRecord is one item of an audit pass: its key, content hash, and its
// entity (the source's side) or type attribute (the table's side).
type auditRecord struct {
	key    [2]string
	hash   uint64
	entity int32
	typ    string
}

// spill is one side of an audit pass, its records in a temporary file per
// slice, so that memory holds one slice at a time whatever the table's size.
// A record is the key's two parts and the type (each a uvarint length and its
// bytes), the hash (8 bytes, little-endian) and the entity (a varint). add is
// safe for concurrent use; each runs after flush.
type spill struct {
	mu    sync.Mutex
	files []*os.File
	bufs  []*bufio.Writer
	rec   []byte
	// n counts the records added.
	n int64
}

const (
	// spillBuffer is each slice file's buffer.
	spillBuffer = 16 << 10
	// maxSpillPart bounds a key part or type read back: DynamoDB's item is at
	// most 400 KB.
	maxSpillPart = 400 << 10
)

// newSpill creates slices files in dir, unlinked where the system allows, so
// that their space is freed however the process ends.
func newSpill(dir *extsort.Group, side string, slices int) (*spill, error) {
	s := &spill{}
	for i := range slices {
		f, err := dir.TempFile(fmt.Sprintf("%s-%d-", side, i))
		if err != nil {
			s.close()
			return nil, fmt.Errorf("audit: spill file: %w", err)
		}
		s.files, s.bufs = append(s.files, f), append(s.bufs, bufio.NewWriterSize(f, spillBuffer))
	}
	return s, nil
}

func (s *spill) add(slice int, r auditRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.rec[:0]
	for _, part := range [...]string{r.key[0], r.key[1], r.typ} {
		b = binary.AppendUvarint(b, uint64(len(part)))
		b = append(b, part...)
	}
	b = binary.LittleEndian.AppendUint64(b, r.hash)
	b = binary.AppendVarint(b, int64(r.entity))
	s.rec = b
	s.n++
	if _, err := s.bufs[slice].Write(b); err != nil {
		return fmt.Errorf("audit: spill file: %w", err)
	}
	return nil
}

// flush writes out every buffer; call it once every add has returned.
func (s *spill) flush() error {
	for _, b := range s.bufs {
		if err := b.Flush(); err != nil {
			return fmt.Errorf("audit: spill file: %w", err)
		}
	}
	return nil
}

// each calls fn with slice's records in the order added.
func (s *spill) each(slice int, fn func(auditRecord) error) error {
	f := s.files[slice]
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("audit: spill file: %w", err)
	}
	r := bufio.NewReaderSize(f, spillBuffer)
	var parts [3]string
	var b []byte
	for {
		for i := range parts {
			n, err := binary.ReadUvarint(r)
			if i == 0 && errors.Is(err, io.EOF) {
				return nil
			}
			if err == nil && n > maxSpillPart {
				err = fmt.Errorf("a part of %d bytes", n)
			}
			if err != nil {
				return spillErr(err)
			}
			b = slices.Grow(b[:0], int(n))[:n]
			if _, err := io.ReadFull(r, b); err != nil {
				return spillErr(err)
			}
			parts[i] = string(b)
		}
		var h [8]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return spillErr(err)
		}
		e, err := binary.ReadVarint(r)
		if err != nil {
			return spillErr(err)
		}
		if err := fn(auditRecord{key: [2]string{parts[0], parts[1]}, typ: parts[2], hash: binary.LittleEndian.Uint64(h[:]), entity: int32(e)}); err != nil {
			return err
		}
	}
}

// spillErr is a spill file cut short or unreadable.
func spillErr(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("audit: spill file: %w", err)
}

// close closes the files; the pass closes their directory.
func (s *spill) close() {
	for _, f := range s.files {
		f.Close()
	}
}
