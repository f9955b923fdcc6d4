package progress

import (
	"strings"
	"testing"
	"time"

	"github.com/pg2dynamo/pg2dynamo/pipeline"
)

// The ETA follows the rate of about the last minute, not the phase's
// average: two minutes at 10 rows/s, then one at 1,000 rows/s, leaves
// 38,800 rows for about 39 s, where the average (340 rows/s) says 1m54s.
func TestETAFollowsTheRecentRate(t *testing.T) {
	now := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	b := newProgressBoard(func() time.Time { return now })
	const total = 100_000
	b.plan([]pipeline.PlannedEntity{{Name: "T", Rows: total}})
	b.mu.Lock()
	defer b.mu.Unlock()
	var rows int64
	step := func(n int, perStep int64) {
		for range n {
			now = now.Add(10 * time.Second)
			rows += perStep
			b.eta(rows, total)
		}
	}
	step(12, 100)
	if got := b.eta(rows, total); got != "2h44m" {
		t.Errorf("after two minutes at 10 rows/s: ETA %s, want 2h44m (98,800 rows at 10 rows/s)", got)
	}
	step(6, 10_000)
	if got := b.eta(rows, total); got != "39s" {
		t.Errorf("after a minute at 1,000 rows/s: ETA %s, want 39s (38,800 rows at 1,000 rows/s)", got)
	}
	if got := b.eta(total, total); got != "0s" {
		t.Errorf("done: ETA %s, want 0s", got)
	}
}

// The lines name the phase that follows, which the ETA leaves out.
func TestLinesNameThePhaseThatFollows(t *testing.T) {
	var out strings.Builder
	p, closeProg, err := New("lines", &out, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p.(interface{ Then(string) }).Then("verify")
	p.Plan([]pipeline.PlannedEntity{{Name: "A", Rows: 2}, {Name: "B", Rows: 2}})
	p.Start("A")
	p.Advance("A", 2, 2)
	p.Start("B")
	p.Advance("B", 2, 2)
	closeProg()
	if !strings.Contains(out.String(), "ETA 0s, then verify\n") {
		t.Errorf("no overall line ending in \"ETA 0s, then verify\":\n%s", out.String())
	}
}
