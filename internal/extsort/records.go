package extsort

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sync"
)

// Records is an append-only file of records (byte strings, each written as a
// uvarint length and its bytes, as a sorter's runs are), read back in the order
// appended. Its file is one of its group's, unlinked on creation and closed
// with the group if not before. Not safe for concurrent use.
type Records struct {
	f    *os.File
	w    *bufio.Writer
	size int
	n    int64
}

// NewRecords creates a record file named after name in g's directory, with a
// write buffer of buffer bytes.
func (g *Group) NewRecords(name string, buffer int) (*Records, error) {
	f, err := g.TempFile(name)
	if err != nil {
		return nil, err
	}
	r := &Records{f: f, size: buffer}
	g.records = append(g.records, r)
	return r, nil
}

// Append adds rec at the end.
func (r *Records) Append(rec []byte) error {
	if r.w == nil {
		r.w = bufio.NewWriterSize(r.f, r.size)
	}
	if err := writeRecord(r.w, rec); err != nil {
		return fmt.Errorf("extsort: write records: %w", err)
	}
	r.n++
	return nil
}

// Flush writes out the buffered records and drops the write buffer, so that
// memory holds none while the file is read; Append may go on after.
func (r *Records) Flush() error {
	if r.w == nil {
		return nil
	}
	err := r.w.Flush()
	r.w = nil
	if err != nil {
		return fmt.Errorf("extsort: write records: %w", err)
	}
	return nil
}

// Each calls fn with every record in the order appended, once Flush has
// written them out; rec is valid during the call only.
func (r *Records) Each(fn func(rec []byte) error) error {
	if err := r.Flush(); err != nil {
		return err
	}
	end, err := r.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return fmt.Errorf("extsort: records: %w", err)
	}
	src := newRunSource(r.f, end)
	for {
		rec, err := src.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}

// Close closes the file, freeing its space; closing again does nothing.
func (r *Records) Close() error {
	r.w = nil
	if r.f == nil {
		return nil
	}
	f := r.f
	r.f = nil
	return f.Close()
}

// Buckets is a set of record files, one a bucket, that any goroutine may add
// to (a lock a bucket): a partition of records that a reader takes one bucket
// at a time, so that memory holds a bucket, not the whole.
type Buckets struct {
	recs []*Records
	mus  []sync.Mutex
	// scratch is each bucket's record being built (Add).
	scratch [][]byte
}

// NewBuckets creates n record files named after name in g's directory, each
// with a write buffer of buffer bytes.
func (g *Group) NewBuckets(name string, n, buffer int) (*Buckets, error) {
	b := &Buckets{mus: make([]sync.Mutex, n), scratch: make([][]byte, n)}
	for range n {
		r, err := g.NewRecords(name, buffer)
		if err != nil {
			b.Close()
			return nil, err
		}
		b.recs = append(b.recs, r)
	}
	return b, nil
}

// Len is the number of buckets.
func (b *Buckets) Len() int { return len(b.recs) }

// Records is the number of records added, once every Add has returned.
func (b *Buckets) Records() int64 {
	var n int64
	for _, r := range b.recs {
		n += r.n
	}
	return n
}

// Add appends to bucket i the record build appends to the bytes it is given
// (a buffer of the bucket's, reused: no allocation a record); safe for
// concurrent use.
func (b *Buckets) Add(i int, build func(rec []byte) []byte) error {
	b.mus[i].Lock()
	defer b.mus[i].Unlock()
	rec := build(b.scratch[i][:0])
	b.scratch[i] = rec
	if cap(rec) > maxScratch {
		b.scratch[i] = nil // a large item's buffer goes with it
	}
	return b.recs[i].Append(rec)
}

// maxScratch is the largest build buffer a bucket keeps between records.
const maxScratch = 16 << 10

// Flush writes out every bucket, as Records.Flush does; call it once every Add
// has returned.
func (b *Buckets) Flush() error {
	for _, r := range b.recs {
		if err := r.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// Each calls fn with bucket i's records in the order added, as Records.Each
// does; call it once every Add has returned.
func (b *Buckets) Each(i int, fn func(rec []byte) error) error {
	return b.recs[i].Each(fn)
}

// Close closes every bucket's file and lets its buffers go.
func (b *Buckets) Close() {
	for _, r := range b.recs {
		r.Close()
	}
	b.recs, b.scratch = nil, nil
}
