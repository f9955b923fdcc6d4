package follow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// A follow as an operations team runs it: metrics scraped with the
// Prometheus text parser, health, JSON logs, and the cutover.

// opsMetrics are the metrics every follow serves.
var opsMetrics = []string{
	"pg2dynamo_rows_read_total", "pg2dynamo_items_written_total", "pg2dynamo_items_deleted_total",
	"pg2dynamo_write_units_total", "pg2dynamo_throttled_requests_total", "pg2dynamo_retries_total",
	"pg2dynamo_rejects_total", "pg2dynamo_writers", "pg2dynamo_follow_lag_bytes", "pg2dynamo_follow_lag_seconds",
	"pg2dynamo_follow_applied_lsn", "pg2dynamo_follow_changes_total", "pg2dynamo_audit_cycle_progress",
	"pg2dynamo_audit_drift_items", "pg2dynamo_read_units_total",
}

// scrape reads addr's /metrics and parses it as Prometheus text.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	return fams
}

// sum is the total of a family's counter or gauge series (0 when absent).
func sum(fams map[string]*dto.MetricFamily, name string) float64 {
	total := 0.0
	if f := fams[name]; f != nil {
		for _, m := range f.Metric {
			switch {
			case m.Counter != nil:
				total += m.Counter.GetValue()
			case m.Gauge != nil:
				total += m.Gauge.GetValue()
			}
		}
	}
	return total
}

// health returns addr's /healthz status code and body.
func health(t *testing.T, addr string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// opsProcess is a pg2dynamo process with its stdout and stderr apart.
type opsProcess struct {
	cmd         *exec.Cmd
	stdout, err *lockedBuffer
	done        chan error
}

func startOps(t *testing.T, args ...string) *opsProcess {
	t.Helper()
	p := &opsProcess{cmd: exec.Command(pg2dynamo(t), args...), stdout: &lockedBuffer{}, err: &lockedBuffer{}, done: make(chan error, 1)}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.err
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() { p.cmd.Process.Kill() })
	return p
}

// until polls cond every 20 ms until it holds; it fails the test if the
// process ends first, or if its stderr stays the same for eventWait (a
// hung follow).
func (p *opsProcess) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	stall := stallWatch{}
	for !cond() {
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("waiting for %s: the process ended (%v)\n%s", what, err, firstLines(p.err.String(), 60))
		case <-time.After(20 * time.Millisecond):
		}
		if stall.stalled(p.err.String() + p.stdout.String()) {
			t.Fatalf("waiting for %s: nothing new for %s\n%s", what, eventWait, firstLines(p.err.String(), 60))
		}
	}
}

// writer commits one-row transactions into notes from a goroutine until
// stopped, and says how many it committed.
type writer struct {
	stop      atomic.Bool
	committed atomic.Int64
	done      chan error
}

func startWriter(t *testing.T, url string, from int) *writer {
	conn := testenv.Connect(t, url)
	w := &writer{done: make(chan error, 1)}
	go func() {
		for i := from; !w.stop.Load(); i++ {
			if _, err := conn.Exec(context.Background(), fmt.Sprintf("INSERT INTO notes VALUES (%d, 'o%d', 'written %d')", i, i%3, i)); err != nil {
				w.done <- err
				return
			}
			w.committed.Add(1)
		}
		w.done <- nil
	}()
	return w
}

// end stops the writer and returns the server's WAL insert position after
// its last commit.
func (w *writer) end(t *testing.T, url string) pglogrepl.LSN {
	t.Helper()
	w.stop.Store(true)
	if err := <-w.done; err != nil {
		t.Fatal(err)
	}
	lsn, err := follow.CurrentLSN(context.Background(), testenv.Connect(t, url))
	if err != nil {
		t.Fatal(err)
	}
	return lsn
}

// A follow with --metrics-addr, --max-lag and --log-format json, through
// a recording proxy in front of dynalite: /healthz is 200 while it
// streams, 503 naming the lag while a workload keeps it over a --max-lag
// of 1ms, 200 again once caught up; every metric is there, the items
// written and deleted equal what the proxy saw, the changes what the
// workload committed, the rows read the source's rows, the lag gauges
// those of a status record; every stderr line is a JSON object.
func TestFollowMetricsHealthAndJSONLogs(t *testing.T) {
	t.Parallel()
	f := followedChange{endpoint: ownDynalite(t), url: logicalDatabase(t), mapping: filepath.Join("testdata", "notes-whole.yaml")}
	testenv.Exec(t, f.url, notesSchema)
	f.table = testenv.TableName("notes-ops")
	rec := testenv.NewWriteRecorder(t, f.endpoint, "PK", "SK")
	port, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	dir := t.TempDir()
	t.Cleanup(func() {
		run(context.Background(), "drop-slot", "--mapping", f.mapping, "--source", f.url, "--table", f.table)
	})
	p := startOps(t, "--log-format", "json", "migrate", "--mapping", f.mapping, "--source", f.url, "--endpoint-url", rec.URL,
		"--table", f.table, "--create-table", "--follow", "--progress-interval", "1ms", "--rejects", filepath.Join(dir, "rejects.jsonl"),
		"--checkpoint", filepath.Join(dir, "checkpoint.json"), "--metrics-addr", addr, "--max-lag", "1ms")

	streaming := func() bool {
		code, body := health(t, addr)
		return code == http.StatusOK && body == "following"
	}
	p.until(t, "/healthz 200 while streaming", func() bool { return strings.Contains(p.err.String(), "following slot ") && streaming() })

	w := startWriter(t, f.url, 1000)
	var sick string
	p.until(t, "/healthz 503 while the workload keeps the lag over --max-lag", func() bool {
		code, body := health(t, addr)
		sick = body
		if n := sum(scrape(t, addr), "pg2dynamo_follow_changes_total"); code == http.StatusOK && n >= 2000 {
			t.Fatalf("the follow applied %v changes of a steady workload and /healthz still answers 200 %q with --max-lag 1ms", n, body)
		}
		return code == http.StatusServiceUnavailable
	})
	if !strings.Contains(sick, "follow lag") || !strings.Contains(sick, "over the maximum of 1ms") {
		t.Errorf("/healthz 503 body %q, want the lag over the maximum of 1ms", sick)
	}
	last := w.end(t, f.url)
	p.until(t, "the follow to apply the workload", func() bool {
		return pglogrepl.LSN(sum(scrape(t, addr), "pg2dynamo_follow_applied_lsn")) >= last && streaming()
	})

	fams := scrape(t, addr)
	for _, name := range opsMetrics {
		if fams[name] == nil {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	for _, c := range []struct {
		name string
		want float64
	}{
		{"pg2dynamo_items_written_total", float64(len(rec.Puts()))},
		{"pg2dynamo_items_deleted_total", float64(len(rec.Deletes()))},
		{"pg2dynamo_follow_changes_total", float64(w.committed.Load())},
		{"pg2dynamo_rows_read_total", 20},
		{"pg2dynamo_rejects_total", 0},
		{"pg2dynamo_throttled_requests_total", 0},
	} {
		if got := sum(fams, c.name); got != c.want {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
	// --concurrency auto: the follow's writers are autoscaled.
	if n := sum(fams, "pg2dynamo_writers"); n < 1 || n > pipeline.DefaultMaxConcurrency {
		t.Errorf("pg2dynamo_writers = %v, want the follow's autoscaled writers, 1 to %d", n, pipeline.DefaultMaxConcurrency)
	}
	if n := sum(fams, "pg2dynamo_write_units_total"); n < 20 {
		t.Errorf("pg2dynamo_write_units_total = %v, want at least the full load's 20 items' units", n)
	}
	if w.committed.Load() == 0 || len(rec.Puts()) < 20+int(w.committed.Load()) {
		t.Errorf("the workload committed %d rows and the proxy saw %d puts: want every row put", w.committed.Load(), len(rec.Puts()))
	}
	checkLagGauges(t, p, addr)

	p.cmd.Process.Signal(syscall.SIGINT)
	if err := <-p.done; err != nil {
		t.Fatalf("after SIGINT: %v\n%s", err, firstLines(p.err.String(), 40))
	}
	checkJSONLines(t, p.err.String(), f.table)
	f.matchesFullLoad(t)
}

// statusRecord is a follow status line as a JSON record.
type statusRecord struct {
	Msg        string  `json:"msg"`
	LSN        string  `json:"lsn"`
	LagBytes   int64   `json:"lag_bytes"`
	LagSeconds float64 `json:"lag_seconds"`
	Changes    int64   `json:"changes"`
}

// checkLagGauges scrapes until the applied LSN gauge is that of a status
// record on stderr (each status sets the gauges, and is printed unless
// one was printed less than --progress-interval before), and checks the
// lag gauges and the changes counter against that record.
func checkLagGauges(t *testing.T, p *opsProcess, addr string) {
	t.Helper()
	var fams map[string]*dto.MetricFamily
	var match *statusRecord
	p.until(t, "a status record with the applied LSN scraped", func() bool {
		fams = scrape(t, addr)
		applied := pglogrepl.LSN(sum(fams, "pg2dynamo_follow_applied_lsn")).String()
		lines := strings.Split(strings.TrimSpace(p.err.String()), "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			var r statusRecord
			if json.Unmarshal([]byte(lines[i]), &r) == nil && r.LSN == applied {
				match = &r
				return true
			}
		}
		return false
	})
	if got := sum(fams, "pg2dynamo_follow_lag_bytes"); got != float64(match.LagBytes) {
		t.Errorf("pg2dynamo_follow_lag_bytes = %v, the status at %s says %d", got, match.LSN, match.LagBytes)
	}
	if got := sum(fams, "pg2dynamo_follow_lag_seconds"); got != match.LagSeconds {
		t.Errorf("pg2dynamo_follow_lag_seconds = %v, the status at %s says %v", got, match.LSN, match.LagSeconds)
	}
	if got := sum(fams, "pg2dynamo_follow_changes_total"); got != float64(match.Changes) {
		t.Errorf("pg2dynamo_follow_changes_total = %v, the status at %s says %d", got, match.LSN, match.Changes)
	}
}

// checkJSONLines fails the test unless every line of stderr is a JSON
// object with time, level and msg, the command and, after the table is
// known, the table.
func checkJSONLines(t *testing.T, stderr, table string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	withTable, status := 0, 0
	for i, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("stderr line %d is not a JSON object: %q", i+1, line)
			continue
		}
		for _, k := range []string{"time", "level", "msg"} {
			if _, ok := rec[k]; !ok {
				t.Errorf("stderr line %d lacks %q: %s", i+1, k, line)
			}
		}
		if rec["command"] != "migrate" {
			t.Errorf("stderr line %d: command %v, want migrate: %s", i+1, rec["command"], line)
		}
		if rec["table"] == table {
			withTable++
		}
		if _, ok := rec["lsn"]; ok && strings.HasPrefix(rec["msg"].(string), "follow: applied ") {
			status++
		}
	}
	if withTable == 0 || status == 0 {
		t.Errorf("%d records name table %s, %d are status records with an lsn: want some of each\n%s", withTable, table, status, firstLines(stderr, 20))
	}
}

var cutoverApplied = regexp.MustCompile(`cutover: the follow applied ([0-9A-F]+/[0-9A-F]+) in `)

// cutover: no-go while no follow streams (exit 6), --wait --timeout
// gives up (exit 7); with a follow streaming, go (exit 0); then a
// workload stops, and cutover --wait exits 0 once the follow has applied
// a position at or after the workload's last commit, with the table
// equal to a full load of the source at that point.
func TestCutoverWaitsForTheFollow(t *testing.T) {
	t.Parallel()
	f := loaded(t, filepath.Join("testdata", "notes-whole.yaml"), notesSchema)
	rejects := ""
	for i, a := range f.args {
		if a == "--rejects" {
			rejects = f.args[i+1]
		}
	}
	cut := []string{"cutover", "--mapping", f.mapping, "--source", f.url, "--endpoint-url", f.endpoint, "--table", f.table, "--rejects", rejects}

	// The walsender of the run that loaded the table holds the slot until
	// the server notices its connection is gone.
	conn := testenv.Connect(t, f.url)
	slot := follow.DefaultName(f.table)
	if err := testenv.Poll[struct{}]("replication slot "+slot+" released after the loading run ended", follow.SlotReleaseWait, nil, func() bool {
		active, err := follow.SlotActive(context.Background(), conn, slot)
		if err != nil {
			t.Fatal(err)
		}
		return !active
	}); err != nil {
		t.Fatal(err)
	}
	code, out := run(context.Background(), cut...)
	if code != 6 || !strings.Contains(out, "cutover: NO-GO") || !strings.Contains(out, "no follow streams from it") {
		t.Fatalf("cutover without a follow running: exit %d, want 6 (no-go, naming the slot)\n%s", code, out)
	}
	code, out = run(context.Background(), append(cut, "--wait", "--timeout", "300ms")...)
	if code != 7 || !strings.Contains(out, "timed out") {
		t.Fatalf("cutover --wait --timeout 300ms without a follow running: exit %d, want 7\n%s", code, out)
	}

	// The audit's first cycle must complete (every item compared) before
	// a go: a short cycle, and cutover waits for it.
	p := startFollow(t, liveArgs(f, "--audit-cycle", "1s")...)
	p.waitFor(t, following, "the follow streaming")
	code, out = run(context.Background(), append(cut, "--wait")...)
	if code != 0 || !strings.Contains(out, "cutover: GO") || !regexp.MustCompile(`lease\s+go\s+slot \S+ holds the lease of table`).MatchString(out) ||
		!regexp.MustCompile(`audit\s+go\s+[1-9]\d* audit cycles completed \(report\), no drifted item left`).MatchString(out) {
		t.Fatalf("cutover with the follow streaming: exit %d, want 0 (go, the follow's slot holding the table's lease, an audit cycle completed)\n%s", code, out)
	}
	// The workload's part, without the audit: its slices, back to back,
	// would read the source a writer grows as fast as it can. The audited
	// follow is killed, leaving its lease with its audit's record, which
	// the next follow's lease replaces.
	p.cmd.Process.Kill()
	p.exit(t)
	p = startFollow(t, liveArgs(f, "--audit", "off")...)
	p.waitFor(t, following, "the follow streaming again")
	code, out = run(context.Background(), cut...)
	if !regexp.MustCompile(`audit\s+not checked\s+the follow runs without the rolling audit`).MatchString(out) {
		t.Fatalf("cutover with a follow without the audit, after an audited one was killed: exit %d, want the audit not checked\n%s", code, out)
	}

	w := startWriter(t, f.url, 1000)
	// A window may always be in flight under the writer: the line's
	// totals are of the windows applied.
	p.waitFor(t, regexp.MustCompile(`follow: applied [0-9A-F/]+(, in flight to [0-9A-F/]+)?: \d+ transactions, [1-9]\d* changes`), "the workload's first changes applied")
	last := w.end(t, f.url)
	code, out = run(context.Background(), append(cut, "--wait")...)
	if code != 0 {
		t.Fatalf("cutover --wait: exit %d, want 0\n%s", code, out)
	}
	m := cutoverApplied.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("cutover --wait prints no LSN applied\n%s", out)
	}
	at, err := pglogrepl.ParseLSN(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if at < last {
		t.Errorf("cutover --wait: applied %s, before the workload's last commit (%s)", at, last)
	}
	t.Logf("the workload committed %d rows; cutover --wait: %s", w.committed.Load(), strings.TrimSpace(out[strings.LastIndex(out, "cutover: the follow applied"):]))
	// At once, with the follow still running: what cutover waited for is
	// in the table.
	f.matchesFullLoad(t)
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.exit(t); code != 0 {
		t.Fatalf("the follow after SIGINT: exit %d\n%s", code, p.out.String())
	}
}
