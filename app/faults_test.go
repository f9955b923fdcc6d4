package app

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/tools/faultproxy"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// With 20% of DynamoDB requests faulted by a proxy in front of dynalite
// (throttling, partial UnprocessedItems, 500/503, connection resets), a
// fixture migration completes, its verification (through the same proxy)
// passes, and the summary says how many retries it took.
func TestMigrateThroughFaults(t *testing.T) {
	parallel(t)
	url, _ := fixtureSource(t, "attendance", 0.2)
	proxy := startProxy(t, faultproxy.Rates{
		ProvisionedThroughputExceeded: 0.04, Throttling: 0.04, Unprocessed: 0.04,
		Status500: 0.03, Status503: 0.03, Reset: 0.02,
		Only: []string{"BatchWriteItem", "Scan", "Query", "DescribeTable"},
	}, 7)
	table := testenv.TableName("attendance")
	mappingFile := testenv.RepoFile(t, "fixtures", "mappings", "strategies", "attendance.yaml")
	// Eight fixed writers: the retries and re-sends under test, not
	// --concurrency auto's answer to throttling (which halves and paces
	// the writers: TestAutoscaleHalvesOnThrottling).
	args := migrateArgs(t, mappingFile, url, table, "--create-table", "--concurrency", "8")
	args = withEndpoint(args, proxy.URL)
	r := runCLI(t, args...)
	if r.code != ExitOK {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	counts := proxy.Counts()
	faults := counts["ProvisionedThroughputExceededException"] + counts["ThrottlingException"] + counts["unprocessed"] +
		counts["500"] + counts["503"] + counts["reset"]
	if counts["unprocessed"] == 0 || counts["reset"] == 0 || faults < 20 {
		t.Fatalf("the proxy injected too few faults to mean anything: %v", counts)
	}
	m := regexp.MustCompile(`(\d+) BatchWriteItem/PutItem requests, (\d+) retried by the SDK \(throttling, 5xx, network\), (\d+) UnprocessedItems re-sends`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no retry counts in the summary:\n%s", r.stdout)
	}
	retried, _ := strconv.Atoi(m[2])
	resent, _ := strconv.Atoi(m[3])
	// Every injected error on a write was retried by the SDK; every partial
	// answer was re-sent by pg2dynamo.
	writeErrors := counts["ProvisionedThroughputExceededException"] + counts["ThrottlingException"] + counts["500"] + counts["503"] + counts["reset"]
	if retried == 0 || retried > writeErrors || resent != counts["unprocessed"] {
		t.Errorf("summary: %d SDK retries, %d re-sends; the proxy injected %v", retried, resent, counts)
	}
	if !regexp.MustCompile(`verify PASSED`).MatchString(r.stdout) {
		t.Errorf("verification did not pass:\n%s", r.stdout)
	}
}

// Permanent DynamoDB errors (access denied, bad credentials, a table gone)
// stop the run at once, not after retries, with DynamoDB's message, and
// leave a checkpoint to resume from.
func TestPermanentErrorsStopFast(t *testing.T) {
	parallel(t)
	url, _ := fixtureSource(t, "tickets", 0.2)
	for _, typ := range []string{"AccessDeniedException", "UnrecognizedClientException", "ResourceNotFoundException"} {
		t.Run(typ, func(t *testing.T) {
			table := testenv.TableName("perm")
			// Create the table first, straight to dynalite.
			if r := runCLI(t, migrateArgs(t, testenv.RepoFile(t, "fixtures", "mappings", "tickets.yaml"), url, table, "--create-table", "--no-verify")...); r.code != ExitOK {
				t.Fatalf("setup: exit %d\n%s", r.code, r.stderr)
			}
			proxy := startProxy(t, faultproxy.Rates{
				Permanent: typ, PermanentAfter: 20, Only: []string{"BatchWriteItem"}}, 1)
			args := migrateArgs(t, testenv.RepoFile(t, "fixtures", "mappings", "tickets.yaml"), url, table, "--no-verify",
				"--concurrency", strconv.Itoa(pipelineWriters))
			args = withEndpoint(args, proxy.URL)
			r := runCLI(t, args...)
			if r.code != ExitFailed || !strings.Contains(r.stderr, typ) {
				t.Fatalf("exit %d, want %d with %s\n%s", r.code, ExitFailed, typ, r.stderr)
			}
			if n := proxy.Counts()["permanent"]; n > 2*pipelineWriters {
				t.Errorf("%d requests failed with %s: the run went on (or retried) after the first", n, typ)
			}
			// The batches written before the error are recorded: with
			// parallel readers, as progress in some entity, not
			// necessarily the first.
			b, err := os.ReadFile(checkpointPath(args))
			if err != nil {
				t.Fatal(err)
			}
			cp, err := pipeline.DecodeCheckpoint(b)
			if err != nil {
				t.Fatal(err)
			}
			progressed := false
			for _, ep := range cp.Entities {
				for _, r := range ep.Ranges {
					progressed = progressed || r.Done || len(r.After) > 0
				}
			}
			if !progressed {
				b, _ := os.ReadFile(checkpointPath(args))
				t.Errorf("checkpoint after the stop: %s; want the progress written before the error", b)
			}
		})
	}
}

// pipelineWriters is the writers TestPermanentErrorsStopFast runs with: at
// most that many requests are in flight when the first permanent error
// arrives.
const pipelineWriters = 8

func checkpointPath(args []string) string {
	for i, a := range args {
		if a == "--checkpoint" {
			return args[i+1]
		}
	}
	return ""
}

// A table that throttles every write does not keep a run retrying forever:
// past --retry-deadline the run stops with a message saying so.
func TestRetryDeadline(t *testing.T) {
	parallel(t)
	url, _ := fixtureSource(t, "tickets", 0.05)
	proxy := startProxy(t, faultproxy.Rates{Throttling: 1, Only: []string{"BatchWriteItem"}}, 1)
	args := withEndpoint(migrateArgs(t, testenv.RepoFile(t, "fixtures", "mappings", "tickets.yaml"), url, testenv.TableName("deadline"),
		"--create-table", "--no-verify", "--max-retries", "1000", "--retry-deadline", "2s"), proxy.URL)
	r := runCLI(t, args...)
	want := "pg2dynamo: a batch was still being retried after the retry deadline of 2s (DynamoDB throttling or unreachable)"
	if r.code != ExitFailed || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d, want %d and %q\n%s", r.code, ExitFailed, want, r.stderr)
	}
}

// A GSI is eventually consistent: right after a load, a Query of it can
// miss the latest writes. With a proxy that answers the first GSI Queries
// with an empty page, verify queries those checks again within --gsi-wait
// and passes, and its JSON report counts the re-reads; with --gsi-wait 0 it
// queries once and reports the lagging pattern as a mismatch (exit 4).
// Queries of the table itself read consistently.
func TestVerifyWaitsForGSILag(t *testing.T) {
	parallel(t)
	url, _ := fixtureSource(t, "attendance", 0.05)
	table := testenv.TableName("attendance")
	mappingFile := testenv.RepoFile(t, "fixtures", "mappings", "strategies", "attendance.yaml")
	if r := runCLI(t, migrateArgs(t, mappingFile, url, table, "--create-table", "--no-verify")...); r.code != ExitOK {
		t.Fatalf("migrate exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	verifyThrough := func(t *testing.T, lag int, extra ...string) (cliResult, map[string]int, report.Report) {
		proxy := startProxy(t, faultproxy.Rates{IndexLag: lag}, 1)
		out := filepath.Join(t.TempDir(), "r.json")
		args := append([]string{"verify", "--mapping", mappingFile, "--source", url, "--endpoint-url", proxy.URL,
			"--table", table, "--report-json", out}, extra...)
		r := runCLI(t, args...)
		return r, proxy.Counts(), readReport(t, out)
	}
	t.Run("waits", func(t *testing.T) {
		r, counts, rep := verifyThrough(t, 3, "--gsi-wait", "60s")
		if r.code != ExitOK {
			t.Fatalf("exit %d, want %d\n%s%s", r.code, ExitOK, r.stdout, r.stderr)
		}
		retries := 0
		for _, p := range rep.Patterns {
			if p.Index == "table" && p.Retries > 0 {
				t.Errorf("pattern %s on the table was queried again: %+v", p.Pattern, p)
			}
			retries += p.Retries
		}
		if counts["index-lag"] != 3 || retries != 3 {
			t.Fatalf("%d stale answers, %d re-reads in the report; want 3 and 3", counts["index-lag"], retries)
		}
	})
	t.Run("no wait", func(t *testing.T) {
		r, _, rep := verifyThrough(t, 1, "--gsi-wait", "0")
		if r.code != ExitMismatch {
			t.Fatalf("exit %d, want %d\n%s%s", r.code, ExitMismatch, r.stdout, r.stderr)
		}
		var bad []string
		for _, p := range rep.Patterns {
			if !p.OK {
				bad = append(bad, p.Pattern+" on "+p.Index)
			}
		}
		if len(bad) != 1 || bad[0] != "LectureStudents on Inverted" {
			t.Fatalf("failed checks %v, want exactly one of LectureStudents on Inverted", bad)
		}
	})
}

// startProxy starts a fault proxy with rates and seed in front of the
// test's dynalite, closed when t ends.
func startProxy(t *testing.T, rates faultproxy.Rates, seed uint64) *faultproxy.Proxy {
	t.Helper()
	proxy, err := faultproxy.Start(dynalite(t).Endpoint, rates, seed)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	return proxy
}
