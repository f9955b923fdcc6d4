package pipeline

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// throttlingSink is a memSink that reports throttled requests
// (load.ThrottleCounter) and drives an Autoscale run's windows: every
// tickEvery writes it moves the run's fake clock on by testInterval and
// ends the window (the writer waits until the run took it). From write
// throttleAt on, it reports throttles throttled requests more.
type throttlingSink struct {
	*memSink
	ticks      chan time.Time
	clock      atomic.Int64 // unix nanoseconds
	writes     atomic.Int64
	throttles  atomic.Int64
	tickEvery  int64
	throttleAt int64
	throttled  int64
}

func (s *throttlingSink) now() time.Time { return time.Unix(0, s.clock.Load()) }

func (s *throttlingSink) Throttles() int64 { return s.throttles.Load() }

func (s *throttlingSink) Write(ctx context.Context, b []transform.Item) error {
	err := s.memSink.Write(ctx, b)
	n := s.writes.Add(1)
	if n == s.throttleAt {
		s.throttles.Add(s.throttled)
	}
	if n%s.tickEvery == 0 {
		t := time.Unix(0, s.clock.Add(int64(testInterval)))
		s.ticks <- t
	}
	return err
}

var _ load.ThrottleCounter = (*throttlingSink)(nil)

// testInterval is the windows of the fake clock: short, so that the
// items/s it measures, and so the pace set, are high for the real time
// the writers wait on the pace.
const testInterval = time.Millisecond

// writersProgress records the writers a run tells it of.
type writersProgress struct {
	countingProgress
	mu      sync.Mutex
	writers []int
}

func (p *writersProgress) Writers(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writers = append(p.writers, n)
}

// An Autoscale run writes every row exactly once while its writers
// change, halves them when the sink reports throttling, tells Progress
// each number of writers, and reports the range in its summary.
func TestRunAutoscaleHalvesOnThrottling(t *testing.T) {
	plans, m := compilePlans(t, oneEntity)
	const rows = 400 * load.MaxBatchItems
	src := newFakeSource(map[string]int{"P": rows}, func(int) string { return "n" })
	sink := &throttlingSink{memSink: newMemSink(), ticks: make(chan time.Time), tickEvery: 4, throttleAt: 100, throttled: 10}
	sink.clock.Store(time.Now().UnixNano())
	prog := &writersProgress{}
	sum, err := Run(t.Context(), src, m, plans, sink, Options{Readers: 2, Progress: prog,
		Auto: &Autoscale{Start: 8, Interval: testInterval, ticks: sink.ticks, now: sink.now}})
	if err != nil {
		t.Fatal(err)
	}
	got := sink.written()
	for id := int32(1); id <= rows; id++ {
		if got[id] != 1 {
			t.Fatalf("row %d written %d times, want once", id, got[id])
		}
	}
	as := sum.Autoscale
	if as == nil {
		t.Fatal("no Autoscale in the summary")
	}
	halvings := 0
	for i, d := range as.Decisions {
		if d.Reason != ReasonThrottled {
			continue
		}
		halvings++
		if before := as.Decisions[i-1].Writers; d.Writers != (before+1)/2 || d.Pace <= 0 {
			t.Errorf("decision %+v after %d writers; want them halved and paced", d, before)
		}
	}
	if halvings != 1 || as.Halvings != 1 || as.Decisions[0].Writers != 8 {
		t.Errorf("autoscale summary %+v; want 8 writers at the start, one halving", as)
	}
	if len(prog.writers) < 2 || prog.writers[0] != 8 || prog.writers[len(prog.writers)-1] != as.Last {
		t.Errorf("progress told writers %v; want 8 first, %d last", prog.writers, as.Last)
	}
}

// With a real clock and tiny windows, the writers change often: every row
// is still written exactly once, and the summary's writers stay between
// 1 and Max.
func TestRunAutoscaleWritesEveryRowOnce(t *testing.T) {
	plans, m := compilePlans(t, oneEntity)
	const rows = 3 * MinRangeRows
	src := newFakeSource(map[string]int{"P": rows}, func(int) string { return "n" })
	sink := newMemSink()
	sum, err := Run(t.Context(), src, m, plans, sink, Options{Readers: 3,
		Auto: &Autoscale{Start: 2, Max: 6, Interval: 50 * time.Microsecond}})
	if err != nil {
		t.Fatal(err)
	}
	got := sink.written()
	for id := int32(1); id <= rows; id++ {
		if got[id] != 1 {
			t.Fatalf("row %d written %d times, want once", id, got[id])
		}
	}
	if e := sum.Entities[0]; e.Written != rows || e.NotWritten != 0 {
		t.Errorf("summary %+v, want %d rows written", e, rows)
	}
	if as := sum.Autoscale; as == nil || as.Min < 1 || as.Max > 6 || as.Last < as.Min || as.Last > as.Max {
		t.Errorf("autoscale summary %+v, want writers within 1 to 6", as)
	}
}
