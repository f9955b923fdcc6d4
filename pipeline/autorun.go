package pipeline

import (
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/pg2dynamo/pg2dynamo/load"
)

// autoRun is an Autoscale run's gate (only the first Writers() work), pace and
// meters.
type autoRun struct {
	cfg   Autoscale
	scale *Autoscaler
	gate  *gate
	// pace is rate.Inf when the Autoscaler sets none.
	pace      *rate.Limiter
	meters    []meter
	throttles load.ThrottleCounter
	now       func() time.Time
}

func newAutoRun(cfg Autoscale, sink load.Sink) *autoRun {
	a := NewAutoscaler(cfg)
	ar := &autoRun{cfg: a.cfg, scale: a, gate: newGate(a.Writers()),
		pace: rate.NewLimiter(rate.Inf, load.MaxBatchItems), meters: make([]meter, a.cfg.Max), now: cfg.now}
	if ar.now == nil {
		ar.now = time.Now
	}
	ar.throttles, _ = sink.(load.ThrottleCounter)
	return ar
}

// meter is one writer's counts; since is when its work began (zero when idle).
type meter struct {
	mu             sync.Mutex
	batches, items int64
	busy           time.Duration
	since          time.Time
}

func (m *meter) begin(now time.Time) {
	m.mu.Lock()
	m.since = now
	m.mu.Unlock()
}

func (m *meter) end(now time.Time, items int) {
	m.mu.Lock()
	m.busy += now.Sub(m.since)
	m.since = time.Time{}
	m.batches++
	m.items += int64(items)
	m.mu.Unlock()
}

// read returns m's counts, the work in hand counting as busy up to now.
func (m *meter) read(now time.Time) (batches, items int64, busy time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	busy = m.busy
	if !m.since.IsZero() && now.After(m.since) {
		busy += now.Sub(m.since)
	}
	return m.batches, m.items, busy
}

// begin (before the pace) and end meter writer i's work.
func (ar *autoRun) begin(i int)          { ar.meters[i].begin(ar.now()) }
func (ar *autoRun) end(i int, items int) { ar.meters[i].end(ar.now(), items) }

func (ar *autoRun) totals(now time.Time) Sample {
	var s Sample
	for i := range ar.meters {
		b, it, busy := ar.meters[i].read(now)
		s.Batches += b
		s.Items += it
		s.Busy += busy
	}
	if ar.throttles != nil {
		s.Throttles = ar.throttles.Throttles()
	}
	return s
}

// drive ends a window each tick until done, applying and telling decisions.
func (ar *autoRun) drive(done <-chan struct{}, tell func(writers int)) {
	ticks := ar.cfg.ticks
	if ticks == nil {
		t := time.NewTicker(ar.cfg.Interval / 2) // windows are whole ticks (Autoscaler.windowLength)
		defer t.Stop()
		ticks = t.C
	}
	tell(ar.scale.Writers())
	lastAt := ar.now()
	last := ar.totals(lastAt)
	for {
		select {
		case <-done:
			return
		case <-ticks:
		}
		now := ar.now()
		cur := ar.totals(now)
		s := Sample{Elapsed: now.Sub(lastAt), Items: cur.Items - last.Items, Batches: cur.Batches - last.Batches,
			Busy: cur.Busy - last.Busy, Throttles: cur.Throttles - last.Throttles}
		last, lastAt = cur, now
		if !ar.scale.Observe(s) {
			continue
		}
		ar.apply()
		tell(ar.scale.Writers())
	}
}

func (ar *autoRun) apply() {
	if p := ar.scale.Pace(); p > 0 {
		ar.pace.SetLimit(rate.Limit(p))
	} else {
		ar.pace.SetLimit(rate.Inf)
	}
	ar.gate.set(ar.scale.Writers())
}

// gate lets writers with an index below n through.
type gate struct {
	mu sync.Mutex
	n  int
	// changed is closed, and replaced, when n changes.
	changed chan struct{}
}

func newGate(n int) *gate { return &gate{n: n, changed: make(chan struct{})} }

func (g *gate) set(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n != g.n {
		g.n = n
		close(g.changed)
		g.changed = make(chan struct{})
	}
}

// wait blocks while writer i is shut out; false if done closes first.
func (g *gate) wait(i int, done <-chan struct{}) bool {
	for {
		g.mu.Lock()
		open, changed := i < g.n, g.changed
		g.mu.Unlock()
		if open {
			return true
		}
		select {
		case <-changed:
		case <-done:
			return false
		}
	}
}
