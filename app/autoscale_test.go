package app

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/tools/faultproxy"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// autoSummary matches the summary's line of an auto run's writers.
var autoSummary = regexp.MustCompile(`writers (\d+)(?:–(\d+))? \(auto\): (\d+) halvings? on throttling`)

// migrate --concurrency auto writes the fixture exactly (the verify that
// follows passes), its summary gives the range of writers it used, and
// its progress lines the writers it has.
func TestMigrateConcurrencyAuto(t *testing.T) {
	parallel(t)
	url, _ := fixtureSource(t, "tickets", 0.2)
	args := migrateArgs(t, testenv.RepoFile(t, "fixtures", "mappings", "tickets.yaml"), url, testenv.TableName("auto"),
		"--create-table", "--concurrency", "auto", "--max-concurrency", "12", "--progress", "lines", "--progress-interval", "50ms")
	r := runCLI(t, args...)
	if r.code != ExitOK {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !regexp.MustCompile(`verify PASSED`).MatchString(r.stdout) {
		t.Errorf("verification did not pass:\n%s", r.stdout)
	}
	m := autoSummary.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no writers in the summary:\n%s", r.stdout)
	}
	lo, _ := strconv.Atoi(m[1])
	hi := lo
	if m[2] != "" {
		hi, _ = strconv.Atoi(m[2])
	}
	if lo < 1 || hi > 12 || lo > hi {
		t.Errorf("writers %d to %d: want within 1 to --max-concurrency 12\n%s", lo, hi, r.stdout)
	}
	if !regexp.MustCompile(`total: \d+/\d+ rows done \(100%\), \d+ items/s, \d+ writers?, elapsed`).MatchString(r.stderr) {
		t.Errorf("no writers on the progress line:\n%s", r.stderr)
	}
}

// A table that takes 50 write units a second (a fault proxy in front of
// dynalite, refusing or handing back in UnprocessedItems what is over)
// makes an auto run halve its writers; what it writes is still exact.
// Asserted on the run's own account of its decisions and the proxy's
// count of throttled requests, not on time. The capacity is far below
// what even a loaded machine writes (222 units a second seen at load 20),
// so that the run is throttled however slow the machine.
func TestAutoscaleHalvesOnThrottling(t *testing.T) {
	parallel(t)
	url, _ := fixtureSource(t, "attendance", 0.05)
	proxy := startProxy(t, faultproxy.Rates{WriteUnits: 50, WriteBurst: 50}, 1)
	args := migrateArgs(t, testenv.RepoFile(t, "fixtures", "mappings", "attendance.yaml"), url, testenv.TableName("autothrottle"),
		"--create-table", "--concurrency", "auto",
		// A refused batch waits for the table's capacity to come back
		// (25 units take half a second at 50 a second): the SDK's own
		// backoff, not the tests' 10 ms, which gives up before that.
		"--max-backoff", "2s")
	r := runCLI(t, withEndpoint(args, proxy.URL)...)
	if r.code != ExitOK {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !regexp.MustCompile(`verify PASSED`).MatchString(r.stdout) {
		t.Errorf("verification did not pass:\n%s", r.stdout)
	}
	c := proxy.Capacity()
	if c.Exceeded+c.Partial == 0 {
		t.Fatalf("the proxy throttled nothing (%+v): the test shows nothing", c)
	}
	m := autoSummary.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no writers in the summary:\n%s", r.stdout)
	}
	if halvings, _ := strconv.Atoi(m[3]); halvings == 0 {
		t.Errorf("%d requests throttled, %d refused whole, and no halving: %s", c.Partial, c.Exceeded, m[0])
	}
	t.Logf("%s; the proxy: %+v", m[0], c)
}

// --concurrency takes auto or 1 to 256 writers, --max-concurrency 1 to
// 256: anything else is a usage error (exit 2) before anything is read.
func TestConcurrencyFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--concurrency", "0"}, `--concurrency "0": expected auto or a number of writers from 1 to 256`},
		{[]string{"--concurrency", "257"}, `--concurrency "257": expected auto or a number of writers from 1 to 256`},
		{[]string{"-c", "lots"}, `--concurrency "lots": expected auto or a number of writers from 1 to 256`},
		{[]string{"--concurrency", "auto", "--max-concurrency", "0"}, `--max-concurrency 0: expected 1 to 256`},
		{[]string{"--max-concurrency", "1000"}, `--max-concurrency 1000: expected 1 to 256`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runCLI(t, append([]string{"migrate", "--mapping", "nowhere.yaml"}, tc.args...)...)
			if r.code != ExitUsage || !strings.Contains(r.stderr, tc.says) {
				t.Errorf("exit %d, want %d saying %q\n%s", r.code, ExitUsage, tc.says, r.stderr)
			}
		})
	}
}
