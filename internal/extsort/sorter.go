// Package extsort holds byte records on disk in bounded memory: a Sorter
// spills sorted runs to temporary files (verify's expected answers, the result
// lists of verify/outcome); Records and Buckets append records to temporary
// files and read them back in order (verify's buckets and journals, the follow
// audit's spill). A Group owns the files, unlinked as they are created.
package extsort

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// Group is the memory budget and temporary directory a set of sorters
// share: past about budget bytes in memory, the sorter holding most writes its
// records, sorted, to a run file. Not safe for concurrent use.
type Group struct {
	dir     string
	budget  int
	used    int // bytes held in memory by all the sorters (arena and spans capacity)
	sorters []*Sorter
	records []*Records
	// named: a file could not be unlinked on creation, so it goes with the
	// directory.
	named bool
	// shared: a sub group, dir is its parent's.
	shared bool
}

// NewGroup creates the group's directory under os.TempDir; budget is in
// bytes.
func NewGroup(prefix string, budget int) (*Group, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, fmt.Errorf("extsort: temporary directory: %w", err)
	}
	return &Group{dir: dir, budget: budget}, nil
}

// Sub returns a group with its own budget in g's directory, which closing it
// leaves to g.
func (g *Group) Sub(budget int) *Group {
	return &Group{dir: g.dir, budget: budget, shared: true}
}

// TempFile creates a file in the group's directory and unlinks it at once where
// possible, so its space is freed however the process ends.
func (g *Group) TempFile(name string) (*os.File, error) {
	f, err := os.CreateTemp(g.dir, name)
	if err != nil {
		return nil, fmt.Errorf("extsort: temporary file: %w", err)
	}
	if os.Remove(f.Name()) != nil {
		g.named = true // removed with the directory
	}
	return f, nil
}

// Close closes every sorter's and record file's files and removes the
// directory (not a sub group's).
func (g *Group) Close() error {
	for _, s := range g.sorters {
		s.closeRuns()
	}
	for _, r := range g.records {
		r.Close()
	}
	g.sorters, g.records = nil, nil
	if g.shared {
		return nil
	}
	return os.RemoveAll(g.dir)
}

// Sorter sorts records (uvarint-length-prefixed bytes) by cmp in bounded
// memory: within the group's budget in memory, past it as sorted run files
// merged when read (Iter). Not safe for concurrent use.
type Sorter struct {
	g     *Group
	name  string
	cmp   func(a, b []byte) int
	arena []byte
	spans []span // records in arena, in the order added until sorted
	runs  []*os.File
	n     int64 // records added
	// sorted: spans are in order; reading: Iter was called (until Reset), so
	// in-memory records stay.
	sorted, reading bool
}

type span struct{ start, end int }

// maxFanIn bounds the runs one merge reads at once (an open file and 32 KB
// buffer each); more merge in passes.
const maxFanIn = 64

// NewSorter adds a sorter to g; name names its run files.
func (g *Group) NewSorter(name string, cmp func(a, b []byte) int) *Sorter {
	s := &Sorter{g: g, name: name, cmp: cmp}
	g.sorters = append(g.sorters, s)
	return s
}

func (s *Sorter) mem() int { return cap(s.arena) + cap(s.spans)*16 }

func (s *Sorter) Len() int64 { return s.n }

// Add copies rec in; over the group's budget, the sorter holding most memory
// writes a run.
func (s *Sorter) Add(rec []byte) error {
	before := s.mem()
	start := len(s.arena)
	s.arena = append(s.arena, rec...)
	s.spans = append(s.spans, span{start, len(s.arena)})
	s.n++
	s.sorted = false
	s.g.used += s.mem() - before
	for s.g.used > s.g.budget {
		var big *Sorter
		for _, o := range s.g.sorters {
			if !o.reading && len(o.spans) > 0 && (big == nil || o.mem() > big.mem()) {
				big = o
			}
		}
		if big == nil {
			break // nothing left to write out
		}
		if err := big.spill(); err != nil {
			return err
		}
	}
	return nil
}

func (s *Sorter) sortMem() {
	if s.sorted {
		return
	}
	s.sorted = true
	slices.SortStableFunc(s.spans, func(a, b span) int {
		return s.cmp(s.arena[a.start:a.end], s.arena[b.start:b.end])
	})
}

// spill writes the in-memory records, sorted, as a new run and releases them.
func (s *Sorter) spill() error {
	s.sortMem()
	f, err := s.g.TempFile(s.name + "-run-*")
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	for _, sp := range s.spans {
		if err := writeRecord(w, s.arena[sp.start:sp.end]); err != nil {
			f.Close()
			return fmt.Errorf("extsort: write run: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("extsort: write run: %w", err)
	}
	s.runs = append(s.runs, f)
	s.g.used -= s.mem()
	s.arena, s.spans = nil, nil
	return nil
}

// Reset empties the sorter for reuse, keeping its memory.
func (s *Sorter) Reset() {
	s.closeRuns()
	s.arena, s.spans, s.n = s.arena[:0], s.spans[:0], 0
	s.reading = false
}

func (s *Sorter) closeRuns() {
	for _, f := range s.runs {
		f.Close()
	}
	s.runs = nil
}

// maxRecord bounds a record read back, a guard against a damaged file: the
// largest records hold two DynamoDB items (at most 400 KB each) and their keys.
const maxRecord = 8 << 20

func writeRecord(w *bufio.Writer, rec []byte) error {
	var n [binary.MaxVarintLen64]byte
	if _, err := w.Write(n[:binary.PutUvarint(n[:], uint64(len(rec)))]); err != nil {
		return err
	}
	_, err := w.Write(rec)
	return err
}

// Source yields records in order until io.EOF; a slice is valid until the
// next call.
type Source interface {
	Next() ([]byte, error)
}

// memSource yields the sorted records held in memory.
type memSource struct {
	s *Sorter
	i int
}

func (m *memSource) Next() ([]byte, error) {
	if m.i >= len(m.s.spans) {
		return nil, io.EOF
	}
	sp := m.s.spans[m.i]
	m.i++
	return m.s.arena[sp.start:sp.end], nil
}

// runSource yields the records of a run file, from its start.
type runSource struct {
	r   *bufio.Reader
	buf []byte
}

// newRunSource reads f's records up to byte end.
func newRunSource(f *os.File, end int64) *runSource {
	return &runSource{r: bufio.NewReaderSize(io.NewSectionReader(f, 0, end), 32<<10)}
}

func (r *runSource) Next() ([]byte, error) {
	n, err := binary.ReadUvarint(r.r)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("extsort: read run: %w", err)
	}
	if n > maxRecord {
		return nil, fmt.Errorf("extsort: read run: a record of %d bytes, over %d: the file is damaged", n, maxRecord)
	}
	if uint64(cap(r.buf)) < n {
		r.buf = make([]byte, n)
	}
	r.buf = r.buf[:n]
	if _, err := io.ReadFull(r.r, r.buf); err != nil {
		return nil, fmt.Errorf("extsort: read run: %w", err)
	}
	return r.buf, nil
}

// mergeSource merges sorted sources by cmp.
type mergeSource struct {
	h mergeHeap
	// last is the source whose record was returned last, advanced on the next
	// call.
	last *mergeHead
	cmp  func(a, b []byte) int
}

type mergeHead struct {
	src Source
	rec []byte
	idx int // the source's position, to keep equal records in source order
}

type mergeHeap struct {
	heads []*mergeHead
	cmp   func(a, b []byte) int
}

func (h mergeHeap) Len() int { return len(h.heads) }
func (h mergeHeap) Less(i, j int) bool {
	if c := h.cmp(h.heads[i].rec, h.heads[j].rec); c != 0 {
		return c < 0
	}
	return h.heads[i].idx < h.heads[j].idx
}
func (h mergeHeap) Swap(i, j int) { h.heads[i], h.heads[j] = h.heads[j], h.heads[i] }
func (h *mergeHeap) Push(x any)   { h.heads = append(h.heads, x.(*mergeHead)) }
func (h *mergeHeap) Pop() any {
	x := h.heads[len(h.heads)-1]
	h.heads = h.heads[:len(h.heads)-1]
	return x
}

func newMergeSource(srcs []Source, cmp func(a, b []byte) int) (*mergeSource, error) {
	m := &mergeSource{h: mergeHeap{cmp: cmp}, cmp: cmp}
	for i, src := range srcs {
		rec, err := src.Next()
		if errors.Is(err, io.EOF) {
			continue
		}
		if err != nil {
			return nil, err
		}
		m.h.heads = append(m.h.heads, &mergeHead{src: src, rec: rec, idx: i})
	}
	heap.Init(&m.h)
	return m, nil
}

func (m *mergeSource) Next() ([]byte, error) {
	if m.last != nil {
		rec, err := m.last.src.Next()
		switch {
		case errors.Is(err, io.EOF):
			heap.Pop(&m.h)
		case err != nil:
			return nil, err
		default:
			m.last.rec = rec
			heap.Fix(&m.h, 0)
		}
		m.last = nil
	}
	if m.h.Len() == 0 {
		return nil, io.EOF
	}
	m.last = m.h.heads[0]
	return m.last.rec, nil
}

// Iter returns the records by cmp (ties in insertion order within a run). It
// may be called again; nothing may be added while its result is read. Past
// maxFanIn runs, runs merge on disk first.
func (s *Sorter) Iter() (Source, error) {
	s.reading = true
	s.sortMem()
	if len(s.runs) == 0 {
		return &memSource{s: s}, nil
	}
	for len(s.runs) >= maxFanIn {
		if err := s.mergeRuns(maxFanIn); err != nil {
			return nil, err
		}
	}
	srcs := make([]Source, 0, len(s.runs)+1)
	for _, f := range s.runs {
		srcs = append(srcs, newRunSource(f, 1<<62))
	}
	srcs = append(srcs, &memSource{s: s}) // the newest records last
	return newMergeSource(srcs, s.cmp)
}

// mergeRuns merges the first k runs into one.
func (s *Sorter) mergeRuns(k int) error {
	srcs := make([]Source, k)
	for i, f := range s.runs[:k] {
		srcs[i] = newRunSource(f, 1<<62)
	}
	m, err := newMergeSource(srcs, s.cmp)
	if err != nil {
		return err
	}
	f, err := s.g.TempFile(s.name + "-merge-*")
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	for {
		rec, err := m.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil {
			err = writeRecord(w, rec)
		}
		if err != nil {
			f.Close()
			return fmt.Errorf("extsort: merge runs: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("extsort: merge runs: %w", err)
	}
	for _, old := range s.runs[:k] {
		old.Close()
	}
	s.runs = append([]*os.File{f}, s.runs[k:]...)
	return nil
}

// Each calls fn with every record in order; rec is valid during the call.
func (s *Sorter) Each(fn func(rec []byte) error) error {
	src, err := s.Iter()
	if err != nil {
		return err
	}
	for {
		rec, err := src.Next()
		if errors.Is(err, io.EOF) {
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
