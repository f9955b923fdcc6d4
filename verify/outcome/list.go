package outcome

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/pg2dynamo/pg2dynamo/internal/extsort"
)

// List is one of a Result's lists, sorted by item key: the first entries found,
// up to verify.Options.MaxListed, on disk until Result.Close (in memory when
// made by NewList or decoded). It marshals as a JSON array. The zero List is
// empty.
type List[T any] struct {
	mem []T
	// s holds on-disk records: a uvarint key length, the item key, the entry's
	// JSON.
	s *extsort.Sorter
}

// NewList returns a list of entries, held in memory, in the order given.
func NewList[T any](entries ...T) List[T] { return List[T]{mem: entries} }

// Len returns the number of entries listed.
func (l List[T]) Len() int {
	if l.s != nil {
		return int(l.s.Len())
	}
	return len(l.mem)
}

// All yields the entries in order with any disk read error, which ends the
// iteration.
func (l List[T]) All() iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		if l.s == nil {
			for _, e := range l.mem {
				if !yield(e, nil) {
					return
				}
			}
			return
		}
		stop := errors.New("stop")
		err := l.s.Each(func(rec []byte) error {
			var e T
			if err := json.Unmarshal(listEntryJSON(rec), &e); err != nil {
				return fmt.Errorf("verify: read list entry: %w", err)
			}
			if !yield(e, nil) {
				return stop
			}
			return nil
		})
		if err != nil && err != stop {
			var zero T
			yield(zero, err)
		}
	}
}

// Slice returns the entries, all in memory.
func (l List[T]) Slice() ([]T, error) {
	out := make([]T, 0, l.Len())
	for e, err := range l.All() {
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Head returns the first n entries (all if fewer), in memory.
func (l List[T]) Head(n int) ([]T, error) {
	var out []T
	if n <= 0 {
		return out, nil
	}
	for e, err := range l.All() {
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		if len(out) == n {
			break
		}
	}
	return out, nil
}

// MarshalJSON encodes the entries as a JSON array, in memory.
func (l List[T]) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := l.WriteJSON(&b, "", ""); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// UnmarshalJSON decodes a JSON array (or null) of entries into memory.
func (l *List[T]) UnmarshalJSON(b []byte) error {
	var mem []T
	if err := json.Unmarshal(b, &mem); err != nil {
		return err
	}
	*l = List[T]{mem: mem}
	return nil
}

// WriteJSON streams the entries to w as json.MarshalIndent(entries, prefix,
// indent) lays them out (compact when indent is empty); "[]" when empty.
func (l List[T]) WriteJSON(w io.Writer, prefix, indent string) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	n := 0
	var ind bytes.Buffer
	write := func(entry []byte) error {
		sep := ","
		if n == 0 {
			sep = "["
		}
		n++
		bw.WriteString(sep)
		if indent == "" {
			_, err := bw.Write(entry)
			return err
		}
		bw.WriteString("\n" + prefix + indent)
		ind.Reset()
		if err := json.Indent(&ind, entry, prefix+indent, indent); err != nil {
			return err
		}
		_, err := bw.Write(ind.Bytes())
		return err
	}
	var err error
	if l.s == nil {
		for _, e := range l.mem {
			var entry []byte
			if entry, err = json.Marshal(e); err == nil {
				err = write(entry)
			}
			if err != nil {
				break
			}
		}
	} else {
		err = l.s.Each(func(rec []byte) error { return write(listEntryJSON(rec)) })
	}
	if err != nil {
		return fmt.Errorf("verify: write list: %w", err)
	}
	switch {
	case n == 0:
		bw.WriteString("[]")
	case indent != "":
		bw.WriteString("\n" + prefix + "]")
	default:
		bw.WriteString("]")
	}
	return bw.Flush()
}

func listEntryJSON(rec []byte) []byte {
	kl, n := binary.Uvarint(rec)
	return rec[n+int(kl):]
}

func listKey(rec []byte) []byte {
	kl, n := binary.Uvarint(rec)
	return rec[n : n+int(kl)]
}

// compareListRecords orders list records by item key, then by entry.
func compareListRecords(a, b []byte) int {
	if c := bytes.Compare(listKey(a), listKey(b)); c != 0 {
		return c
	}
	return bytes.Compare(listEntryJSON(a), listEntryJSON(b))
}

// ListCount is the length of one of a Result's lists.
type ListCount struct {
	// Total is how many entries the list has in all: an exact count.
	Total int64 `json:"total"`
	// Listed is how many the List holds: the first found, at most
	// verify.Options.MaxListed.
	Listed int `json:"listed"`
}

// Truncated reports whether entries were left out of the list.
func (c ListCount) Truncated() bool { return c.Total > int64(c.Listed) }

// ListCounts gives the exact length of each of a Result's lists.
type ListCounts struct {
	Missing    ListCount `json:"missing"`
	Extra      ListCount `json:"extra"`
	Duplicates ListCount `json:"duplicates"`
	Changed    ListCount `json:"changed"`
	InFlight   ListCount `json:"in_flight"`
}

// ListBuilder counts every entry offered and keeps the first max on disk.
type ListBuilder[T any] struct {
	s     *extsort.Sorter
	max   int
	total int64
	rec   []byte
}

// NewListBuilder keeps its entries in a sorter of g named name, up to max.
func NewListBuilder[T any](g *extsort.Group, name string, max int) *ListBuilder[T] {
	return &ListBuilder[T]{s: g.NewSorter(name, compareListRecords), max: max}
}

// Add counts an entry and keeps it while the list is not full.
func (b *ListBuilder[T]) Add(key string, e T) error {
	b.total++
	if b.s.Len() >= int64(b.max) {
		return nil
	}
	j, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("verify: list entry: %w", err)
	}
	b.rec = binary.AppendUvarint(b.rec[:0], uint64(len(key)))
	b.rec = append(append(b.rec, key...), j...)
	return b.s.Add(b.rec)
}

// Full reports whether an entry added now would only be counted.
func (b *ListBuilder[T]) Full() bool { return b.s.Len() >= int64(b.max) }

// List returns the list and its count.
func (b *ListBuilder[T]) List() (List[T], ListCount) {
	return List[T]{s: b.s}, ListCount{Total: b.total, Listed: int(b.s.Len())}
}
