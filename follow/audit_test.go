package follow

import (
	"context"
	"fmt"
	"math"
	"testing"
)

// The audit's bookkeeping of the follow's writes, without servers: which
// keys a slice leaves out, and which windows it waits for before its
// snapshot.

func TestKeyLogRecordsKeysWhileRecording(t *testing.T) {
	var l keyLog
	l.add([2]string{"A", "1"}) // before recording: not recorded
	first, _ := l.record()
	l.add([2]string{"A", "2"}, [2]string{"B", "3"})
	// A second recording at once (a Beside comparison beside the audit):
	// each holds the keys written since it began.
	all, _ := l.record()
	l.add([2]string{"B", "6"})
	for _, c := range []struct {
		rec  *recording
		key  [2]string
		want bool
	}{{first, [2]string{"A", "1"}, false}, {first, [2]string{"A", "2"}, true}, {first, [2]string{"B", "3"}, true}, {first, [2]string{"B", "6"}, true},
		{all, [2]string{"A", "2"}, false}, {all, [2]string{"B", "6"}, true}} {
		if got := l.wrote(c.rec, c.key); got != c.want {
			t.Errorf("wrote(%v) = %v, want %v", c.key, got, c.want)
		}
	}
	l.stop(first)
	l.add([2]string{"A", "4"})
	if l.wrote(first, [2]string{"A", "2"}) || l.wrote(first, [2]string{"A", "4"}) {
		t.Error("keys kept after stop")
	}
	if !l.wrote(all, [2]string{"A", "4"}) {
		t.Error("the other recording stopped with the first")
	}
	l.stop(all)
	// Binary keys may hold NUL bytes: two keys are one only when both of
	// their parts are equal.
	bin, _ := l.record()
	l.add([2]string{"a\x00b", "c"})
	if l.wrote(bin, [2]string{"a", "b\x00c"}) || !l.wrote(bin, [2]string{"a\x00b", "c"}) {
		t.Error("keys told apart by where a NUL byte falls are recorded as one")
	}
	l.stop(bin)
	var none *keyLog
	none.add([2]string{"A", "5"})
	none.done(none.window())
}

// A pass waits for the windows begun before it started recording, whose
// writes it could not see begin, and for no later one.
func TestKeyLogWaitsForTheWindowsBegunBefore(t *testing.T) {
	var l keyLog
	first, second := l.window(), l.window()
	_, seq := l.record()
	third := l.window()              // begun after: its keys are recorded, not waited for
	done := func() context.Context { // a wait that must not block
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	l.done(first)
	if err := l.waitWindows(done(), seq); err == nil {
		t.Fatalf("waitWindows returned nil with window %d of %d still writing", second, seq)
	}
	waited := make(chan error, 1)
	go func() { waited <- l.waitWindows(context.Background(), seq) }()
	l.done(second)
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if err := l.waitWindows(done(), third); err == nil {
		t.Error("waitWindows on a window not done returned nil")
	}
}

func TestSliceOfSpreadsPartitionKeys(t *testing.T) {
	const n = 4
	counts := make([]int, n)
	for i := range 4000 {
		pk := fmt.Sprintf("USER#%d", i)
		s := sliceOf(pk, n)
		if s != sliceOf(pk, n) {
			t.Fatalf("sliceOf(%q) not stable", pk)
		}
		counts[s]++
	}
	for i, c := range counts {
		if c < 800 || c > 1200 {
			t.Errorf("slice %d of %d holds %d of 4000 keys: %v", i, n, c, counts)
		}
	}
	if sliceOf("x", 1) != 0 {
		t.Error("one slice: not slice 0")
	}
}

func TestParseAuditMode(t *testing.T) {
	for _, w := range AuditModes {
		m, err := ParseAuditMode(w)
		if err != nil || m.String() != w {
			t.Errorf("ParseAuditMode(%q) = %v, %v", w, m, err)
		}
	}
	if _, err := ParseAuditMode("fix"); err == nil {
		t.Error(`ParseAuditMode("fix"): no error`)
	}
}

// What the audit's hook adds to each key a window writes: an atomic load
// while no pass records (the audit's defaults, most of the time), a map
// insert under a mutex while one does.
func BenchmarkKeyLogAdd(b *testing.B) {
	key := [2]string{"TICKET#0000012345", "TICKET#0000012345"}
	b.Run("idle", func(b *testing.B) {
		var l keyLog
		for b.Loop() {
			l.add(key)
		}
	})
	b.Run("recording", func(b *testing.B) {
		var l keyLog
		l.record()
		for b.Loop() {
			l.add(key)
		}
	})
}

// A window that ends before one begun earlier (a chunk written beside the
// windows) does not count the earlier one done: a pass still waits for
// it.
func TestKeyLogWaitsForAnEarlierWindowEndingLast(t *testing.T) {
	var l keyLog
	side, window := l.window(), l.window()
	_, seq := l.record()
	l.done(window)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.waitWindows(ctx, seq); err == nil {
		t.Fatalf("waitWindows returned nil with window %d still writing (window %d done)", side, window)
	}
	l.done(side)
	if err := l.waitWindows(ctx, seq); err != nil {
		t.Fatalf("waitWindows once both are done: %v", err)
	}
}

// The drift the table may still hold: the last completed cycle's that was
// not repaired, or while a cycle is under way, the more of its count so far
// and the previous cycle's; a clean cycle clears what earlier ones found.
func TestAuditStatusUnrepaired(t *testing.T) {
	for _, c := range []struct {
		name string
		st   AuditStatus
		want int64
	}{
		{"first cycle under way", AuditStatus{Cycle: 1, Drifted: 3}, 3},
		{"cycle 2 done, found 5, repaired 2", AuditStatus{Cycle: 2, Cycles: 2, Drifted: 5, Repaired: 2, PrevDrifted: 9}, 3},
		{"cycle 3 under way, nothing yet; cycle 2 left 3", AuditStatus{Cycle: 3, Cycles: 2, PrevDrifted: 5, PrevRepaired: 2}, 3},
		{"cycle 3 under way, more than cycle 2 left", AuditStatus{Cycle: 3, Cycles: 2, Drifted: 7, PrevDrifted: 5, PrevRepaired: 2}, 7},
		{"cycle 4 done clean after drift in 3", AuditStatus{Cycle: 4, Cycles: 4, PrevDrifted: 13, TotalDrifted: 13, LastDriftCycle: 3}, 0},
		{"cycle 5 under way after clean 4", AuditStatus{Cycle: 5, Cycles: 4, TotalDrifted: 13, LastDriftCycle: 3}, 0},
	} {
		if got := c.st.Unrepaired(); got != c.want {
			t.Errorf("%s: Unrepaired() = %d, want %d", c.name, got, c.want)
		}
	}
}

// A pass's progress: a third for deriving, a third for Scanning, each
// over the source's count and capped at its third, never going back.
func TestAuditProgressByPhase(t *testing.T) {
	au := &Auditor{est: 300}
	for _, c := range []struct {
		phase int
		items int64
		want  float64
	}{{0, 150, 1. / 6}, {0, 600, 1. / 3}, {1, 0, 1. / 3}, {1, 100, 1./3 + 1./9}, {0, 30, 1./3 + 1./9}, {1, 900, 2. / 3}} {
		au.progress(c.phase, c.items)
		if got := au.Status().Progress; math.Abs(got-c.want) > 1e-9 {
			t.Errorf("progress(%d, %d): %.4f, want %.4f", c.phase, c.items, got, c.want)
		}
	}
}
