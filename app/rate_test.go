package app

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pg2dynamo/pg2dynamo/tools/faultproxy"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// --max-write-units reaches the writers: a run capped at 200 write units a
// second sends DynamoDB (as a proxy in front of dynalite sums the
// ConsumedCapacity it reports) the write units its summary counts, and
// cannot have sent them faster than the cap: it lasts at least (units −
// the bucket of 50) / 200 seconds: about 1100 units, so at least 5.3 s,
// where the same run uncapped took 0.7 s. A busy machine only makes it longer, so the
// bound holds however loaded the machine is.
//
// Whether the limit holds its rate, second by second and with writers in
// parallel, is checked by what was sent on a fake clock
// (load.TestWriteLimitHoldsTheCap); the rate a real run reaches is the
// bench's to measure, not a test's: this test used to time a 30 s run and
// failed on a busy machine (issue 26: 411 write units a second for 500).
func TestMaxWriteUnits(t *testing.T) {
	if testing.Short() {
		t.Skip("a 5 s run")
	}
	parallel(t)
	const limit, bucket = 200, 50
	url, _ := fixtureSource(t, "attendance", 0.05)
	proxy := startProxy(t, faultproxy.Rates{}, 1)
	args := migrateArgs(t, testenv.RepoFile(t, "fixtures", "mappings", "attendance.yaml"), url, testenv.TableName("rate"),
		"--create-table", "--no-verify", "--max-write-units", strconv.Itoa(limit))
	args = withEndpoint(args, proxy.URL)
	start := time.Now()
	r := runCLI(t, args...)
	took := time.Since(start)
	if r.code != ExitOK {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var sent float64
	for _, units := range proxy.ConsumedPerSecond() {
		sent += units
	}
	m := regexp.MustCompile(`([0-9]+) write units consumed`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no write units consumed in the summary:\n%s", r.stdout)
	}
	if counted, _ := strconv.ParseFloat(m[1], 64); counted != math.Round(sent) { // printed with %.0f
		t.Errorf("the summary counts %v write units consumed, DynamoDB reported %v", counted, sent)
	}
	if sent < 4*limit {
		t.Fatalf("%v write units sent: too few to show a cap of %d a second", sent, limit)
	}
	least := time.Duration((sent - bucket) / limit * float64(time.Second))
	t.Logf("%.0f write units in %s (at least %s at %d a second)", sent, took.Round(time.Millisecond), least, limit)
	if took < least {
		t.Errorf("%.0f write units sent in %s: faster than --max-write-units %d allows (at least %s)", sent, took, limit, least)
	}
}

// --max-read-units reaches every read of verify, its Scan's segments and its
// access patterns' Queries: the read units DynamoDB reported (summed by a
// proxy in front of dynalite) cannot have been consumed faster than the cap,
// less the bucket of one second's units, and verify's log counts them all. A
// busy machine only makes the run longer, so the bound holds however loaded
// the machine is. The check still passes.
func TestMaxReadUnits(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3 s run")
	}
	parallel(t)
	const limit = 16
	url, _ := fixtureSource(t, "attendance", 0.05)
	mappingFile := testenv.RepoFile(t, "fixtures", "mappings", "strategies", "attendance.yaml")
	table := testenv.TableName("readrate")
	if r := runCLI(t, migrateArgs(t, mappingFile, url, table, "--create-table", "--no-verify")...); r.code != ExitOK {
		t.Fatalf("migrate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	proxy := startProxy(t, faultproxy.Rates{}, 1)
	start := time.Now()
	r := runCLI(t, "verify", "--mapping", mappingFile, "--source", url, "--endpoint-url", proxy.URL, "--table", table,
		"--progress", "none", "--segments", "4", "--max-read-units", strconv.Itoa(limit))
	took := time.Since(start)
	if r.code != ExitOK {
		t.Fatalf("verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	read, reported := proxy.ReadUnits()
	for _, op := range []string{"Scan", "Query"} {
		if n := proxy.Counts()["op:"+op]; n == 0 || reported[op] != n {
			t.Errorf("%d of %d %s answers reported their read units: each must ask (ReturnConsumedCapacity)", reported[op], n, op)
		}
	}
	if read < 3*limit {
		t.Fatalf("%v read units consumed: too few to show a cap of %d a second", read, limit)
	}
	if !strings.Contains(r.stderr, "(at most 16 read units a second, --max-read-units)") {
		t.Errorf("verify's log does not say the reads are paced:\n%s", r.stderr)
	}
	m := regexp.MustCompile(`reading table \S+ consumed (\d+) read units`).FindStringSubmatch(r.stderr)
	if m == nil || m[1] != fmt.Sprintf("%.0f", read) {
		t.Errorf("verify's log gives %v read units consumed, DynamoDB reported %v:\n%s", m, read, r.stderr)
	}
	least := time.Duration((read - limit) / limit * float64(time.Second))
	t.Logf("%.0f read units in %d Scans and %d Queries, %s (at least %s at %d a second)", read, reported["Scan"], reported["Query"], took.Round(time.Millisecond), least, limit)
	if took < least {
		t.Errorf("%.0f read units consumed in %s: faster than --max-read-units %d allows (at least %s)", read, took, limit, least)
	}
}
