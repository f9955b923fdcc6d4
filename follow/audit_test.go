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
	l.record(in)
	l.add([2]string{"A", "2"}, [2]string{"B", "3"})
	for _, c := range []struct {
		key  [2]string
		want bool
	}{{[2]string{"A", "1"}, false}, {[2]string{"A", "2"}, true}, {[2]string{"B", "3"}, false}} {
		if got := l.wrote(c.key); got != c.want {
			t.Errorf("wrote(%v) = %v, want %v", c.key, got, c.want)
		}
	}
	l.stop()
	l.add([2]string{"A", "4"})
	if l.wrote([2]string{"A", "2"}) || l.wrote([2]string{"A", "4"}) {
		t.Error("keys kept after stop")
	}
	var none *keyLog // a follow without an audit
	none.add([2]string{"A", "5"})
	none.done(none.window())
}

// A slice waits for the windows begun before it started recording, whose
// writes it could not see begin, and for no later one.
func TestKeyLogWaitsForTheWindowsBegunBefore(t *testing.T) {
	var l keyLog
	first, second := l.window(), l.window()
	seq := l.record(func(string) bool { return true })
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
