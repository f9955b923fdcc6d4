package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Unit tests of Run's logic against fakes at its seams: a RowSource of
// rows in memory and sinks in memory. The end-to-end tests, against
// PostgreSQL, are in pipeline_test.go and the app package.

// fakeSource serves, per entity, rows (id int4, name text) in primary-key
// order, each ending with its position (the id's text), as a plan compiled
// by compilePlans reads them. It is safe for concurrent use; forks share
// it.
type fakeSource struct {
	rows     map[string][][]any
	forks    atomic.Int32
	streamed sync.Map // entity name → *atomic.Int64 rows handed out
}

func newFakeSource(rows map[string]int, name func(id int) string) *fakeSource {
	f := &fakeSource{rows: map[string][][]any{}}
	for e, n := range rows {
		for id := 1; id <= n; id++ {
			f.rows[e] = append(f.rows[e], []any{int32(id), name(id), strconv.Itoa(id)})
		}
	}
	return f
}

func (f *fakeSource) Count(_ context.Context, e *mapping.Entity) (int64, error) {
	return int64(len(f.rows[e.Name])), nil
}

// Positions gives row n of q's range the id n after its start: every
// entity's ids are 1, 2, … in order. (It knows no entity's number of rows:
// the run asks only for rows it counted.)
func (f *fakeSource) Positions(_ context.Context, q extract.Query, at []int64) ([][]string, error) {
	var after, until int64 = 0, 1 << 62
	if len(q.After) > 0 {
		after, _ = strconv.ParseInt(q.After[0], 10, 64)
	}
	if len(q.Until) > 0 {
		until, _ = strconv.ParseInt(q.Until[0], 10, 64)
	}
	out := make([][]string, len(at))
	for j, n := range at {
		if n >= 1 && after+n <= until {
			out[j] = []string{strconv.FormatInt(after+n, 10)}
		}
	}
	return out, nil
}

// CanonicalPosition accepts decimal ids only, as PostgreSQL would for int4.
func (f *fakeSource) CanonicalPosition(_ context.Context, _ extract.Query, pos []string) ([]string, bool, error) {
	if len(pos) != 1 {
		return nil, false, nil
	}
	n, err := strconv.Atoi(pos[0])
	return []string{strconv.Itoa(n)}, err == nil, nil
}

func (f *fakeSource) CountRange(ctx context.Context, name string, q extract.Query) (int64, error) {
	var n int64
	err := f.scan(ctx, name, q, func([]any) error { n++; return nil })
	return n, err
}

func (f *fakeSource) Stream(ctx context.Context, name string, q extract.Query, fn func([]any) error) error {
	c, _ := f.streamed.LoadOrStore(name, new(atomic.Int64))
	return f.scan(ctx, name, q, func(r []any) error {
		c.(*atomic.Int64).Add(1)
		return fn(slices.Clone(r))
	})
}

// scan calls fn with each row of name in q's range, in id order.
func (f *fakeSource) scan(ctx context.Context, name string, q extract.Query, fn func([]any) error) error {
	bound := func(pos []string, none int) int {
		if len(pos) == 0 {
			return none
		}
		n, err := strconv.Atoi(pos[0])
		if err != nil {
			panic("position " + pos[0] + " was not made canonical")
		}
		return n
	}
	after, until := bound(q.After, 0), bound(q.Until, 1<<30)
	for _, r := range f.rows[name] {
		if id := int(r[0].(int32)); id <= after || id > until {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeSource) read(entity string) int64 {
	c, ok := f.streamed.Load(entity)
	if !ok {
		return 0
	}
	return c.(*atomic.Int64).Load()
}

func (f *fakeSource) Fork(context.Context) (RowSource, error) { f.forks.Add(1); return f, nil }
func (f *fakeSource) Close(context.Context) error             { return nil }

// memSink keeps every item written, by id, and can fail items or batches.
type memSink struct {
	mu      sync.Mutex
	ids     map[int32]int // times written
	batches int
	// failItem, if set, says an item (by its row's id) is refused.
	failItem func(id int32) bool
	// before, if set, runs before each batch is written (its number from
	// 1); an error from it is the Write's.
	before func(ctx context.Context, n int) error
}

func newMemSink() *memSink { return &memSink{ids: map[int32]int{}} }

func (s *memSink) Write(ctx context.Context, b []transform.Item) error {
	s.mu.Lock()
	s.batches++
	n := s.batches
	s.mu.Unlock()
	if s.before != nil {
		if err := s.before(ctx, n); err != nil {
			return err
		}
	}
	be := &load.BatchError{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, it := range b {
		id := it.Row[0].(int32)
		if s.failItem != nil && s.failItem(id) {
			be.Failed = append(be.Failed, load.ItemError{Index: i, Err: fmt.Errorf("refused %d", id)})
			continue
		}
		s.ids[id]++
	}
	if len(be.Failed) > 0 {
		return be
	}
	return nil
}

func (s *memSink) written() map[int32]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.ids)
}

const oneEntity = `
  P: {source: {table: t}, pk: "P#${id}", sk: "P"}`

// Parallel readers and writers write every row exactly once, the summary
// reconciles, and the checkpoint ends with every range done.
func TestRunWritesEveryRowOnce(t *testing.T) {
	plans, m := compilePlans(t, oneEntity)
	src := newFakeSource(map[string]int{"P": 3 * MinRangeRows}, func(id int) string { return "n" })
	sink := newMemSink()
	cp := NewCheckpoint("fp", "fake", "sched", plans)
	sum, err := Run(t.Context(), src, m, plans, sink, Options{Readers: 3, Concurrency: 4, Checkpoint: cp})
	if err != nil {
		t.Fatal(err)
	}
	got := sink.written()
	for id := int32(1); id <= 3*MinRangeRows; id++ {
		if got[id] != 1 {
			t.Fatalf("row %d written %d times, want once", id, got[id])
		}
	}
	if e := sum.Entities[0]; e.Rows != 3*MinRangeRows || e.Written != e.Rows || e.Items != e.Rows || e.Rejected != 0 || e.NotWritten != 0 {
		t.Errorf("summary %+v, want %d rows read, written and items", e, 3*MinRangeRows)
	}
	rs := cp.Entities["P"].Ranges
	if len(rs) != 3 || src.forks.Load() != 2 || !cp.Entities["P"].Done {
		t.Errorf("%d forks, ranges %+v; want 2 forks and 3 ranges, all done", src.forks.Load(), rs)
	}
}

// countingProgress adds up what a Progress is told.
type countingProgress struct{ planned, advanced int64 }

func (p *countingProgress) Plan(ents []PlannedEntity) {
	for _, e := range ents {
		p.planned += e.Rows
	}
}
func (p *countingProgress) Start(string)                  {}
func (p *countingProgress) Advance(_ string, rows, _ int) { p.advanced += int64(rows) }

// Three shards of one run read every row exactly once between them, each
// a range of its own, whatever the number of readers; each plans (for its
// progress and summary) exactly the rows of its range.
func TestShardsReadEveryRowOnce(t *testing.T) {
	plans, m := compilePlans(t, oneEntity)
	const rows = 1000
	src := newFakeSource(map[string]int{"P": rows}, func(id int) string { return "n" })
	sink := newMemSink()
	var read int64
	for i := 1; i <= 3; i++ {
		prog := &countingProgress{}
		sum, err := Run(t.Context(), src, m, plans, sink, Options{Readers: 2, Concurrency: 2, Shard: Shard{Index: i, Count: 3}, Progress: prog})
		if err != nil {
			t.Fatal(err)
		}
		if n := sum.Entities[0].Rows; n < rows/3-1 || n > rows/3+1 {
			t.Errorf("shard %d/3 read %d rows, want about %d", i, n, rows/3)
		}
		if e := sum.Entities[0]; e.Total != e.Rows || prog.planned != e.Rows || prog.advanced != e.Rows {
			t.Errorf("shard %d/3 read %d rows; summary total %d, progress planned %d and advanced %d", i, e.Rows, e.Total, prog.planned, prog.advanced)
		}
		read += sum.Entities[0].Rows
	}
	got := sink.written()
	for id := int32(1); id <= rows; id++ {
		if got[id] != 1 {
			t.Fatalf("row %d written %d times by the shards, want once", id, got[id])
		}
	}
	if read != rows {
		t.Errorf("the shards read %d rows, want %d", read, rows)
	}
}

// A row whose item the sink refuses is rejected, naming its item key and
// the sink's reason, and reaches OnReject before the checkpoint records a
// position at or past it: after a crash, every row the checkpoint counts as
// handled is written or listed.
func TestRejectsReachOnRejectBeforeTheCheckpoint(t *testing.T) {
	plans, m := compilePlans(t, oneEntity)
	const rows = 3000
	src := newFakeSource(map[string]int{"P": rows}, func(int) string { return "n" })
	sink := newMemSink()
	sink.failItem = func(id int32) bool { return id%7 == 0 }
	var mu sync.Mutex // OnReject and OnCheckpoint are never concurrent; the race detector checks that claim
	listed := map[int]bool{}
	var violations []string
	cp := NewCheckpoint("fp", "fake", "sched", plans)
	opts := Options{Concurrency: 4, Checkpoint: cp,
		OnReject: func(r Reject) error {
			if !mu.TryLock() {
				t.Error("OnReject called while another callback runs")
				return nil
			}
			defer mu.Unlock()
			id := rowID(r)
			if r.Reason != fmt.Sprintf("refused %d", id) || r.ItemKey["PK"] != fmt.Sprintf("P#%010d", id) {
				violations = append(violations, fmt.Sprintf("reject %+v", r))
			}
			listed[id] = true
			return nil
		},
		OnCheckpoint: func(cp *Checkpoint, entity string, _ bool) error {
			if !mu.TryLock() {
				t.Error("OnCheckpoint called while another callback runs")
				return nil
			}
			defer mu.Unlock()
			after := rows
			if entity == "" { // the plan: nothing written yet
				return nil
			}
			if r := cp.Entities["P"].Ranges[0]; !r.Done {
				after, _ = strconv.Atoi(r.After[0])
			}
			for id := 7; id <= after; id += 7 {
				if !listed[id] {
					violations = append(violations, fmt.Sprintf("checkpoint at %d before row %d was listed", after, id))
					break
				}
			}
			return nil
		}}
	sum, err := Run(t.Context(), src, m, plans, sink, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(violations) > 0 {
		t.Errorf("%d violations, the first: %s", len(violations), violations[0])
	}
	if e := sum.Entities[0]; e.Rejected != rows/7 || e.Written != rows-rows/7 || len(listed) != rows/7 {
		t.Errorf("summary %+v, %d listed; want %d rejected and listed, the rest written", e, len(listed), rows/7)
	}
}

// A slow checkpoint callback does not hold the writers: they go on
// writing while it runs (it used to run under the lock every writer's
// acknowledgement takes, so at most one batch per writer got through).
func TestSlowCallbackDoesNotHoldWriters(t *testing.T) {
	plans, m := compilePlans(t, oneEntity)
	src := newFakeSource(map[string]int{"P": 100 * load.MaxBatchItems}, func(int) string { return "n" })
	const concurrency, enough = 2, 20 // batches written while the callback waits: many per writer
	sink := newMemSink()
	reached := make(chan struct{})
	sink.before = func(_ context.Context, n int) error {
		if n == enough {
			close(reached)
		}
		return nil
	}
	first := true
	opts := Options{Concurrency: concurrency, Checkpoint: NewCheckpoint("fp", "fake", "sched", plans),
		OnCheckpoint: func(_ *Checkpoint, entity string, _ bool) error {
			if first && entity != "" { // past the plan, saved before the first read
				first = false
				select {
				case <-reached:
				case <-time.After(time.Minute): // in-memory batches: milliseconds, unless held
					t.Errorf("waiting for %d batches written while the checkpoint callback ran: fewer after a minute", enough)
				}
			}
			return nil
		}}
	if _, err := Run(t.Context(), src, m, plans, sink, opts); err != nil {
		t.Fatal(err)
	}
}

// A sink error that is not about items stops the run: Run returns it, no
// more batches are written, of its part or of another read beside it, and
// the summary counts the rows read but not written.
func TestPermanentSinkErrorStops(t *testing.T) {
	plans, m := compilePlans(t, oneEntity)
	for _, readers := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d readers", readers), func(t *testing.T) {
			src := newFakeSource(map[string]int{"P": 2 * MinRangeRows}, func(int) string { return "n" })
			down := errors.New("table deleted")
			sink := newMemSink()
			sink.before = func(_ context.Context, n int) error {
				if n >= 3 {
					return down
				}
				return nil
			}
			sum, err := Run(t.Context(), src, m, plans, sink, Options{Concurrency: 1, Readers: readers})
			if !errors.Is(err, down) {
				t.Fatalf("error %v, want the sink's", err)
			}
			e := sum.Entities[0]
			if e.Written != 2*load.MaxBatchItems || e.Rows != e.Written+e.NotWritten || e.NotWritten == 0 || sink.batches != 3 {
				t.Errorf("summary %+v after %d Writes; want 2 batches written, the rest read counted not written, no Write after the error", e, sink.batches)
			}
		})
	}
}

// When the run's context is done, the rows already read are still
// written (the summary then describes the table); a sink that does not
// return is given up after WriteGrace.
func TestStopWritesWhatWasRead(t *testing.T) {
	plans, m := compilePlans(t, oneEntity)
	t.Run("rows read are written", func(t *testing.T) {
		src := newFakeSource(map[string]int{"P": 50_000}, func(int) string { return "n" })
		ctx, cancel := context.WithCancelCause(t.Context())
		stop := errors.New("interrupted")
		sink := newMemSink()
		sink.before = func(_ context.Context, n int) error {
			if n == 2 {
				cancel(stop)
			}
			return nil
		}
		sum, err := Run(ctx, src, m, plans, sink, Options{Concurrency: 2})
		e := sum.Entities[0]
		if !errors.Is(err, stop) || e.Written != e.Rows || e.Rows == 50_000 || int64(len(sink.written())) != e.Written {
			t.Errorf("error %v, summary %+v, %d in the sink; want the stop's cause, every row read written, not all read", err, e, len(sink.written()))
		}
	})
	t.Run("a stuck sink is given up after the grace", func(t *testing.T) {
		src := newFakeSource(map[string]int{"P": 5000}, func(int) string { return "n" })
		ctx, cancel := context.WithCancel(t.Context())
		sink := load.SinkFunc(func(ctx context.Context, _ []transform.Item) error {
			cancel()
			<-ctx.Done() // the writers' context: done only when the grace is over
			return ctx.Err()
		})
		// The sink returns only when the grace is over: Run returning is
		// the grace given up. Waited for in a goroutine, so that a Run
		// that never returns fails with that, not the package's timeout.
		type ran struct {
			sum *Summary
			err error
		}
		done := make(chan ran, 1)
		go func() {
			sum, err := Run(ctx, src, m, plans, sink, Options{Concurrency: 1, WriteGrace: 50 * time.Millisecond})
			done <- ran{sum, err}
		}()
		select {
		case r := <-done:
			if !errors.Is(r.err, context.Canceled) || r.sum.Entities[0].Written != 0 {
				t.Errorf("error %v, summary %+v; want cancelled, nothing written", r.err, r.sum.Entities[0])
			}
		case <-time.After(time.Minute):
			t.Fatal("waiting for Run to give up a stuck sink after its 50ms grace: still running after a minute")
		}
	})
}

// A resumed run skips entities done, reads the others after their
// recorded position, and reads a range again from its start when its
// recorded position is not one the source gives back unchanged.
func TestRunResumesFromTheCheckpoint(t *testing.T) {
	plans, m := compilePlans(t, `
  P: {source: {table: t}, pk: "P#${id}", sk: "P"}
  Q: {source: {table: t}, pk: "Q#${id}", sk: "Q"}
  R: {source: {table: t}, pk: "R#${id}", sk: "R"}`)
	src := newFakeSource(map[string]int{"P": 1000, "Q": 1000, "R": 1000}, func(int) string { return "n" })
	cp := NewCheckpoint("fp", "fake", "sched", plans)
	cp.Entities["P"].Done = true
	cp.Entities["Q"].Ranges = []Range{{After: []string{"600"}}}
	cp.Entities["R"].Ranges = []Range{{After: []string{"[6 0 0]"}}} // not PostgreSQL's text of an int4
	sum, err := Run(t.Context(), src, m, plans, newMemSink(), Options{Checkpoint: cp})
	if err != nil {
		t.Fatal(err)
	}
	if p, q, r := src.read("P"), src.read("Q"), src.read("R"); p != 0 || q != 400 || r != 1000 {
		t.Errorf("rows read: P %d, Q %d, R %d; want 0 (done), 400 (after 600), 1000 (from the start)", p, q, r)
	}
	for _, e := range []string{"P", "Q", "R"} {
		if !cp.Entities[e].Done {
			t.Errorf("entity %s not done in the checkpoint: %+v", e, cp.Entities[e])
		}
	}
	if n := sum.Total().Written; n != 1400 {
		t.Errorf("%d rows written, want 1400", n)
	}
}

// Two rows that render one key: the earlier in primary-key order keeps
// it, whatever the number of readers, and the later is rejected.
func TestDuplicateKeysKeepTheEarlierRow(t *testing.T) {
	plans, m := compilePlans(t, `
  A: {source: {table: t}, pk: "A#${name}", sk: "X"}`)
	const rows = 2 * MinRangeRows
	for _, readers := range []int{1, 3} {
		t.Run(fmt.Sprint(readers, " readers"), func(t *testing.T) {
			src := newFakeSource(map[string]int{"A": rows}, func(id int) string { return strconv.Itoa(id % 1000) })
			sink := newMemSink()
			var mu sync.Mutex
			var rejected []int32
			sum, err := Run(t.Context(), src, m, plans, sink, Options{Readers: readers, Concurrency: 3,
				OnReject: func(r Reject) error {
					mu.Lock()
					defer mu.Unlock()
					rejected = append(rejected, int32(rowID(r)))
					return nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			got := sink.written()
			for id := int32(1); id <= 1000; id++ {
				if got[id] != 1 {
					t.Fatalf("row %d written %d times; want the first row of each key written once", id, got[id])
				}
			}
			if len(got) != 1000 || len(rejected) != rows-1000 || sum.Entities[0].Rejected != rows-1000 {
				t.Errorf("%d written, %d rejected; want 1000 and %d", len(got), len(rejected), rows-1000)
			}
		})
	}
}

// rowID is the id in a reject's source key.
func rowID(r Reject) int {
	id, _ := strconv.Atoi(fmt.Sprint(r.SourceKey["id"]))
	return id
}

// A resumed shard replays, to rebuild its duplicate check, only what it
// wrote of its own range, and reads a range whose recorded position is not
// trusted again from the range's start: it rejects, as an uninterrupted
// shard does, none of its rows, though each renders the key of a row of
// another shard's range (names repeat every 100 ids). Each once read the
// table from its first row: 50 and 100 rejects.
func TestShardResumeStaysInItsRange(t *testing.T) {
	plans, m := compilePlans(t, `
  P: {source: {table: t}, pk: "P#${name}", sk: "P"}`)
	for _, tc := range []struct {
		name         string
		after        []string
		read, unread int
	}{
		{"after a position", []string{"150"}, 50, 50},
		{"after an untrusted position", []string{"[1 5 0]"}, 100, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := newFakeSource(map[string]int{"P": 300}, func(id int) string { return strconv.Itoa(id % 100) })
			cp := NewCheckpoint("fp", "fake", "sched", plans)
			cp.Entities["P"].Ranges = []Range{{From: []string{"100"}, After: tc.after, Until: []string{"200"}}}
			sink := newMemSink()
			sum, err := Run(t.Context(), src, m, plans, sink, Options{Checkpoint: cp, Shard: Shard{Index: 2, Count: 3}})
			if err != nil {
				t.Fatal(err)
			}
			got := sink.written()
			for id := int32(201 - tc.read); id <= 200; id++ {
				if got[id] != 1 {
					t.Fatalf("row %d written %d times, want once", id, got[id])
				}
			}
			if e := sum.Entities[0]; e.Rows != int64(tc.read) || e.Rejected != 0 || len(got) != tc.read {
				t.Errorf("summary %+v, %d rows written; want rows %d to 200 read and written, none rejected", e, len(got), tc.unread+101)
			}
		})
	}
}
