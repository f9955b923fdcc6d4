package app

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/internal/faultproxy"
	"github.com/pg2dynamo/pg2dynamo/internal/testenv"
)

// With --max-write-units 500, the write capacity DynamoDB reports consumed
// (summed by a proxy in front of dynalite by the second each request
// reached it, not timed by the test) averages within 10% of the cap over a
// run of about 30 s, and no 3 seconds in a row go more than 20% over it.
// Three seconds, not one: a pause of the client (GC under -race, a busy
// CPU) moves requests the limiter released on time into the next second,
// and the bucket's burst (50) is allowed on top.
func TestMaxWriteUnits(t *testing.T) {
	if testing.Short() {
		t.Skip("a 30 s run")
	}
	// Not parallel: it measures a rate, which other tests' load on the
	// CPUs bends (run beside them, dynalite fell to 432 units a second).
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	url, _ := fixtureSource(t, "attendance", 0.45)
	proxy, err := faultproxy.Start(dynalite(t).Endpoint, faultproxy.Rates{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	args := migrateArgs(t, filepath.Join(root, "fixtures", "mappings", "attendance.yaml"), url, testenv.TableName("rate"),
		"--create-table", "--no-verify", "--max-write-units", "500")
	args = withEndpoint(args, proxy.URL)
	if r := runCLI(t, args...); r.code != ExitOK {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	perSecond := proxy.ConsumedPerSecond()
	secs := slices.Sorted(func(yield func(int64) bool) {
		for s := range perSecond {
			if !yield(s) {
				return
			}
		}
	})
	if len(secs) < 20 {
		t.Fatalf("the run lasted %d seconds; too short to measure a rate", len(secs))
	}
	full := secs[1 : len(secs)-1] // the first and last seconds are partial
	var sum, peak float64
	for i, s := range full {
		sum += perSecond[s]
		if i >= 2 {
			peak = max(peak, perSecond[s]+perSecond[s-1]+perSecond[s-2])
		}
	}
	avg := sum / float64(full[len(full)-1]-full[0]+1)
	t.Logf("%d full seconds, %.0f write units a second on average, %.0f at most in 3 seconds", len(full), avg, peak)
	if avg < 450 || avg > 550 {
		t.Errorf("average %.0f write units a second, want 500 ± 10%%", avg)
	}
	if peak > 1800 {
		t.Errorf("3 seconds in a row consumed %.0f write units, over 3 × 500 + 20%%", peak)
	}
}
