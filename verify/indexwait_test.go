package verify

import (
	"testing"
	"time"
)

// A --gsi-wait shorter than the backoff's 2 s still buys a re-read, its
// wait cut to the budget; a spent budget buys none, and 0 never any.
func TestIndexWaitFitsTheBudget(t *testing.T) {
	for range 20 { // the first wait is random: try it often
		w := newIndexWait(300 * time.Millisecond)
		d, ok := w.delay(1)
		if !ok || d > 300*time.Millisecond {
			t.Fatalf("first re-read with a 300ms budget: wait %v, allowed %v; want at most 300ms, allowed", d, ok)
		}
		w.deadline = time.Now().Add(-time.Millisecond)
		if d, ok := w.delay(2); ok {
			t.Fatalf("re-read allowed (after %v) with the budget spent", d)
		}
	}
	if _, ok := newIndexWait(0).delay(1); ok {
		t.Fatal("a re-read allowed with --gsi-wait 0")
	}
}
