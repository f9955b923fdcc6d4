package pipeline

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxConcurrency is the most writers an Autoscale run adds by
// default (--max-concurrency).
const DefaultMaxConcurrency = 64

// Autoscale lets a run (Options.Auto) or a Writes (WritesOptions.Auto)
// choose its number of writers as it goes (--concurrency auto): it starts with Start writers and, from what the
// writers do in each window of Interval (items written, time busy,
// requests the sink reports throttled), an Autoscaler decides how many
// write next. See Autoscaler for the rules.
type Autoscale struct {
	// Max is the most writers (default DefaultMaxConcurrency).
	Max int
	// Start is the number of writers at first (default min(4, Max)).
	Start int
	// Interval is the length of a measurement window (default
	// DefaultAutoscaleInterval). A window is extended until the writers
	// have finished as many batches as there are writers, so that a slow
	// sink is measured over enough of its answers.
	Interval time.Duration
	// ticks, when set (tests), end windows instead of a ticker of
	// Interval; now, when set, is the clock instead of time.Now.
	ticks <-chan time.Time
	now   func() time.Time
}

// DefaultAutoscaleInterval is Autoscale.Interval's default: at 8 ms a
// request, a writer finishes about a dozen batches in it. (250 ms windows
// were steadier on a busy machine, but took 0.88 of the best fixed
// writers' rate where 100 ms windows took 0.95, ramping up too slowly in
// a short run; see autoscale_sim_test.go.)
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

// ParseConcurrency parses a --concurrency value: "auto", or a number of
// writers from 1 to most. It returns auto, or n.
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

// Sample is what the writers did during one stretch of time, as an
// Autoscaler is told it.
type Sample struct {
	// Elapsed is the stretch's length (wall time).
	Elapsed time.Duration
	// Items and Batches are the items and batches whose writes ended in
	// it (written or rejected).
	Items, Batches int64
	// Busy is the writers' time spent on batches in it, summed over the
	// writers: from a batch taken from the queue to its write's end,
	// waits for the pace and the sink's retries included. Busy over
	// writers × Elapsed near 1 means the writers, not the readers, set
	// the rate.
	Busy time.Duration
	// Throttles is the number of requests the sink reports throttled in
	// it: answered ThrottlingException or
	// ProvisionedThroughputExceededException (retried by the SDK), or with
	// UnprocessedItems (see load.ThrottleCounter).
	Throttles int64
}

func (s *Sample) add(o Sample) {
	s.Elapsed += o.Elapsed
	s.Items += o.Items
	s.Batches += o.Batches
	s.Busy += o.Busy
	s.Throttles += o.Throttles
}

// rate is s's items per second.
func (s Sample) rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Items) / s.Elapsed.Seconds()
}

// Reason says why an Autoscaler changed the number of writers or the pace.
type Reason string

const (
	// ReasonStart is the first decision: Autoscale.Start writers.
	ReasonStart Reason = "start"
	// ReasonDouble: items/s rose with the last doubling, or this is the
	// first measure; double again (the start).
	ReasonDouble Reason = "double"
	// ReasonProbe: items/s held for a while; try a few more writers.
	ReasonProbe Reason = "probe"
	// ReasonRising: items/s rose with the writers added: keep them.
	ReasonRising Reason = "rising"
	// ReasonFlat: items/s did not rise with the writers added, or the
	// writers waited for batches (the source sets the pace): back to
	// the writers before.
	ReasonFlat Reason = "flat"
	// ReasonThrottled: the sink throttled requests: halve the writers and
	// pace the writes below the rate that was throttled.
	ReasonThrottled Reason = "throttled"
	// ReasonRepaced: after a halving, the share of requests throttled
	// did not change and items/s fell: the pace goes down to what was
	// written since (a burst may have run out), and the halving is judged
	// again.
	ReasonRepaced Reason = "repaced"
	// ReasonUndone: the share of requests throttled did not change after
	// a halving and the pace set again, though items/s fell: the writers
	// and pace go back to what they were, and that share is tolerated.
	ReasonUndone Reason = "undone"
)

// Decision is one change an Autoscaler made.
type Decision struct {
	// At is the time from the first sample to the decision: the sum of
	// the samples' Elapsed.
	At time.Duration
	// Writers is the number of writers from now on.
	Writers int
	// Pace is the most items per second the writers start from now on;
	// 0 means no pace.
	Pace   float64
	Reason Reason
	// Rate is the items per second measured that led to the decision (0
	// for the start).
	Rate float64
}

// AutoscaleSummary is what an Autoscale run's writers were.
type AutoscaleSummary struct {
	// Min and Max are the fewest and most writers the run had; Last, the
	// number at its end.
	Min, Max, Last int
	// Halvings is the number of times throttling halved the writers;
	// Undone, how many of those halvings were undone (see Autoscaler).
	Halvings, Undone int
	// Pace is the last pace, in items per second (0: none).
	Pace float64
	// Decisions are the Autoscaler's decisions, the first
	// maxDecisions of them.
	Decisions []Decision
}

// Writers is the range of writers: "2–24", or "8" when Min is Max.
func (s AutoscaleSummary) Writers() string {
	if s.Min == s.Max {
		return strconv.Itoa(s.Min)
	}
	return fmt.Sprintf("%d–%d", s.Min, s.Max)
}

// maxDecisions bounds the decisions an AutoscaleSummary keeps: a run
// probes every few seconds.
const maxDecisions = 1000

// phase is what an Autoscaler is doing.
type phase int

const (
	// doubling: doubling the writers while items/s nearly doubles.
	doubling phase = iota
	// holding: measuring items/s at the current writers before probing.
	holding
	// probing: measuring items/s with writers added.
	probing
)

// Autoscaler decides, window after window, how many writers write and at
// what pace. It is the control logic alone: it is told Samples and reads
// no clock, so that tests drive it with synthetic ones.
//
// The rules, each window of at least Autoscale.Interval (longer until the
// writers finished as many batches as there are writers):
//
//   - Throttling halves the writers (rounding up, never below 1) and
//     paces them: at most 95% of the items/s written over the last two
//     seconds (or of the pace, if lower). It takes at least 3 throttled
//     requests in those two seconds, more than chance would give at the
//     share tolerated (none at first), and one halving at a time: a
//     halving is judged a second or more after it, once the writers
//     answered enough (20 requests without a throttle end it at once;
//     else 10 throttles, or 10 s). Throttled requests come back from the
//     SDK's backoff (up to 2 s), so what the next second says of the
//     halving is not yet of the writers halved.
//   - A halving after which items/s fell by over a third while the share
//     of requests throttled stayed within half and twice what it was did
//     not lower the throttling. That may be a table's burst capacity
//     running out, leaving the pace above what the table takes: the pace
//     goes down to 95% of what was written since. If that does not help
//     either, the throttling is not the writers' doing (faults, a hot key
//     at any rate): the halving is undone, and twice that share is
//     tolerated from then on, decaying over five minutes.
//   - At the start, writers double while items/s rises by at least a
//     quarter with each doubling (by half in ideal conditions). The
//     first doubling that does not ends the start: its writers are kept
//     if items/s rose by at least 5%, else the writers before.
//   - After that, additive increase: once items/s held for a few windows,
//     a quarter more writers (at least one) are tried; they are kept if
//     items/s rose by at least half their share (3% at least), and the
//     next probe adds twice as many; else the writers go back and the
//     next probe waits twice as long (up to 64 windows).
//   - A doubling or a probe is measured over two windows (a doubling
//     over one when it shows the rise it needs): on a shared machine one
//     window's items/s can be half or twice the next.
//   - A window in which the writers were busy less than 3/4 of the time
//     is not a measure of the writers: they waited for batches (the
//     source sets the rate); a probe in progress goes back.
//   - While a halving is judged, no writers are added.
//   - The pace, once set, grows while the writers are held by it: by 20%
//     a second up to 90% of the items/s last throttled, then by 2% a
//     second, doubling for every 10 s without throttling.
//
// The writers stay between 1 and Autoscale.Max; --max-write-units, when
// set, caps the sink itself (load.DynamoDB.LimitWriteUnits) whatever the
// writers.
type Autoscaler struct {
	cfg   Autoscale
	w     int
	pace  float64
	phase phase
	// acc accumulates samples until a window is complete.
	acc Sample
	// clock is the sum of the samples' Elapsed.
	clock time.Duration
	// settle discards the next complete window: the one after a change
	// mixes old writers and new.
	settle bool
	// base is items/s at baseW writers (holding: averaged over baseN
	// windows).
	base  float64
	baseW int
	baseN int
	// meas is the measure of the current writers so far, over measN
	// windows (doubling and probing).
	meas  Sample
	measN int
	// step is the writers the next probe adds, at least a quarter more
	// (0: a quarter).
	step int
	// holdLeft windows before the next probe; holdLen, the current hold.
	holdLeft, holdLen int
	// lastHalving is the clock at the last halving (-1: none);
	// lastThrottle, at the last throttle seen.
	lastHalving, lastThrottle time.Duration
	// recent is the windows of the last recentSpan, for the rate and the
	// share throttled before a halving.
	recent []Sample
	// ep is the last halving, until it is judged (nil then);
	// tolerance, the share of requests throttled that does not halve.
	ep        *episode
	tolerance float64
	// paceHigh is the items/s at which the last halving's throttling came:
	// the pace climbs back fast up to 90% of it, slowly beyond.
	paceHigh float64
	sum      AutoscaleSummary
}

// episode is a halving, kept until it is judged: the share of requests
// throttled and items/s over the recentSpan before it, what it changed,
// and what the writers did since.
type episode struct {
	at      time.Duration
	share   float64
	rate    float64
	writers int
	pace    float64
	after   Sample
	// repaced: the pace was set again from what was written since (at is
	// then when).
	repaced bool
}

// Tuning of an Autoscaler.
const (
	// doubleGain: a doubling is kept going while items/s rises by this.
	doubleGain = 1.25
	// keepGain: the last doubling's writers are kept if items/s rose by this.
	keepGain = 1.05
	// minBusy: below this share of the writers' time busy, the writers
	// waited for batches.
	minBusy = 0.75
	// firstHold and maxHold bound the windows held before a probe.
	firstHold, maxHold = 3, 64
	// measureWindows make a measure of writers doubled or probed (after
	// one settling for a probe); a doubling's first window is enough when
	// it shows the rise needed.
	measureWindows = 2
	// halvingGap is the least time between two halvings.
	halvingGap = time.Second
	// paceShare is the share of the throttled items/s paced at.
	paceShare = 0.95
	// paceGrowth is the pace's growth per second, doubled for every
	// paceGrowthDoubling without throttling.
	paceGrowth         = 0.02
	paceGrowthDoubling = 10 * time.Second
	// paceRecovery is the pace's growth per second below 90% of the
	// rate last throttled.
	paceRecovery = 0.2
	// noiseRate: a halving after which items/s fell below this share of
	// what it was (the writers set the rate), with the share throttled
	// unchanged, did not lower the throttling.
	noiseRate = 0.65
	// minThrottles in the last recentSpan halve the writers, not fewer.
	minThrottles = 3
	// judgeThrottles is the fewest throttles a halving is judged on, unless
	// judgeLimit passed.
	judgeThrottles = 10
	// judgeRequests without a throttle end a halving's judgment.
	judgeRequests = 20
	judgeLimit    = 10 * time.Second
	// minPace is the least pace, in items/s: one batch a second.
	minPace = 25
	// recentSpan is how far back the rate and the share throttled are
	// measured before a halving.
	recentSpan = 2 * time.Second
	// toleranceMargin times the share throttled whatever the writers is
	// tolerated, at most maxTolerance, decaying with time constant
	// toleranceDecay.
	toleranceMargin, maxTolerance = 2, 0.5
	toleranceDecay                = 5 * time.Minute
)

// NewAutoscaler returns an Autoscaler starting at cfg.Start writers
// (after defaults), unpaced.
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

// Observe takes what the writers did since the last call and returns
// whether the writers or the pace changed (then Writers and Pace say
// to what).
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
	if a.acc.Elapsed < a.cfg.Interval || (a.acc.Batches < int64(a.w) && a.acc.Elapsed < 10*a.cfg.Interval) {
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
		// The writers waited for batches: this window says nothing of them.
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

// overTolerance reports whether s's throttles are more than chance
// would give at the share tolerated: at least minThrottles, and over the
// tolerated number by two standard deviations (of a binomial count).
func (a *Autoscaler) overTolerance(s Sample) bool {
	if s.Throttles < minThrottles {
		return false
	}
	n := float64(s.Batches + s.Throttles)
	expect := a.tolerance * n
	return float64(s.Throttles) > expect+2*math.Sqrt(expect*(1-a.tolerance))
}

// throttledShare is the share of requests s's throttles were: each
// throttled request is one more request than its batch's.
func throttledShare(s Sample) float64 {
	if s.Throttles == 0 {
		return 0
	}
	return float64(s.Throttles) / float64(s.Batches+s.Throttles)
}

// remember keeps win among the windows of the last recentSpan.
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

// recentSample is the windows of the last recentSpan and the window
// being measured.
func (a *Autoscaler) recentSample() Sample {
	s := a.acc
	for _, w := range a.recent {
		s.add(w)
	}
	return s
}

// throttled halves the writers and lowers the pace: to 95% of what
// was written over the last second, or of the pace if lower, but not
// below half the pace.
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

// restart measures anew after a change of the throttling's doing.
func (a *Autoscaler) restart() {
	a.phase, a.holdLen, a.holdLeft = holding, firstHold, firstHold
	a.base, a.baseN, a.baseW = 0, 0, a.w
	a.acc, a.settle = Sample{}, true
}

// judge tells a halving that lowered the throttling from one that did
// not, a second or more after it. The share of requests throttled since,
// against the two seconds before: down by half or more, the halving
// stands; up by more than twice, the writers are still over what the
// table takes, and the next throttle halves again. In between, once ten
// throttles or more came since (or ten seconds passed): when items/s fell
// by over a third, the halving did not help. Then the pace goes down to
// what was written since, and the halving is judged again the same way;
// when that did not help either, the throttling is not the writers' doing
// (faults, a hot key at any rate): the halving is undone and twice that
// share is tolerated from now on, decaying over toleranceDecay. It
// reports whether it changed the writers or the pace.
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
		// items/s fell, maybe only because a burst (a table's unused
		// capacity) ran out, after which the pace set from the rate
		// before is above what the table takes: pace at what was written
		// since, and judge again.
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

// growPace raises the pace when the writers were held by it: fast up to
// 90% of the rate last throttled, slowly beyond.
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

// measured adds win to the measure of the current writers and returns
// its items/s (ok) once clear says it is clear, or once it spans
// measureWindows windows; then it starts the next measure.
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

// double is a window of the start.
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
		// No settling: a window is many requests long, and the writers
		// added start at once.
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

// hold is a window between probes.
func (a *Autoscaler) hold(rate float64) bool {
	n := float64(min(a.baseN, 8))
	a.base = (a.base*n + rate) / (n + 1)
	a.baseN++
	a.baseW = a.w
	a.holdLeft--
	if a.holdLeft > 0 || a.w >= a.cfg.Max || a.ep != nil {
		return false // a halving being judged: the writers hold meanwhile
	}
	a.w = min(a.cfg.Max, a.w+max(1, a.w/4, a.step))
	a.phase, a.meas, a.measN, a.settle = probing, Sample{}, 0, true
	a.record(ReasonProbe, rate)
	return true
}

// probe is a window of a probe. A probe kept makes the next one twice as
// large.
func (a *Autoscaler) probe(win Sample) bool {
	added := float64(a.w-a.baseW) / float64(a.baseW)
	gain := 1 + max(0.03, added/2)
	rate, ok := a.measured(win, func(float64) bool { return false }) // always two windows
	if !ok {
		return false
	}
	if rate >= a.base*gain {
		a.step = 2 * (a.w - a.baseW)
		a.base, a.baseW, a.baseN = rate, a.w, 1
		a.phase, a.holdLen, a.holdLeft = holding, firstHold, 1
		a.record(ReasonRising, rate)
		return true
	}
	return a.back(rate)
}

// back ends a probe that did not pay: the writers before, and a longer
// hold.
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
