package follow

import (
	"encoding/binary"
	"errors"
	"fmt"

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

// spill is one side of an audit pass, its records in a bucket a slice, so that
// memory holds one slice at a time whatever the table's size. A record is the
// key's two parts and the type (each a uvarint length and its bytes), the hash
// (8 bytes, little-endian) and the entity (a varint). add is safe for
// concurrent use.
type spill struct {
	*extsort.Buckets
}

// spillBuffer is each slice's write buffer.
const spillBuffer = 16 << 10

// newSpill creates slices buckets in dir.
func newSpill(dir *extsort.Group, side string, slices int) (spill, error) {
	b, err := dir.NewBuckets(side+"-", slices, spillBuffer)
	if err != nil {
		return spill{}, fmt.Errorf("audit: spill file: %w", err)
	}
	return spill{b}, nil
}

func (s spill) add(slice int, r auditRecord) error {
	err := s.Add(slice, func(b []byte) []byte {
		for _, part := range [...]string{r.key[0], r.key[1], r.typ} {
			b = binary.AppendUvarint(b, uint64(len(part)))
			b = append(b, part...)
		}
		b = binary.LittleEndian.AppendUint64(b, r.hash)
		return binary.AppendVarint(b, int64(r.entity))
	})
	if err != nil {
		return fmt.Errorf("audit: spill file: %w", err)
	}
	return nil
}

// flush writes out every slice; call it once every add has returned.
func (s spill) flush() error {
	if err := s.Flush(); err != nil {
		return fmt.Errorf("audit: spill file: %w", err)
	}
	return nil
}

// each calls fn with slice's records in the order added.
func (s spill) each(slice int, fn func(auditRecord) error) error {
	return s.Each(slice, func(b []byte) error {
		var parts [3]string
		for i := range parts {
			n, w := binary.Uvarint(b)
			if w <= 0 || n > uint64(len(b)-w) {
				return errSpillRecord
			}
			parts[i], b = string(b[w:w+int(n)]), b[w+int(n):]
		}
		if len(b) < 8 {
			return errSpillRecord
		}
		hash := binary.LittleEndian.Uint64(b)
		e, w := binary.Varint(b[8:])
		if w <= 0 || w != len(b)-8 {
			return errSpillRecord
		}
		return fn(auditRecord{key: [2]string{parts[0], parts[1]}, typ: parts[2], hash: hash, entity: int32(e)})
	})
}

var errSpillRecord = errors.New("audit: spill file: a record cut short")
