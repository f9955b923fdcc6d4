package pipeline

import (
	"testing"
	"time"
)

// Unit tests of the Autoscaler's rules, driven with synthetic samples:
// no clock is read. autoscale_sim_test.go runs it against a model of
// writers and a table in virtual time.

const testWindow = 100 * time.Millisecond

// window is a sample of testWindow in which w writers, all busy, wrote
// rate items/s (batches of 25) and throttles requests were throttled.
func window(w int, rate float64, throttles int64) Sample {
	items := int64(rate * testWindow.Seconds())
	return Sample{Elapsed: testWindow, Items: items, Batches: max(int64(w), items/25),
		Busy: time.Duration(w) * testWindow, Throttles: throttles}
}

// feed gives a windows of what sink says w writers write, n times, and
// returns the writers decided after each.
func feed(a *Autoscaler, n int, sink func(w int) (rate float64, throttles int64)) []int {
	var ws []int
	for range n {
		r, th := sink(a.Writers())
		a.Observe(window(a.Writers(), r, th))
		ws = append(ws, a.Writers())
	}
	return ws
}

func reasons(a *Autoscaler) []Reason {
	var rs []Reason
	for _, d := range a.Summary().Decisions {
		rs = append(rs, d.Reason)
	}
	return rs
}

func count(rs []Reason, r Reason) int {
	n := 0
	for _, x := range rs {
		if x == r {
			n++
		}
	}
	return n
}

// While items/s doubles with the writers (each writer waits on latency),
// the start doubles them, up to Max and not beyond.
func TestAutoscalerDoublesWhileRising(t *testing.T) {
	a := NewAutoscaler(Autoscale{Max: 40})
	if a.Writers() != 4 || a.Pace() != 0 {
		t.Fatalf("start: %d writers, pace %v; want 4, none", a.Writers(), a.Pace())
	}
	ws := feed(a, 40, func(w int) (float64, int64) { return 3000 * float64(w), 0 })
	if want := []int{8, 16, 32, 40}; !prefixOf(want, ws) {
		t.Errorf("writers %v, want %v first", ws, want)
	}
	for _, w := range ws {
		if w > 40 {
			t.Fatalf("writers %v: over Max 40", ws)
		}
	}
	if s := a.Summary(); s.Min != 4 || s.Max != 40 || s.Last != 40 {
		t.Errorf("summary %+v, want writers 4 to 40, last 40", s)
	}
}

// prefixOf reports whether ws starts with want, repeated values aside.
func prefixOf(want, ws []int) bool {
	var distinct []int
	for _, w := range ws {
		if len(distinct) == 0 || distinct[len(distinct)-1] != w {
			distinct = append(distinct, w)
		}
	}
	if len(distinct) < len(want) {
		return false
	}
	for i := range want {
		if distinct[i] != want[i] {
			return false
		}
	}
	return true
}

// When a doubling does not raise items/s (the sink saturates at 20,000
// items/s from 7 writers), the writers go back to those before it; probes of
// more writers go back too, after two of them a probe of fewer keeps the 7
// that still saturate it, and the probes then grow apart.
func TestAutoscalerStopsWhenFlat(t *testing.T) {
	a := NewAutoscaler(Autoscale{})
	sat := func(w int) (float64, int64) { return min(3000*float64(w), 20000), 0 }
	// A doubling that looks flat is measured over two windows.
	ws := feed(a, 4, sat)
	if want := []int{8, 16, 16, 8}; !equalInts(ws, want) {
		t.Fatalf("writers %v, want %v: doubled to 16, back to 8", ws, want)
	}
	ws = feed(a, 200, sat)
	rs := reasons(a)
	if count(rs, ReasonRising) != 0 || count(rs, ReasonFewer) != 1 || count(rs, ReasonFlat) < 3 {
		t.Errorf("decisions %v: want probes going back, but one keeping fewer writers", rs)
	}
	if last := ws[len(ws)-1]; last != 7 {
		t.Errorf("writers end at %d, want 7", last)
	}
	var at []time.Duration
	for _, d := range a.Summary().Decisions {
		switch d.Reason {
		case ReasonFewer:
			at = nil
		case ReasonProbe:
			at = append(at, d.At)
		}
	}
	for i := 2; i < len(at); i++ {
		if at[i]-at[i-1] <= at[i-1]-at[i-2] {
			t.Errorf("probes at %v: the gaps do not grow", at)
			break
		}
	}
	if len(at) < 3 {
		t.Errorf("probes at %v after the fewer writers were kept: want at least 3", at)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// After the start, writers are added while items/s keeps rising with
// them (additive increase), up to the sink's limit.
func TestAutoscalerAddsWhileRising(t *testing.T) {
	a := NewAutoscaler(Autoscale{})
	// 3,000 items/s a writer up to 26 writers; the doubling to 32 gives
	// 78,000 for 96,000 expected: the start keeps 32 (more than 16's),
	// so start lower to see the probes: saturate the start at 4 → 8 flat.
	limit := 8
	sink := func(w int) (float64, int64) { return 3000 * float64(min(w, limit)), 0 }
	feed(a, 4, sink)
	if rs := reasons(a); a.Writers() != 8 || rs[len(rs)-1] != ReasonFlat {
		t.Fatalf("%d writers after the start (%v), want back to 8", a.Writers(), rs)
	}
	limit = 14 // the sink speeds up: more writers pay again
	ws := feed(a, 400, sink)
	if last := ws[len(ws)-1]; last < 12 || last > 15 {
		t.Errorf("writers %v: want them added up to about 14", ws)
	}
	if count(reasons(a), ReasonRising) < 2 {
		t.Errorf("decisions %v: want rising probes kept", reasons(a))
	}
}

// Throttling halves the writers (at most once a second), rounding up and
// never below 1, and paces the writes below what was written.
func TestAutoscalerHalvesOnThrottling(t *testing.T) {
	a := NewAutoscaler(Autoscale{Start: 16})
	feed(a, 12, func(w int) (float64, int64) { return 10000, 0 })
	w0 := a.Writers()
	a.Observe(window(w0, 10000, 5))
	if a.Writers() != (w0+1)/2 {
		t.Fatalf("%d writers after throttling at %d, want %d", a.Writers(), w0, (w0+1)/2)
	}
	if p := a.Pace(); p <= 0 || p > 0.95*10000+1 {
		t.Errorf("pace %.0f after throttling at 10,000 items/s, want at most 95%% of it", p)
	}
	// Within the second, more throttling does not halve again.
	w1 := a.Writers()
	feed(a, 5, func(w int) (float64, int64) { return 9000, 5 })
	if a.Writers() < w1 {
		t.Errorf("%d writers: halved again within a second (%d before)", a.Writers(), w1)
	}
	// Throttling at a rising share keeps halving, down to 1 and no lower.
	share := int64(5)
	feed(a, 200, func(w int) (float64, int64) { share += 2; return 9000, share })
	if s := a.Summary(); s.Halvings < 4 || s.Min != 1 || s.Last > 2 {
		t.Errorf("summary %+v: want at least 4 halvings, down to 1 writer (2 while a probe tries)", s)
	}
	for _, d := range a.Summary().Decisions {
		if d.Writers < 1 || (d.Reason == ReasonThrottled && d.Pace <= 0) {
			t.Fatalf("decision %+v: want a writer at least, and a pace once throttled", d)
		}
	}
}

// When throttling stops after a halving, the pace climbs back while it
// holds the writers, and the writers come back as they raise items/s.
func TestAutoscalerRecoversAfterThrottling(t *testing.T) {
	a := NewAutoscaler(Autoscale{Start: 16})
	feed(a, 12, func(w int) (float64, int64) { return 3000 * float64(w), 0 })
	a.Observe(window(a.Writers(), 3000*float64(a.Writers()), 10))
	w1, p1 := a.Writers(), a.Pace()
	// The table now takes everything, up to 3,000 items/s a writer.
	feed(a, 300, func(w int) (float64, int64) { return min(3000*float64(w), a.Pace()), 0 })
	if a.Pace() <= p1 || a.Writers() <= w1 {
		t.Errorf("after 30 s without throttling: pace %.0f (was %.0f), %d writers (were %d); want both up", a.Pace(), p1, a.Writers(), w1)
	}
	if s := a.Summary(); s.Halvings != 1 {
		t.Errorf("%d halvings, want 1", s.Halvings)
	}
}

// Throttling that stays at the same share of requests when items/s
// falls with the writers halved is not the writers' doing (faults
// injected, a hot key at any rate): the halving is undone, and that
// share no longer halves the writers.
func TestAutoscalerUndoesHalvingThatDidNotHelp(t *testing.T) {
	a := NewAutoscaler(Autoscale{Start: 16})
	// 5% of requests throttled, whatever the rate; 2,000 items/s a writer.
	sink := func(w int) (float64, int64) {
		r := 2000 * float64(w)
		batches := r * testWindow.Seconds() / 25
		return r, int64(batches * 0.05 / 0.95)
	}
	feed(a, 200, sink)
	rs := reasons(a)
	if count(rs, ReasonThrottled) == 0 || count(rs, ReasonUndone) == 0 {
		t.Fatalf("decisions %v: want a halving, then undone", rs)
	}
	if last := rs[len(rs)-1]; last == ReasonThrottled {
		t.Errorf("decisions %v: still halving at the end", rs)
	}
	if s := a.Summary(); s.Last < 16 || s.Halvings != count(rs, ReasonThrottled) || s.Undone != count(rs, ReasonUndone) {
		t.Errorf("summary %+v: want 16 writers or more at the end, the halvings and those undone counted", s)
	}
}

// Windows in which the writers waited for batches (the source is the
// bottleneck) add no writers.
func TestAutoscalerIgnoresStarvedWindows(t *testing.T) {
	a := NewAutoscaler(Autoscale{})
	for i := range 50 {
		s := window(a.Writers(), 1000*float64(i+1), 0) // rising, but...
		s.Busy = s.Busy / 4                            // ... the writers idle 3/4 of the time
		a.Observe(s)
	}
	if a.Writers() != 4 {
		t.Errorf("%d writers, want the 4 of the start: %v", a.Writers(), reasons(a))
	}
}

// A window lasts at least Interval (half while doubling) and until the
// writers finished as many batches as they are (up to ten Intervals).
func TestAutoscalerWindows(t *testing.T) {
	a := NewAutoscaler(Autoscale{Interval: testWindow})
	quarter := window(4, 30000, 0)
	quarter.Elapsed /= 4
	if a.Observe(quarter) {
		t.Fatal("decided on a quarter of Interval")
	}
	if !a.Observe(quarter) || a.Writers() != 8 {
		t.Fatalf("%d writers after half an Interval, a doubling's window: want the first doubling to 8", a.Writers())
	}
	// Two windows of 8 batches each, as the first does not show a rise.
	slow := Sample{Elapsed: testWindow, Items: 25, Batches: 1, Busy: 8 * testWindow}
	for i := 1; i < 16; i++ {
		if a.Observe(slow) {
			t.Fatalf("decided after %d intervals of one batch for 8 writers", i)
		}
	}
	if !a.Observe(slow) || a.Writers() != 4 {
		t.Errorf("%d writers after 2 windows of 8 batches at 8 writers, far slower than at 4: want back to 4", a.Writers())
	}
}

func TestParseConcurrency(t *testing.T) {
	for _, tc := range []struct {
		in   string
		auto bool
		n    int
		ok   bool
	}{
		{"auto", true, 0, true}, {"AUTO", true, 0, true}, {"8", false, 8, true}, {"256", false, 256, true},
		{"0", false, 0, false}, {"257", false, 0, false}, {"-1", false, 0, false}, {"eight", false, 0, false}, {"", false, 0, false},
	} {
		auto, n, err := ParseConcurrency(tc.in, 256)
		if (err == nil) != tc.ok || auto != tc.auto || n != tc.n {
			t.Errorf("ParseConcurrency(%q) = %v, %d, %v", tc.in, auto, n, err)
		}
	}
}
