package pipeline

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxConcurrency is Autoscale.Max's default (--max-concurrency).
const DefaultMaxConcurrency = 64

// Autoscale lets a run or a Writes choose its writers (--concurrency auto).
type Autoscale struct {
	// Max is the most writers (default DefaultMaxConcurrency).
	Max int
	// Start is the writers at first (default min(4, Max)).
	Start int
	// Interval is a window's least length (default DefaultAutoscaleInterval),
	// half of it while the writers double (a doubling is taken only on a
	// clear rise, and the start should not linger); a window lasts until each
	// writer finished a batch, so a slow sink is measured over enough answers.
	Interval time.Duration
	// ticks and now replace the ticker and the clock in tests.
	ticks <-chan time.Time
	now   func() time.Time
}

// DefaultAutoscaleInterval is Autoscale.Interval's default: about a dozen
// batches a writer, yet a fast ramp.
const DefaultAutoscaleInterval = 100 * time.Millisecond

func (a Autoscale) withDefaults() Autoscale {
	if a.Max <= 0 {
		a.Max = DefaultMaxConcurrency
	}
	if a.Start <= 0 {
		a.Start = 4
	}
	a.Start = min(a.Start, a.Max)
	if a.Interval <= 0 {
		a.Interval = DefaultAutoscaleInterval
	}
	return a
}

// ParseConcurrency parses a --concurrency value: "auto", or 1 to most writers.
func ParseConcurrency(text string, most int) (auto bool, n int, err error) {
	if strings.EqualFold(strings.TrimSpace(text), "auto") {
		return true, 0, nil
	}
	n, err = strconv.Atoi(strings.TrimSpace(text))
	if err != nil || n < 1 || n > most {
		return false, 0, fmt.Errorf("--concurrency %q: expected auto or a number of writers from 1 to %d", text, most)
	}
	return false, n, nil
}

// Sample is what the writers did during one stretch of time.
type Sample struct {
	// Elapsed is the stretch's wall time.
	Elapsed time.Duration
	// Items and Batches are those whose writes ended in the stretch.
	Items, Batches int64
	// Busy is the writers' summed time on work, pace waits and retries
	// included.
	Busy time.Duration
	// Throttles counts requests throttled (load.ThrottleCounter).
	Throttles int64
}

func (s *Sample) add(o Sample) {
	s.Elapsed += o.Elapsed
	s.Items += o.Items
	s.Batches += o.Batches
	s.Busy += o.Busy
	s.Throttles += o.Throttles
}

func (s Sample) rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Items) / s.Elapsed.Seconds()
}

// Reason says why an Autoscaler changed the writers or the pace.
type Reason string

const (
	// ReasonStart is the first decision: Autoscale.Start writers.
	ReasonStart Reason = "start"
	// ReasonDouble: items/s rose with the last doubling; double again.
	ReasonDouble Reason = "double"
	// ReasonProbe: items/s held for a while; try a few more writers.
	ReasonProbe Reason = "probe"
	// ReasonRising: items/s rose with the writers added; keep them.
	ReasonRising Reason = "rising"
	// ReasonFlat: no rise with the writers added, or they waited for work;
	// or a fall with writers taken away; go back.
	ReasonFlat Reason = "flat"
	// ReasonFewer: items/s held, twice, with writers taken away; keep fewer.
	ReasonFewer Reason = "fewer"
	// ReasonThrottled: halve the writers and pace below the rate throttled.
	ReasonThrottled Reason = "throttled"
	// ReasonRepaced: a halving did not help; pace at what was written since.
	ReasonRepaced Reason = "repaced"
	// ReasonUndone: repacing did not help either; undo the halving.
	ReasonUndone Reason = "undone"
)

// Decision is one change an Autoscaler made.
type Decision struct {
	// At is the sum of the samples' Elapsed up to the decision.
	At time.Duration
	// Writers is the number of writers from now on.
	Writers int
	// Pace is the most items per second the writers start (0: none).
	Pace   float64
	Reason Reason
	// Rate is the items/s that led to the decision (0 for the start).
	Rate float64
}

// AutoscaleSummary is what an Autoscale run's writers were.
type AutoscaleSummary struct {
	// Min and Max are the fewest and most writers; Last, the final number.
	Min, Max, Last int
	// Halvings counts throttling halvings; Undone, those undone.
	Halvings, Undone int
	// Pace is the last pace in items/s (0: none).
	Pace float64
	// Decisions are the first maxDecisions decisions.
	Decisions []Decision
}

// Writers is the range of writers: "2–24", or "8" when Min is Max.
func (s AutoscaleSummary) Writers() string {
	if s.Min == s.Max {
		return strconv.Itoa(s.Min)
	}
	return fmt.Sprintf("%d–%d", s.Min, s.Max)
}

const maxDecisions = 1000

type phase int

const (
	doubling phase = iota
	holding
	probing
)

// Autoscaler decides, window after window, the writers and their pace
// (docs/performance.md, "Writers: --concurrency auto"). It reads no clock, so
// tests drive it with synthetic Samples. A measure spans two windows: one
// window's rate on a shared machine can be half or twice the next. A halving is
// judged only after the SDK's backoff (up to 2 s), as earlier throttles are of
// the writers before it.
type Autoscaler struct {
	cfg   Autoscale
	w     int
	pace  float64
	phase phase
	acc   Sample
	clock time.Duration
	// settle discards the next window, which mixes old and new writers.
	settle bool
	// base is items/s at baseW writers (holding: averaged over baseN windows).
	base  float64
	baseW int
	baseN int
	meas  Sample
	measN int
	// step is the writers the next probe adds (0: a quarter).
	step int
	// flats counts the probes of more writers in a row that did not pay
	// (from two on, the next probe tries fewer); seen is a probe of fewer's
	// first measure, when it held items/s (0: none yet).
	flats                     int
	seen                      float64
	holdLeft, holdLen         int
	lastHalving, lastThrottle time.Duration
	recent                    []Sample
	// ep is the halving being judged; tolerance, the share throttled tolerated.
	ep        *episode
	tolerance float64
	// paceHigh is the items/s last throttled.
	paceHigh float64
	sum      AutoscaleSummary
}

// episode is a halving until judged: the state before it, and the writers
// since.
type episode struct {
	at      time.Duration
	share   float64
	rate    float64
	writers int
	pace    float64
	after   Sample
	repaced bool
}

const (
	doubleGain         = 1.25
	keepGain           = 1.05
	keepShare          = 0.97
	minBusy            = 0.75
	firstHold, maxHold = 3, 64
	measureWindows     = 2
	halvingGap         = time.Second
	paceShare          = 0.95
	paceGrowth         = 0.02
	paceGrowthDoubling = 10 * time.Second
	paceRecovery       = 0.2
	// noiseRate: items/s falling below this share marks a halving that did not
	// help.
	noiseRate                     = 0.65
	minThrottles                  = 3
	judgeThrottles                = 10
	judgeRequests                 = 20
	judgeLimit                    = 10 * time.Second
	minPace                       = 25
	recentSpan                    = 2 * time.Second
	toleranceMargin, maxTolerance = 2, 0.5
	toleranceDecay                = 5 * time.Minute
)

// NewAutoscaler returns an unpaced Autoscaler at cfg.Start writers (after
// defaults).
func NewAutoscaler(cfg Autoscale) *Autoscaler {
	cfg = cfg.withDefaults()
	a := &Autoscaler{cfg: cfg, w: cfg.Start, phase: doubling, holdLen: firstHold, lastHalving: -1, lastThrottle: -1}
	a.sum = AutoscaleSummary{Min: a.w, Max: a.w, Last: a.w}
	a.record(ReasonStart, 0)
	return a
}

// Writers is the number of writers decided.
func (a *Autoscaler) Writers() int { return a.w }

// Pace is the pace decided, in items per second: 0 for none.
func (a *Autoscaler) Pace() float64 { return a.pace }

// Summary returns the writers so far.
func (a *Autoscaler) Summary() AutoscaleSummary {
	s := a.sum
	s.Pace = a.pace
	s.Decisions = append([]Decision(nil), a.sum.Decisions...)
	return s
}

// Observe takes the writers' Sample since the last call; it reports changes.
func (a *Autoscaler) Observe(s Sample) (changed bool) {
	a.clock += s.Elapsed
	a.acc.add(s)
	a.tolerance *= math.Exp(-s.Elapsed.Seconds() / toleranceDecay.Seconds())
	if s.Throttles > 0 {
		a.lastThrottle = a.clock
	}
	if a.ep != nil {
		a.ep.after.add(s)
		if a.clock-a.ep.at >= halvingGap && a.judge() {
			return true
		}
	}
	if s.Throttles > 0 && a.ep == nil && (a.lastHalving < 0 || a.clock-a.lastHalving >= halvingGap) {
		if r := a.recentSample(); a.overTolerance(r) {
			return a.throttled(throttledShare(r))
		}
	}
	if a.acc.Elapsed < a.windowLength() || (a.acc.Batches < int64(a.w) && a.acc.Elapsed < 10*a.cfg.Interval) {
		return false
	}
	win := a.acc
	a.acc = Sample{}
	a.remember(win)
	if a.settle {
		a.settle = false
		return false
	}
	paced := a.growPace(win)
	rate := win.rate()
	if win.Busy.Seconds() < minBusy*float64(a.w)*win.Elapsed.Seconds() {
		if a.phase == probing {
			return a.back(rate) || paced
		}
		return paced
	}
	switch a.phase {
	case doubling:
		return a.double(win) || paced
	case holding:
		return a.hold(rate) || paced
	default:
		return a.probe(win) || paced
	}
}

// windowLength is a window's least length: Interval, half of it while
// doubling, less a tenth, as a ticker's tick may come a little early (the
// driver ticks every half Interval).
func (a *Autoscaler) windowLength() time.Duration {
	l := a.cfg.Interval
	if a.phase == doubling {
		l /= 2
	}
	return l - l/10
}

// overTolerance: at least minThrottles, two deviations over the share
// tolerated.
func (a *Autoscaler) overTolerance(s Sample) bool {
	if s.Throttles < minThrottles {
		return false
	}
	n := float64(s.Batches + s.Throttles)
	expect := a.tolerance * n
	return float64(s.Throttles) > expect+2*math.Sqrt(expect*(1-a.tolerance))
}

func throttledShare(s Sample) float64 {
	if s.Throttles == 0 {
		return 0
	}
	return float64(s.Throttles) / float64(s.Batches+s.Throttles)
}

func (a *Autoscaler) remember(win Sample) {
	a.recent = append(a.recent, win)
	var span time.Duration
	for i := len(a.recent) - 1; i >= 0; i-- {
		span += a.recent[i].Elapsed
		if span >= recentSpan {
			a.recent = a.recent[i:]
			break
		}
	}
}

func (a *Autoscaler) recentSample() Sample {
	s := a.acc
	for _, w := range a.recent {
		s.add(w)
	}
	return s
}

func (a *Autoscaler) throttled(share float64) bool {
	r := a.recentSample().rate()
	a.ep = &episode{at: a.clock, share: share, rate: r, writers: a.w, pace: a.pace}
	a.lastHalving = a.clock
	a.sum.Halvings++
	a.w = max(1, (a.w+1)/2)
	high := r
	if a.pace > 0 {
		high = min(r, a.pace)
	}
	a.pace, a.paceHigh = max(paceShare*high, minPace), high
	a.restart()
	a.record(ReasonThrottled, r)
	return true
}

func (a *Autoscaler) restart() {
	a.phase, a.holdLen, a.holdLeft, a.flats = holding, firstHold, firstHold, 0
	a.base, a.baseN, a.baseW = 0, 0, a.w
	a.acc, a.settle = Sample{}, true
}

// judge tells, a second or more after a halving, whether it lowered the
// throttling. If the share throttled neither halved nor doubled and items/s
// fell below noiseRate, it did not help: repace once, then undo it and tolerate
// that share.
func (a *Autoscaler) judge() bool {
	e := a.ep
	share, rate := throttledShare(e.after), e.after.rate()
	switch {
	case e.after.Throttles == 0 && e.after.Batches >= judgeRequests:
		a.ep = nil // it stopped the throttling
		return false
	case e.after.Throttles < judgeThrottles && a.clock-e.at < judgeLimit:
		return false
	}
	if share <= e.share/2 || share > 2*e.share || rate > noiseRate*e.rate {
		a.ep = nil
		return false
	}
	if !e.repaced {
		// A burst (a table's unused capacity) may have run out.
		e.repaced, e.at, e.after = true, a.clock, Sample{}
		a.pace = max(paceShare*rate, minPace)
		a.paceHigh = rate
		a.restart()
		a.record(ReasonRepaced, rate)
		return true
	}
	a.ep = nil
	a.sum.Undone++
	a.tolerance = min(max(a.tolerance, toleranceMargin*share), maxTolerance)
	a.w, a.pace = e.writers, e.pace
	a.restart()
	a.record(ReasonUndone, rate)
	return true
}

func (a *Autoscaler) growPace(win Sample) bool {
	if a.pace == 0 || win.rate() < 0.9*a.pace {
		return false
	}
	g := paceRecovery
	if a.pace >= 0.9*a.paceHigh {
		since := a.clock - a.lastThrottle
		g = paceGrowth * math.Pow(2, since.Seconds()/paceGrowthDoubling.Seconds())
	}
	a.pace *= 1 + min(g*win.Elapsed.Seconds(), 0.5)
	if a.pace < 0.9*a.paceHigh {
		a.pace = min(a.pace, 0.9*a.paceHigh)
	}
	return true
}

// measured returns the measure's items/s once clear or after measureWindows.
func (a *Autoscaler) measured(win Sample, clear func(rate float64) bool) (rate float64, ok bool) {
	a.meas.add(win)
	a.measN++
	rate = a.meas.rate()
	if a.measN < measureWindows && !clear(rate) {
		return 0, false
	}
	a.meas, a.measN = Sample{}, 0
	return rate, true
}

func (a *Autoscaler) double(win Sample) bool {
	rate, ok := a.measured(win, func(r float64) bool { return a.base == 0 || r >= doubleGain*a.base })
	if !ok {
		return false
	}
	switch {
	case a.base == 0 || rate >= doubleGain*a.base:
		a.base, a.baseW = rate, a.w
		if a.w >= a.cfg.Max {
			a.phase, a.holdLeft, a.baseN = holding, a.holdLen, 1
			return false
		}
		// No settling: the writers added start at once.
		a.w = min(a.cfg.Max, 2*a.w)
		a.record(ReasonDouble, rate)
		return true
	case rate >= keepGain*a.base:
		a.base, a.baseW, a.baseN = rate, a.w, 1
		a.phase, a.holdLeft = holding, a.holdLen
		return false
	default:
		a.w = a.baseW
		a.baseN = 1
		a.phase, a.holdLeft, a.settle = holding, a.holdLen, true
		a.record(ReasonFlat, rate)
		return true
	}
}

func (a *Autoscaler) hold(rate float64) bool {
	n := float64(min(a.baseN, 8))
	a.base = (a.base*n + rate) / (n + 1)
	a.baseN++
	a.baseW = a.w
	a.holdLeft--
	if a.holdLeft > 0 || a.ep != nil {
		return false // a halving being judged: the writers hold meanwhile
	}
	switch {
	case a.w > 1 && a.pace == 0 && a.flats >= 2:
		a.w -= max(1, a.w/5)
	case a.w < a.cfg.Max:
		a.w = min(a.cfg.Max, a.w+max(1, a.w/4, a.step))
	default:
		// At the most writers a hold stands for a probe of more that did not pay.
		a.flats++
		a.holdLen = min(2*a.holdLen, maxHold)
		a.holdLeft = a.holdLen
		return false
	}
	a.phase, a.meas, a.measN, a.settle, a.seen = probing, Sample{}, 0, true, 0
	a.record(ReasonProbe, rate)
	return true
}

func (a *Autoscaler) probe(win Sample) bool {
	added := float64(a.w-a.baseW) / float64(a.baseW)
	gain := 1 + max(0.03, added/2)
	rate, ok := a.measured(win, func(float64) bool { return false }) // always two windows
	if !ok {
		return false
	}
	if a.w < a.baseW {
		return a.probeFewer(rate)
	}
	if rate >= a.base*gain {
		a.step, a.flats = 2*(a.w-a.baseW), 0
		a.base, a.baseW, a.baseN = rate, a.w, 1
		a.phase, a.holdLen, a.holdLeft = holding, firstHold, 1
		a.record(ReasonRising, rate)
		return true
	}
	a.flats++
	return a.back(rate)
}

// probeFewer keeps writers taken away when two measures in a row held
// items/s (keepShare of the base): a saturated sink writes as much with
// fewer, at less latency, and writers kept on a probe's noise alone would
// otherwise only ever climb. A fall goes back, and the next probe adds.
func (a *Autoscaler) probeFewer(rate float64) bool {
	if rate < keepShare*a.base {
		a.flats = 0
		return a.back(rate)
	}
	if a.seen == 0 {
		a.seen = rate
		return false
	}
	rate, a.seen = (rate+a.seen)/2, 0
	a.step = 0
	a.base, a.baseW, a.baseN = rate, a.w, 1
	a.phase, a.holdLen, a.holdLeft = holding, firstHold, 1
	a.record(ReasonFewer, rate)
	return true
}

func (a *Autoscaler) back(rate float64) bool {
	a.w, a.step = a.baseW, 0
	a.holdLen = min(2*a.holdLen, maxHold)
	a.phase, a.holdLeft, a.settle = holding, a.holdLen, true
	a.record(ReasonFlat, rate)
	return true
}

func (a *Autoscaler) record(r Reason, rate float64) {
	a.sum.Min, a.sum.Max, a.sum.Last = min(a.sum.Min, a.w), max(a.sum.Max, a.w), a.w
	if len(a.sum.Decisions) < maxDecisions {
		a.sum.Decisions = append(a.sum.Decisions, Decision{At: a.clock, Writers: a.w, Pace: a.pace, Reason: r, Rate: rate})
	}
}
