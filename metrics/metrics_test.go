package metrics_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/pg2dynamo/pg2dynamo/metrics"
)

// value is the sum of the series of the family name in r (0 when absent).
func value(t *testing.T, r *metrics.Run, name string) float64 {
	t.Helper()
	fams, err := r.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.Metric {
			total += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return total
}

// family returns the family name of r, or nil.
func family(t *testing.T, r *metrics.Run, name string) *dto.MetricFamily {
	t.Helper()
	fams, err := r.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name {
			return f
		}
	}
	return nil
}

// A follow's totals reach the counters by their growth, whatever the
// number of statuses; the gauges hold the last status; every series has
// the table label, and the entities named at Start have theirs at 0.
func TestFollowStatusFeedsCountersAndGauges(t *testing.T) {
	r := metrics.New(metrics.Options{})
	r.Start("shop", []string{"User", "Order"})
	if f := family(t, r, "pg2dynamo_rows_read_total"); f == nil || len(f.Metric) != 2 {
		t.Fatalf("rows_read_total after Start: %v, want a series per entity", f)
	}
	r.Advance("User", 10, 10)
	r.Advance("Order", 5, 10)
	r.Reject("Order")
	for _, st := range []metrics.FollowStatus{
		{Applied: 100, LagBytes: 50, Lag: 2 * time.Second, Changes: 3, Puts: 4, Deletes: 1},
		{Applied: 100, LagBytes: 50, Lag: 2 * time.Second, Changes: 3, Puts: 4, Deletes: 1},
		{Applied: 0x1_0000_0200, LagBytes: 0, Lag: 0, Changes: 7, Puts: 9, Deletes: 2},
	} {
		r.Follow(st)
	}
	r.AuditProgress(3, 0.25)
	for name, want := range map[string]float64{
		"pg2dynamo_rows_read_total": 15, "pg2dynamo_items_written_total": 20 + 9, "pg2dynamo_items_deleted_total": 2,
		"pg2dynamo_rejects_total": 1, "pg2dynamo_follow_changes_total": 7, "pg2dynamo_follow_applied_lsn": 0x1_0000_0200,
		"pg2dynamo_follow_lag_bytes": 0, "pg2dynamo_follow_lag_seconds": 0, "pg2dynamo_audit_cycle_progress": 0.25,
		"pg2dynamo_audit_cycle": 3,
	} {
		if got := value(t, r, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	for _, m := range family(t, r, "pg2dynamo_follow_lag_bytes").Metric {
		if len(m.Label) != 1 || m.Label[0].GetName() != "table" || m.Label[0].GetValue() != "shop" {
			t.Errorf("follow_lag_bytes labels %v, want table=shop", m.Label)
		}
	}
}

// The sink's counters are read at each scrape.
func TestWritesReadAtScrape(t *testing.T) {
	r := metrics.New(metrics.Options{})
	r.Start("shop", nil)
	if got := value(t, r, "pg2dynamo_write_units_total"); got != 0 {
		t.Errorf("write units before a sink: %v", got)
	}
	w := metrics.Writes{Requests: 4, Throttled: 2, Retries: 3, WriteUnits: 12.5}
	r.SetWrites(func() metrics.Writes { return w })
	w.Requests = 5
	for name, want := range map[string]float64{"pg2dynamo_write_requests_total": 5, "pg2dynamo_throttled_requests_total": 2,
		"pg2dynamo_retries_total": 3, "pg2dynamo_write_units_total": 12.5} {
		if got := value(t, r, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

// /healthz over HTTP: 200 while running and following, 503 with the
// reason while the lag is over MaxLag, the audit finds drift, or once the
// run stopped on an error; /metrics answers in the text format.
func TestHealth(t *testing.T) {
	r := metrics.New(metrics.Options{MaxLag: 100 * time.Millisecond})
	srv, err := metrics.Listen("127.0.0.1:0", r)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + srv.Addr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	for _, step := range []struct {
		name string
		do   func()
		code int
		body string
	}{
		{"loading", func() {}, 200, "running"},
		{"following", func() { r.Follow(metrics.FollowStatus{Lag: 50 * time.Millisecond}) }, 200, "following"},
		{"lag over", func() { r.Follow(metrics.FollowStatus{Lag: 1500 * time.Millisecond}) }, 503, "follow lag 1.5s is over the maximum of 100ms"},
		{"caught up", func() { r.Follow(metrics.FollowStatus{}) }, 200, "following"},
		{"drift", func() { r.AuditDrift(3) }, 503, "the audit found 3 items differing from the source"},
		{"drift gone", func() { r.AuditDrift(0) }, 200, "following"},
		{"stopped", func() { r.Stopped(errors.New("follow: connection lost")) }, 503, "the run stopped: follow: connection lost"},
	} {
		step.do()
		if code, body := get("/healthz"); code != step.code || body != step.body {
			t.Errorf("%s: /healthz %d %q, want %d %q", step.name, code, body, step.code, step.body)
		}
	}
	if code, body := get("/metrics"); code != 200 || !strings.Contains(body, "# TYPE pg2dynamo_follow_lag_seconds gauge") {
		t.Errorf("/metrics: %d\n%s", code, body)
	}
}

// An address in use is an error of Listen, before anything is served.
func TestListenOnAPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if srv, err := metrics.Listen(ln.Addr().String(), metrics.New(metrics.Options{})); err == nil {
		srv.Close()
		t.Fatalf("Listen on %s, which is in use: no error", ln.Addr())
	}
}

// A nil Run takes every call and does nothing.
func TestNilRun(t *testing.T) {
	var r *metrics.Run
	r.Start("t", []string{"E"})
	r.Advance("E", 1, 1)
	r.Reject("E")
	r.Writers(3)
	r.SetWrites(nil)
	r.Follow(metrics.FollowStatus{})
	r.Stopped(errors.New("x"))
	r.AuditProgress(1, 0.5)
	r.AuditDrift(1)
}
