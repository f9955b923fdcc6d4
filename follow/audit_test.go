package follow

import (
	"context"
	"fmt"
	"testing"
)

// The audit's bookkeeping of the follow's writes, without servers: which
// keys a slice leaves out, and which windows it waits for before its
// snapshot.

func TestKeyLogRecordsTheSlicesKeysWhileRecording(t *testing.T) {
	var l keyLog
	in := func(pk string) bool { return pk == "A" }
	l.add([2]string{"A", "1"}) // before recording: not recorded
	slice, _ := l.record(in)
	l.add([2]string{"A", "2"}, [2]string{"B", "3"})
	// A second recording at once (a Beside comparison, every key): each
	// holds the keys written since it began.
	all, _ := l.record(nil)
	l.add([2]string{"B", "6"})
	for _, c := range []struct {
		rec  *recording
		key  [2]string
		want bool
	}{{slice, [2]string{"A", "1"}, false}, {slice, [2]string{"A", "2"}, true}, {slice, [2]string{"B", "3"}, false}, {slice, [2]string{"B", "6"}, false},
		{all, [2]string{"A", "2"}, false}, {all, [2]string{"B", "6"}, true}} {
		if got := l.wrote(c.rec, c.key); got != c.want {
			t.Errorf("wrote(%v) = %v, want %v", c.key, got, c.want)
		}
	}
	l.stop(slice)
	l.add([2]string{"A", "4"})
	if l.wrote(slice, [2]string{"A", "2"}) || l.wrote(slice, [2]string{"A", "4"}) {
		t.Error("keys kept after stop")
	}
	if !l.wrote(all, [2]string{"A", "4"}) {
		t.Error("the other recording stopped with the first")
	}
	l.stop(all)
	// Binary keys may hold NUL bytes: two keys are one only when both of
	// their parts are equal.
	bin, _ := l.record(nil)
	l.add([2]string{"a\x00b", "c"})
	if l.wrote(bin, [2]string{"a", "b\x00c"}) || !l.wrote(bin, [2]string{"a\x00b", "c"}) {
		t.Error("keys told apart by where a NUL byte falls are recorded as one")
	}
	l.stop(bin)
	var none *keyLog
	none.add([2]string{"A", "5"})
	none.done(none.window())
}

// A slice waits for the windows begun before it started recording, whose
// writes it could not see begin, and for no later one.
func TestKeyLogWaitsForTheWindowsBegunBefore(t *testing.T) {
	var l keyLog
	first, second := l.window(), l.window()
	_, seq := l.record(func(string) bool { return true })
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
// while no slice records (the audit's defaults, most of the time), a
// partition-key hash and a map insert under a mutex while one does.
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
		l.record(func(pk string) bool { return sliceOf(pk, 8) == 3 })
		for b.Loop() {
			l.add(key)
		}
	})
}

// A window that ends before one begun earlier (a chunk written beside the
// windows) does not count the earlier one done: a slice still waits for
// it.
func TestKeyLogWaitsForAnEarlierWindowEndingLast(t *testing.T) {
	var l keyLog
	side, window := l.window(), l.window()
	_, seq := l.record(nil)
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
