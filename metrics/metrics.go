// Package metrics is what a run shows to monitoring: Prometheus metrics on
// /metrics and its health on /healthz (200, or 503 with the reason). Each Run
// has its own registry; a nil *Run does nothing.
package metrics

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Options tune a Run.
type Options struct {
	// MaxLag, above 0, makes /healthz answer 503 while a follow lags more.
	MaxLag time.Duration
}

// Run is one command run's metrics and health, safe for concurrent use.
type Run struct {
	reg  *prometheus.Registry
	opts Options

	rowsRead, itemsWritten, itemsDeleted, rejects *prometheus.CounterVec // table, entity
	followChanges                                 *prometheus.CounterVec // table
	writers, lagBytes, lagSeconds, appliedLSN     *prometheus.GaugeVec   // table
	auditProgress, auditCycle, auditDrift         *prometheus.GaugeVec   // table

	mu     sync.Mutex
	table  string
	writes func() Writes
	reads  func() float64
	follow *FollowStatus // the last, nil before the follow streams
	failed error         // what the run stopped on
	drift  int64
}

// New returns a Run with its own registry, Go and process collectors included.
func New(o Options) *Run {
	r := &Run{reg: prometheus.NewRegistry(), opts: o}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		v := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "pg2dynamo", Name: name, Help: help}, labels)
		r.reg.MustRegister(v)
		return v
	}
	gauge := func(name, help string) *prometheus.GaugeVec {
		v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "pg2dynamo", Name: name, Help: help}, []string{"table"})
		r.reg.MustRegister(v)
		return v
	}
	r.rowsRead = counter("rows_read_total", "Source rows read and finished (written or rejected), per entity.", "table", "entity")
	r.itemsWritten = counter("items_written_total", "Items put in the table (a load's and --changes-only's per entity; a follow's under entity \"\").", "table", "entity")
	r.itemsDeleted = counter("items_deleted_total", "Items deleted from the table (stale items and a follow's under entity \"\").", "table", "entity")
	r.rejects = counter("rejects_total", "Rows rejected (listed in the rejects file), per entity.", "table", "entity")
	r.followChanges = counter("follow_changes_total", "Row changes a follow applied (acknowledged to its slot).", "table")
	r.writers = gauge("writers", "Parallel DynamoDB writers now.")
	r.lagBytes = gauge("follow_lag_bytes", "WAL between the position a follow applied and the server's position last reported, in bytes.")
	r.lagSeconds = gauge("follow_lag_seconds", "Time from the commit of the oldest transaction of a follow's last window to its application, in seconds (0 when caught up).")
	r.appliedLSN = gauge("follow_applied_lsn", "WAL position up to which every change is in the table, as a number (exact below 2^53).")
	r.auditProgress = gauge("audit_cycle_progress", "Fraction (0 to 1) of the current audit cycle done.")
	r.auditCycle = gauge("audit_cycle", "Number of the current audit cycle, from 1.")
	r.auditDrift = gauge("audit_drift_items", "Items the last audit found differing from the source.")
	r.reg.MustRegister(writesCollector{r}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

// Registry is the Run's registry (for promhttp.HandlerFor and tests).
func (r *Run) Registry() *prometheus.Registry { return r.reg }

// Start names the run's table and entities, whose series then start at 0.
func (r *Run) Start(table string, entities []string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.table = table
	r.mu.Unlock()
	for _, e := range entities {
		for _, v := range []*prometheus.CounterVec{r.rowsRead, r.itemsWritten, r.itemsDeleted, r.rejects} {
			v.WithLabelValues(table, e)
		}
	}
	r.followChanges.WithLabelValues(table)
	for _, g := range []*prometheus.GaugeVec{r.writers, r.lagBytes, r.lagSeconds, r.appliedLSN, r.auditProgress, r.auditCycle, r.auditDrift} {
		g.WithLabelValues(table)
	}
}

func (r *Run) tableName() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.table
}

// Advance counts rows finished and items put, as pipeline.Progress.Advance.
func (r *Run) Advance(entity string, rows, items int) {
	if r == nil {
		return
	}
	t := r.tableName()
	r.rowsRead.WithLabelValues(t, entity).Add(float64(rows))
	r.itemsWritten.WithLabelValues(t, entity).Add(float64(items))
}

// Written counts n items of entity put outside a load (--changes-only).
func (r *Run) Written(entity string, n int) {
	if r == nil {
		return
	}
	r.itemsWritten.WithLabelValues(r.tableName(), entity).Add(float64(n))
}

// Deleted counts n items deleted (entity "" for a stale item's unknown one).
func (r *Run) Deleted(entity string, n int) {
	if r == nil {
		return
	}
	r.itemsDeleted.WithLabelValues(r.tableName(), entity).Add(float64(n))
}

// Reject counts one row of entity rejected.
func (r *Run) Reject(entity string) {
	if r == nil {
		return
	}
	r.rejects.WithLabelValues(r.tableName(), entity).Inc()
}

// Writers sets the number of parallel writers.
func (r *Run) Writers(n int) {
	if r == nil {
		return
	}
	r.writers.WithLabelValues(r.tableName()).Set(float64(n))
}

// Writes are a DynamoDB sink's request counters, totals since it opened.
type Writes struct {
	// Requests counts write calls; Throttled, those throttled; Retries, SDK
	// retries and UnprocessedItems re-sends; WriteUnits, units consumed.
	Requests, Throttled, Retries int64
	WriteUnits                   float64
}

// SetWrites has each scrape read the sink's counters from f (goroutine-safe).
func (r *Run) SetWrites(f func() Writes) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = f
}

// SetReadUnits has each scrape read from f the read capacity units consumed
// so far by the run's reads of its table: Scans, Queries, GetItems and
// BatchGetItems (goroutine-safe).
func (r *Run) SetReadUnits(f func() float64) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads = f
}

// FollowStatus is a follow's state, as follow.Status reports it.
type FollowStatus struct {
	// Applied is the WAL position up to which every change is in the table.
	Applied uint64
	// LagBytes and Lag are the follow's lag in WAL bytes and in time.
	LagBytes int64
	Lag      time.Duration
	// Changes, Puts and Deletes are totals since the follow began.
	Changes, Puts, Deletes int64
}

// Follow records a follow's status: gauges, and counters by its totals' growth.
func (r *Run) Follow(st FollowStatus) {
	if r == nil {
		return
	}
	r.mu.Lock()
	last := FollowStatus{}
	if r.follow != nil {
		last = *r.follow
	}
	r.follow = &st
	t := r.table
	r.mu.Unlock()
	r.followChanges.WithLabelValues(t).Add(float64(max(0, st.Changes-last.Changes)))
	r.itemsWritten.WithLabelValues(t, "").Add(float64(max(0, st.Puts-last.Puts)))
	r.itemsDeleted.WithLabelValues(t, "").Add(float64(max(0, st.Deletes-last.Deletes)))
	r.lagBytes.WithLabelValues(t).Set(float64(st.LagBytes))
	r.lagSeconds.WithLabelValues(t).Set(st.Lag.Seconds())
	r.appliedLSN.WithLabelValues(t).Set(float64(st.Applied))
}

// Stopped records that the run stopped on err (nil: nothing to record):
// /healthz answers 503 from then.
func (r *Run) Stopped(err error) {
	if r == nil || err == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed == nil {
		r.failed = err
	}
}

// AuditProgress records the audit at fraction (0 to 1) of cycle (from 1).
func (r *Run) AuditProgress(cycle int, fraction float64) {
	if r == nil {
		return
	}
	t := r.tableName()
	r.auditCycle.WithLabelValues(t).Set(float64(cycle))
	r.auditProgress.WithLabelValues(t).Set(fraction)
}

// AuditDrift records the audit's drifted items: /healthz answers 503 if any.
func (r *Run) AuditDrift(n int64) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.drift = n
	t := r.table
	r.mu.Unlock()
	r.auditDrift.WithLabelValues(t).Set(float64(n))
}

// Health reports whether the run is healthy, else why: stopped on an error, a
// follow's lag over MaxLag, or drift; a run not yet following is healthy.
func (r *Run) Health() (ok bool, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var why []string
	if r.failed != nil {
		why = append(why, fmt.Sprintf("the run stopped: %v", r.failed))
	}
	if f := r.follow; f != nil && r.opts.MaxLag > 0 && f.Lag > r.opts.MaxLag {
		why = append(why, fmt.Sprintf("follow lag %s is over the maximum of %s", f.Lag.Round(time.Millisecond), r.opts.MaxLag))
	}
	if r.drift > 0 {
		why = append(why, fmt.Sprintf("the audit found %d items differing from the source", r.drift))
	}
	if len(why) > 0 {
		return false, strings.Join(why, "; ")
	}
	if r.follow != nil {
		return true, "following"
	}
	return true, "running"
}

// writesCollector reports the sink's counters, read at each scrape.
type writesCollector struct{ r *Run }

var writesDescs = []*prometheus.Desc{
	prometheus.NewDesc("pg2dynamo_write_requests_total", "Write requests sent: BatchWriteItem, PutItem and DeleteItem.", []string{"table"}, nil),
	prometheus.NewDesc("pg2dynamo_throttled_requests_total", "Write requests DynamoDB throttled.", []string{"table"}, nil),
	prometheus.NewDesc("pg2dynamo_retries_total", "HTTP attempts the SDK repeated plus UnprocessedItems re-sends.", []string{"table"}, nil),
	prometheus.NewDesc("pg2dynamo_write_units_total", "Write capacity units DynamoDB reported consumed (a follow asks only under --max-write-units).", []string{"table"}, nil),
	prometheus.NewDesc("pg2dynamo_read_units_total", "Read capacity units DynamoDB reported the run's reads of its table consumed: the Scans of verify, diff, --changes-only, --prune and the audit, the access patterns' Queries, the read-backs.", []string{"table"}, nil),
}

func (c writesCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range writesDescs {
		ch <- d
	}
}

func (c writesCollector) Collect(ch chan<- prometheus.Metric) {
	c.r.mu.Lock()
	f, reads, t := c.r.writes, c.r.reads, c.r.table
	c.r.mu.Unlock()
	var w Writes
	if f != nil {
		w = f()
	}
	read := 0.0
	if reads != nil {
		read = reads()
	}
	for i, v := range []float64{float64(w.Requests), float64(w.Throttled), float64(w.Retries), w.WriteUnits, read} {
		ch <- prometheus.MustNewConstMetric(writesDescs[i], prometheus.CounterValue, v, t)
	}
}
