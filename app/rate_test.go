package app

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/fixtures"
	"github.com/pg2dynamo/pg2dynamo/internal/faultproxy"
	"github.com/pg2dynamo/pg2dynamo/internal/testenv"
)

// With --max-write-units 500, the write capacity DynamoDB reports consumed
// (summed per second by a proxy in front of dynalite, not timed by the
// test) averages within 10% of the cap over a run of about 30 s, and no
// second goes more than 20% over it.
func TestMaxWriteUnits(t *testing.T) {
	if testing.Short() {
		t.Skip("a 30 s run")
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	url := testenv.NewDatabase(t)
	if _, err := fixtures.Load(context.Background(), testenv.Connect(t, url), "attendance", 0.45, 1); err != nil {
		t.Fatal(err)
	}
	proxy, err := faultproxy.Start(testenv.SharedDynalite(t).Endpoint, faultproxy.Rates{}, 1)
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
	for _, s := range full {
		sum += perSecond[s]
		peak = max(peak, perSecond[s])
	}
	avg := sum / float64(len(full))
	t.Logf("%d full seconds, %.0f write units a second on average, %.0f at most", len(full), avg, peak)
	if avg < 450 || avg > 550 {
		t.Errorf("average %.0f write units a second, want 500 ± 10%%", avg)
	}
	if peak > 600 {
		t.Errorf("a second consumed %.0f write units, over 500 + 20%%", peak)
	}
}
