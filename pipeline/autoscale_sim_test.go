package pipeline

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// simSink is a model of writers in front of a DynamoDB table, in virtual
// time, for the Autoscaler's tests: no clock is read and nothing sleeps.
//
// A request of a batch of batchItems items (one write unit each) takes the
// client cpu of CPU time on one of cpus CPUs (queued when all are busy),
// then latency on the way to the table and back. A table with a capacity
// (write units a second, a token bucket of burst units, full at first)
// accepts as many items as it has units for: all of them; some, and
// returns the rest as UnprocessedItems (re-sent by the sink after its
// backoff: uniform in 0 to 2^round s, at most 20 s); or none, answering
// ProvisionedThroughputExceededException (retried by the SDK after the
// same backoff, by attempt). Each throttled answer counts as one
// throttle. Writers take batches while items remain, start each at the
// pace, and only the first Writers of them take new ones.
type simSink struct {
	latency  time.Duration
	cpu      time.Duration
	cpus     int
	capacity float64 // write units a second; 0: no limit
	burst    float64
	items    int64 // to write
	// fixed, when above 0, is a fixed number of writers (no Autoscaler).
	fixed int
	seed  uint64
	// random is the chance that a request is throttled whatever the rate
	// (a fault injected).
	random float64
	// noise, when above 0, scales the CPU each request takes by a factor
	// drawn (log-normal, this σ) every noisePeriod: a machine shared with
	// other work. contention adds this share of the CPU per writer
	// active (scheduling, memory).
	noise, contention float64
}

// simResult is what a simulated run did.
type simResult struct {
	elapsed   time.Duration
	items     int64
	requests  int64
	throttled int64
	// accepted is the write units the table accepted, after the burst.
	sum *AutoscaleSummary
}

func (r simResult) rate() float64 { return float64(r.items) / r.elapsed.Seconds() }

const batchItems = 25

const noisePeriod = 200 * time.Millisecond

type simEvent struct {
	at   time.Duration
	kind int // evWriterFree, evArrive, evDone, evRetry, evTick
	w    int
	n    int // items in the request
	// attempt: the SDK's attempt (ProvisionedThroughputExceeded) or the
	// sink's round (UnprocessedItems).
	attempt int
	unproc  bool
	seq     int64
}

const (
	simWriterFree = iota
	simArrive
	simDone
	simResend
	simTick
)

type simQueue []*simEvent

func (q simQueue) Len() int { return len(q) }
func (q simQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q simQueue) Swap(i, j int)    { q[i], q[j] = q[j], q[i] }
func (q *simQueue) Push(x any)      { *q = append(*q, x.(*simEvent)) }
func (q *simQueue) Pop() any        { old := *q; e := old[len(old)-1]; *q = old[:len(old)-1]; return e }
func (q *simQueue) at(e *simEvent)  { heap.Push(q, e) }
func (q *simQueue) next() *simEvent { return heap.Pop(q).(*simEvent) }
func backoff(rng *rand.Rand, n int) time.Duration {
	return time.Duration(rng.Float64() * math.Min(20, math.Pow(2, float64(n))) * float64(time.Second))
}

// run simulates the writing of s.items items.
func (s simSink) run(cfg Autoscale) simResult {
	rng := rand.New(rand.NewPCG(s.seed, 1))
	var q simQueue
	var seq int64
	push := func(e *simEvent) { seq++; e.seq = seq; q.at(e) }
	var a *Autoscaler
	maxW := s.fixed
	if s.fixed == 0 {
		a = NewAutoscaler(cfg)
		maxW = a.cfg.Max
	}
	writers := func() int {
		if a != nil {
			return a.Writers()
		}
		return s.fixed
	}
	cpuFree := make([]time.Duration, s.cpus)
	tokens, lastFill := s.burst, time.Duration(0)
	var paceAt time.Duration
	left := s.items
	var res simResult
	var win Sample
	busyFrom := make([]time.Duration, maxW)
	batchN := make([]int, maxW)
	idle := make([]bool, maxW)
	var lastTick time.Duration
	// send starts a request of n items by writer w at now.
	factor, period := 1.0, time.Duration(-1)
	cpuAt := func(now time.Duration) time.Duration {
		if s.noise > 0 && now/noisePeriod != period {
			period = now / noisePeriod
			factor = math.Exp(s.noise * rng.NormFloat64())
		}
		return time.Duration(float64(s.cpu) * factor * (1 + s.contention*float64(writers())))
	}
	send := func(now time.Duration, w, n, attempt int, unproc bool) {
		c := 0
		for i := range cpuFree {
			if cpuFree[i] < cpuFree[c] {
				c = i
			}
		}
		start := max(now, cpuFree[c])
		cpuFree[c] = start + cpuAt(start)
		push(&simEvent{at: cpuFree[c] + s.latency/2, kind: simArrive, w: w, n: n, attempt: attempt, unproc: unproc})
	}
	take := func(now time.Duration, w int) {
		if w >= writers() || left == 0 {
			idle[w] = true
			return
		}
		idle[w] = false
		n := int(min(left, batchItems))
		left -= int64(n)
		batchN[w] = n
		busyFrom[w] = now
		at := now
		if a != nil && a.Pace() > 0 {
			at = max(now, paceAt)
			paceAt = at + time.Duration(float64(n)/a.Pace()*float64(time.Second))
		}
		send(at, w, n, 1, false)
	}
	for w := range maxW {
		push(&simEvent{kind: simWriterFree, w: w})
	}
	if a != nil {
		push(&simEvent{at: 10 * time.Millisecond, kind: simTick})
	}
	var end time.Duration
	for q.Len() > 0 {
		e := q.next()
		now := e.at
		switch e.kind {
		case simWriterFree:
			take(now, e.w)
		case simArrive:
			res.requests++
			ok := e.n
			if s.capacity > 0 {
				tokens = math.Min(s.burst, tokens+s.capacity*(now-lastFill).Seconds())
				lastFill = now
				ok = min(e.n, int(tokens))
				tokens -= float64(ok)
			}
			if s.random > 0 && rng.Float64() < s.random {
				ok = 0
			}
			back := now + s.latency/2
			switch {
			case ok == e.n:
				push(&simEvent{at: back, kind: simDone, w: e.w, n: e.n})
			case ok == 0: // ProvisionedThroughputExceeded: the SDK retries
				res.throttled++
				win.Throttles++
				next := e.attempt + 1
				if e.unproc {
					next = e.attempt // a re-send's SDK attempts are its own; keep it simple
				}
				push(&simEvent{at: back + backoff(rng, e.attempt), kind: simResend, w: e.w, n: e.n, attempt: next, unproc: e.unproc})
			default: // UnprocessedItems: the sink re-sends the rest
				res.throttled++
				win.Throttles++
				round := 1
				if e.unproc {
					round = e.attempt + 1
				}
				push(&simEvent{at: back + backoff(rng, round), kind: simResend, w: e.w, n: e.n - ok, attempt: round, unproc: true})
			}
		case simResend:
			send(now, e.w, e.n, e.attempt, e.unproc)
		case simDone:
			res.items += int64(batchN[e.w])
			win.Items += int64(batchN[e.w])
			win.Batches++
			win.Busy += now - max(busyFrom[e.w], lastTick)
			end = now
			take(now, e.w)
		case simTick:
			for w := range maxW {
				if !idle[w] && w < len(busyFrom) && busyFrom[w] < now {
					// in flight: its time since the last tick counts as busy
					win.Busy += now - max(busyFrom[w], lastTick)
					busyFrom[w] = now
				}
			}
			win.Elapsed = now - lastTick
			lastTick = now
			if a.Observe(win) {
				for w := range maxW {
					if idle[w] && w < a.Writers() {
						push(&simEvent{at: now, kind: simWriterFree, w: w})
					}
				}
			}
			win = Sample{}
			if left > 0 || inFlight(q) {
				push(&simEvent{at: now + 10*time.Millisecond, kind: simTick})
			}
		}
	}
	res.elapsed = end
	if a != nil {
		sum := a.Summary()
		res.sum = &sum
	}
	return res
}

func inFlight(q simQueue) bool {
	for _, e := range q {
		if e.kind != simTick {
			return true
		}
	}
	return false
}

// Against writers that wait 8 ms for each answer, with the client's CPU
// saturating between 32 and 64 of them, auto reaches at least 0.9 of the
// best of 8, 16, 32 and 64 fixed writers, in virtual time; also with the
// CPU's speed varying (a shared machine).
func TestAutoscaleSimLatencyBound(t *testing.T) {
	for _, noise := range []float64{0, 0.3} {
		for seed := uint64(1); seed <= 3; seed++ {
			sink := simSink{latency: 8 * time.Millisecond, cpu: 800 * time.Microsecond, cpus: 2, items: 200_000, seed: seed, noise: noise}
			simAgainstFixed(t, fmt.Sprintf("noise %.1f, seed %d", noise, seed), sink)
		}
	}
}

// On a machine whose CPU is the bottleneck, busy with other work (its
// speed varying by a factor of e^±0.5 every 200 ms) and slower with each
// writer, auto still reaches 0.9 of the best fixed writers (here 8).
func TestAutoscaleSimCPUBound(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		sink := simSink{latency: 8 * time.Millisecond, cpu: 2 * time.Millisecond, cpus: 1, items: 200_000, seed: seed, noise: 0.5, contention: 0.01}
		simAgainstFixed(t, fmt.Sprintf("seed %d", seed), sink)
	}
}

// On a saturated sink (one CPU, as dynalite's one thread; more writers only
// queue), over a long run on a noisy machine, the writers do not climb on
// noise: their mean over the run stays within twice the 8 fixed writers that
// already saturate it, at no less than 0.95 of their items/s.
func TestAutoscaleSimSaturatedKeepsFewWriters(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		sink := simSink{latency: 8 * time.Millisecond, cpu: 2 * time.Millisecond, cpus: 1, items: 1_000_000, seed: seed, noise: 0.3, contention: 0.005}
		r := sink.run(Autoscale{})
		fixed := sink
		fixed.fixed = 8
		f := fixed.run(Autoscale{})
		mean := meanWriters(r)
		t.Logf("seed %d: auto %.0f items/s (%.2f of 8 writers'), %.1f writers on average, %d at the most",
			seed, r.rate(), r.rate()/f.rate(), mean, r.sum.Max)
		if mean > 16 || r.rate() < 0.95*f.rate() {
			t.Errorf("seed %d: %.1f writers on average for %.2f of 8 writers' items/s; want at most 16 for at least 0.95", seed, mean, r.rate()/f.rate())
		}
	}
}

// meanWriters is r's writers averaged over its time, from its decisions.
func meanWriters(r simResult) float64 {
	var sum float64
	var at time.Duration
	w := 0
	for _, d := range r.sum.Decisions {
		sum += float64(w) * (d.At - at).Seconds()
		at, w = d.At, d.Writers
	}
	sum += float64(w) * (r.elapsed - at).Seconds()
	return sum / r.elapsed.Seconds()
}

// simAgainstFixed runs sink with auto and with 8, 16, 32 and 64 writers,
// and fails unless auto reaches 0.9 of the best.
func simAgainstFixed(t *testing.T, name string, sink simSink) {
	t.Helper()
	best, fixed := 0.0, ""
	for _, n := range []int{8, 16, 32, 64} {
		s := sink
		s.fixed = n
		r := s.run(Autoscale{})
		fixed += fmt.Sprintf(" %d: %.0f", n, r.rate())
		best = max(best, r.rate())
	}
	r := sink.run(Autoscale{})
	t.Logf("%s: auto %.0f items/s (%.2f of the best), writers %d to %d; fixed%s", name, r.rate(), r.rate()/best, r.sum.Min, r.sum.Max, fixed)
	if r.rate() < 0.9*best {
		t.Errorf("%s: auto %.0f items/s, %.2f of the best fixed (%.0f); want at least 0.9", name, r.rate(), r.rate()/best, best)
	}
}

// Against a table that takes 5,000 write units a second (a bucket of one
// second's), with 8 ms or 1 ms of latency, auto holds at least 0.9 of
// the capacity with at most 2% of its requests throttled.
func TestAutoscaleSimHoldsCapacity(t *testing.T) {
	for _, lat := range []time.Duration{8 * time.Millisecond, time.Millisecond} {
		for seed := uint64(1); seed <= 3; seed++ {
			sink := simSink{latency: lat, cpu: 300 * time.Microsecond, cpus: 2, capacity: 5000, burst: 5000, items: 200_000, seed: seed}
			r := sink.run(Autoscale{})
			held := (float64(r.items) - sink.burst) / r.elapsed.Seconds() / sink.capacity
			throttled := float64(r.throttled) / float64(r.requests)
			t.Logf("latency %s, seed %d: %.3f of capacity, %.2f%% throttled, writers %d to %d, %d halvings",
				lat, seed, held, 100*throttled, r.sum.Min, r.sum.Max, r.sum.Halvings)
			if held < 0.9 || throttled > 0.02 {
				t.Errorf("latency %s, seed %d: %.3f of capacity with %.2f%% of requests throttled; want ≥ 0.9 and ≤ 2%%",
					lat, seed, held, 100*throttled)
			}
		}
	}
}

// Throttling injected at random, whatever the rate (1% and 5% of
// requests), does not bring auto below half of what 8 fixed writers do.
func TestAutoscaleSimRandomThrottling(t *testing.T) {
	for _, p := range []float64{0.01, 0.05} {
		sink := simSink{latency: 8 * time.Millisecond, cpu: 800 * time.Microsecond, cpus: 2, items: 100_000, seed: 1, random: p}
		fixed := sink
		fixed.fixed = 8
		f, a := fixed.run(Autoscale{}), sink.run(Autoscale{})
		t.Logf("%.0f%% throttled at random: 8 writers %.0f items/s, auto %.0f (writers %d to %d, last %d)", 100*p, f.rate(), a.rate(),
			a.sum.Min, a.sum.Max, a.sum.Last)
		if a.rate() < 0.5*f.rate() {
			t.Errorf("%.0f%% throttled at random: auto %.0f items/s, 8 writers %.0f; want at least half", 100*p, a.rate(), f.rate())
		}
	}
}
