package main

import (
	"cmp"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/tools/faultproxy"
)

// Targets of --concurrency auto (issue 28), reported, never asserted.
const (
	targetAutoVsFixed = 0.9  // (j), (j″) to (j⁗): auto's items/s over the best fixed writers'
	targetHeld        = 0.9  // (j′): the share of the capacity held
	targetThrottled   = 0.02 // (j′): the most requests throttled
)

// fixedWriters are the fixed --concurrency values (j) sets auto against.
var fixedWriters = []int{8, 16, 32, 64}

// writersBench is (j): pg2dynamo migrate --concurrency auto against
// fixed writers, in the same run, on the tickets fixture at -writers-rows,
// through the fault proxy (tools/faultproxy) in front of a fresh
// dynalite: the proxy adds -writers-latency to every request and answers
// BatchWriteItem itself (AnswerWrites: the items are dropped), so that
// the writers, not dynalite (about 5,000 items/s on one CPU), set the
// rate. Each setting runs -repeat times, the settings in turn (rotated
// each round), and is reported by its median run. (j′): the same with
// the proxy taking -writers-capacity write units a second (WriteUnits):
// auto, and fixed 8 beside it, each through a fresh proxy. (j″), (j‴) and
// (j⁗), writersCase: --changes-only, --prune and a follow with each
// setting, through (j)'s proxy.
type writersBench struct {
	fix      *fixture
	latency  time.Duration
	capacity float64
	// runs are each setting's ("8", …, "auto") in run order.
	runs map[string][]writersRun
	// cases are (j″), (j‴) and (j⁗), in that order.
	cases   []*writersCase
	capRuns []capacityRun
	skipped string
}

// writersCase is (j″), (j‴) or (j⁗): one kind of run with each setting of
// (j), the settings in turn, through (j)'s proxy.
type writersCase struct {
	key  string // "j″"
	what string // the command, for the targets line
	// about is the paragraph before its table in BENCHMARKS.md, up to the
	// best fixed setting.
	about   string
	runs    map[string][]writersRun // by setting, in run order
	skipped string
}

// writersRun is one migrate run of (j).
type writersRun struct {
	setting string
	result
	// lo, hi and halvings are auto's writers, from its summary.
	lo, hi, halvings int
}

// capacityRun is one run of (j′), with what the proxy's bucket let
// through.
type capacityRun struct {
	writersRun
	cap faultproxy.Capacity
}

// autoLine reads an auto run's writers from its summary.
var autoLine = regexp.MustCompile(`writers (\d+)(?:–(\d+))? \(auto\): (\d+) halvings?`)

// measureWriters runs (j) to (j⁗) on a fixture of cfg.writersRows source
// rows in database cfg.db+"_writers" (dropped before it returns).
func measureWriters(ctx context.Context, cfg config, admin *pgx.Conn, root, bin, outDir string, created map[string]bool) (*writersBench, error) {
	wb := &writersBench{latency: cfg.writersLatency, capacity: cfg.writersCapacity, runs: map[string][]writersRun{}}
	var err error
	if wb.fix, err = loadFixture(ctx, admin, cfg.adminURL, cfg.db+"_writers", cfg.writersRows, created); err != nil {
		return nil, err
	}
	defer func() {
		dropDatabase(admin, wb.fix.db)
		delete(created, wb.fix.db)
	}()
	dyn, err := startDynalite(ctx, root)
	if err != nil {
		return nil, err
	}
	defer dyn.stop()
	proxy, err := faultproxy.Start(dyn.endpoint, faultproxy.Rates{Latency: wb.latency, AnswerWrites: true, AnswerDeletes: true}, 1)
	if err != nil {
		return nil, err
	}
	defer proxy.Close()
	mappingFile := filepath.Join(root, "fixtures", "mappings", "tickets.yaml")
	args := func(endpoint, setting string) []string {
		return []string{"--mapping", mappingFile, "--source", wb.fix.url, "--endpoint-url", endpoint, "--create-table", "--no-verify",
			"--progress", "none", "--rejects", os.DevNull, "--checkpoint", filepath.Join(outDir, "checkpoint.json"), "--concurrency", setting}
	}
	wb.runs, err = rotate(cfg.repeat, func(s, nth string) (writersRun, error) {
		name := fmt.Sprintf("--concurrency %s, %s a request %s", s, wb.latency, nth)
		return writersMigrate(ctx, bin, "j", name, wb.fix.rows, s, args(proxy.URL, s))
	})
	if err != nil {
		return nil, err
	}
	// (j″): the table (j) created is empty (the proxy dropped the items),
	// so that each --changes-only finds every item missing and puts it,
	// through pipeline.Writes.
	changes := &writersCase{key: "j″", what: "migrate --changes-only",
		about: "`pg2dynamo migrate --changes-only --no-verify` of the same fixture into the table (j) left empty, through the same proxy: the comparison finds every item missing and puts it as it goes (`pipeline.Writes`). Items/s are the items written over the whole process's wall (the comparison's Scan and source read included)"}
	changes.runs, err = rotate(cfg.repeat, func(s, nth string) (writersRun, error) {
		name := fmt.Sprintf("migrate --changes-only --concurrency %s, %s a request %s", s, wb.latency, nth)
		return changesMigrate(ctx, bin, name, mappingFile, wb.fix, proxy.URL, s, outDir)
	})
	if err != nil {
		return nil, err
	}
	wb.cases = append(wb.cases, changes)
	prune, err := measurePrune(ctx, cfg, admin, bin, outDir, mappingFile, created, dyn.endpoint, proxy.URL, wb.latency)
	if err != nil {
		return nil, err
	}
	wb.cases = append(wb.cases, prune)
	if wb.capacity > 0 {
		for _, s := range []string{"auto", "8"} {
			// A fresh proxy: a full bucket, and its own figures.
			cp, err := faultproxy.Start(dyn.endpoint, faultproxy.Rates{Latency: wb.latency, AnswerWrites: true, WriteUnits: wb.capacity}, 1)
			if err != nil {
				return nil, err
			}
			name := fmt.Sprintf("--concurrency %s, a table of %.0f write units a second, %s a request", s, wb.capacity, wb.latency)
			r, err := writersMigrate(ctx, bin, "j′", name, wb.fix.rows, s, args(cp.URL, s))
			c := cp.Capacity()
			cp.Close()
			if err != nil {
				return nil, err
			}
			log.Printf("(j′) --concurrency %s: %.3f of the capacity held, %.2f%% of %d requests throttled (%d refused, %d partly)",
				s, c.Held(wb.capacity), 100*c.Throttled(), c.Requests, c.Exceeded, c.Partial)
			wb.capRuns = append(wb.capRuns, capacityRun{r, c})
		}
	}
	// (j⁗) last: its backlogs change the fixture.
	follow, err := measureFollowWriters(ctx, cfg, admin, bin, outDir, mappingFile, wb.fix, proxy.URL, wb.latency)
	if err != nil {
		return nil, err
	}
	wb.cases = append(wb.cases, follow)
	return wb, nil
}

// rotate runs each of writerSettings repeat times, the settings in turn,
// each round starting one further on, and returns the runs by setting;
// run's nth is "(round of repeat)".
func rotate(repeat int, run func(setting, nth string) (writersRun, error)) (map[string][]writersRun, error) {
	settings := writerSettings()
	runs := map[string][]writersRun{}
	for round := range repeat {
		for k := range settings {
			s := settings[(k+round)%len(settings)]
			r, err := run(s, fmt.Sprintf("(%d of %d)", round+1, repeat))
			if err != nil {
				return nil, err
			}
			runs[s] = append(runs[s], r)
		}
	}
	return runs, nil
}

// writersMigrate runs migrate with args through the launcher and reads
// its items and, for auto, its writers from its summary.
func writersMigrate(ctx context.Context, bin, key, name string, rows int64, setting string, args []string) (writersRun, error) {
	log.Printf("(%s) %s", key, name)
	lr, err := launch(ctx, append([]string{bin, "migrate"}, args...)...)
	if err != nil {
		return writersRun{}, err
	}
	if lr.ExitCode != 0 {
		return writersRun{}, fmt.Errorf("(%s) %s: exit %d\n%s", key, name, lr.ExitCode, lr.Stdout)
	}
	items, rejected, err := summaryTotal(lr.Stdout)
	if err != nil || rejected > 0 {
		return writersRun{}, fmt.Errorf("(%s) %s: %d rejected, %v\n%s", key, name, rejected, err, lr.Stdout)
	}
	r := writersRun{setting: setting, result: result{key: key, name: name, rows: rows, items: items, wall: lr.Wall,
		cpu: lr.User + lr.Sys, rssKB: lr.MaxRSSKB, floorKB: lr.LauncherKB}}
	r.readAuto(lr.Stdout)
	note := ""
	if setting == "auto" {
		note = fmt.Sprintf(", writers %s, %d halvings", writerRange(r.lo, r.hi), r.halvings)
	}
	log.Printf("(%s) %d items in %s, %.0f items/s, %.2f CPUs%s", key, r.items, r.wall.Round(time.Millisecond), r.perSecond(),
		r.cpu.Seconds()/r.wall.Seconds(), note)
	return r, nil
}

// readAuto reads auto's writers from text, if it holds them.
func (r *writersRun) readAuto(text string) {
	if m := autoLine.FindStringSubmatch(text); m != nil {
		r.lo, _ = strconv.Atoi(m[1])
		r.hi = r.lo
		if m[2] != "" {
			r.hi, _ = strconv.Atoi(m[2])
		}
		r.halvings, _ = strconv.Atoi(m[3])
	}
}

// changesMigrate runs (j″): migrate --changes-only of fix into the empty
// table behind endpoint with --concurrency setting; its items are those
// its JSON report says it wrote.
func changesMigrate(ctx context.Context, bin, name, mappingFile string, fix *fixture, endpoint, setting, outDir string) (writersRun, error) {
	report := filepath.Join(outDir, "changes-writers.json")
	var out changesJSON
	run := writersRun{setting: setting} // its writers read from stderr, when auto
	r, err := runReportedLines(ctx, bin, "j″", name, fix.rows, report, &out, run.readAuto,
		"migrate", "--changes-only", "--no-verify", "--mapping", mappingFile, "--source", fix.url, "--endpoint-url", endpoint,
		"--progress", "none", "--rejects", os.DevNull, "--checkpoint", filepath.Join(outDir, "changes-checkpoint.json"),
		"--concurrency", setting, "--report-json", report)
	if err != nil {
		return writersRun{}, err
	}
	if out.Applied == nil || out.Applied.Written == 0 || out.Applied.Written != out.Summary.New {
		return writersRun{}, fmt.Errorf("(j″) %s: wrote %+v of %d new items; want every item, the table being empty", name, out.Applied, out.Summary.New)
	}
	r.items = out.Applied.Written
	log.Printf("(j″) %d items in %s, %.0f items/s", r.items, r.wall.Round(time.Millisecond), r.perSecond())
	run.result = r
	return run, nil
}

func writerRange(lo, hi int) string {
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// median is the setting's median run (writersRun of medianRun).
func (wb *writersBench) median(setting string) writersRun { return medianOf(wb.runs, setting) }

// medianOf is the setting's median run of runs by items/s (of an even
// number, the faster of the middle two).
func medianOf(runs map[string][]writersRun, setting string) writersRun {
	sorted := slices.Clone(runs[setting])
	slices.SortFunc(sorted, func(x, y writersRun) int { return cmp.Compare(y.perSecond(), x.perSecond()) })
	return sorted[(len(sorted)-1)/2]
}

// best is the fixed setting of the most items/s (by median run).
func (wb *writersBench) best() writersRun { return bestOf(wb.runs) }

// bestOf is the fixed setting of runs of the most items/s (by median run).
func bestOf(runs map[string][]writersRun) writersRun {
	var b writersRun
	for i, n := range fixedWriters {
		if m := medianOf(runs, strconv.Itoa(n)); i == 0 || m.perSecond() > b.perSecond() {
			b = m
		}
	}
	return b
}

func (wb *writersBench) targets() []string {
	if wb.skipped != "" {
		return []string{"--concurrency auto (j): not measured (" + wb.skipped + ")"}
	}
	auto, best := wb.median("auto"), wb.best()
	ratio, rounds := autoVsFixed(wb.runs)
	t := []string{fmt.Sprintf("--concurrency auto vs the best fixed writers (j), %s a request: **%.2f×** (median of the rounds' ratios: %s; the median runs %.0f items/s, writers %s, against %s's %.0f), target ≥ %.1f×: %s",
		wb.latency, ratio, rounds, auto.perSecond(), writerRange(auto.lo, auto.hi), best.setting, best.perSecond(), targetAutoVsFixed,
		verdict(ratio, targetAutoVsFixed, true, "", 2))}
	for _, c := range wb.cases {
		t = append(t, c.target(wb.latency))
	}
	for _, c := range wb.capRuns {
		if c.setting != "auto" {
			continue
		}
		held, thr := c.cap.Held(wb.capacity), c.cap.Throttled()
		t = append(t, fmt.Sprintf("--concurrency auto against a table of %s write units a second (j′): **%.2f** of the capacity held, target ≥ %.1f: %s; **%.2f%%** of requests throttled, target ≤ %.0f%%: %s",
			num(int64(wb.capacity)), held, targetHeld, verdict(held, targetHeld, true, "", 2), 100*thr, 100*targetThrottled,
			verdict(100*thr, 100*targetThrottled, false, " points", 2)))
	}
	return t
}

// render writes the (j) section of BENCHMARKS.md.
func (wb *writersBench) render(p func(format string, args ...any)) {
	p("\n## Writers: --concurrency auto (j)\n\n")
	if wb.skipped != "" {
		p("Not measured: %s.\n", wb.skipped)
		return
	}
	best := wb.best()
	p("`pg2dynamo migrate` of the tickets fixture (%s source rows, %s items) through the fault proxy (`tools/faultproxy`) in front of a fresh dynalite, the proxy adding %s to every request and answering BatchWriteItem itself (its items dropped: `--no-verify`), so that the writers, not dynalite, set the rate. Each setting ran %d times, the settings in turn; the rows are the median runs, and the ratios are to the best fixed setting of this run (%s writers).\n\n",
		num(wb.fix.rows), num(wb.median("auto").items), wb.latency, len(wb.runs["auto"]), best.setting)
	p("| `--concurrency` | wall | items/s | vs the best fixed | writers | CPU s per 1M items | peak RSS | walls, in run order |\n|---|--:|--:|--:|--:|--:|--:|---|\n")
	for _, s := range writerSettings() {
		m := wb.median(s)
		writers := s
		if s == "auto" {
			writers = fmt.Sprintf("%s (%d halvings)", writerRange(m.lo, m.hi), m.halvings)
		}
		var walls []string
		for _, r := range wb.runs[s] {
			walls = append(walls, r.wall.Round(10*time.Millisecond).String())
		}
		p("| %s | %s | %.0f | %.2f× | %s | %.1f | %.1f MB | %s |\n", s, m.wall.Round(10*time.Millisecond), m.perSecond(),
			m.perSecond()/best.perSecond(), writers, m.perMillion(m.cpu), float64(m.rssKB)/1024, strings.Join(walls, ", "))
	}
	_, rounds := autoVsFixed(wb.runs)
	p("\nAuto over the best fixed setting of each round (the settings ran in turn, so these pairs are nearest in time; the headline is their median): %s.\n", rounds)
	for _, c := range wb.cases {
		c.render(p)
	}
	if len(wb.capRuns) > 0 {
		p("\n(j′) The same fixture through a fresh proxy that takes %s write units a second (a token bucket of one second's units, full at first; each item its size in 1 KB units, these all 1): over what is left, the rest of a request comes back in UnprocessedItems, or the whole request is refused with ProvisionedThroughputExceededException. *Held* is the units accepted, less the bucket's first, over the time from the first accepted item to the last, as a share of the capacity.\n\n",
			num(int64(wb.capacity)))
		p("| `--concurrency` | wall | items/s | capacity held | requests | throttled | refused whole | partly | writers |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, c := range wb.capRuns {
			writers := c.setting
			if c.setting == "auto" {
				writers = fmt.Sprintf("%s (%d halvings)", writerRange(c.lo, c.hi), c.halvings)
			}
			p("| %s | %s | %.0f | %.3f | %s | %.2f%% | %s | %s | %s |\n", c.setting, c.wall.Round(10*time.Millisecond), c.perSecond(),
				c.cap.Held(wb.capacity), num(c.cap.Requests), 100*c.cap.Throttled(), num(c.cap.Exceeded), num(c.cap.Partial), writers)
		}
	}
	p("\nWalls are the whole process's (start, count(*), DescribeTable, the load); CPU s and peak RSS are pg2dynamo's alone. The proxy runs in the bench process, on the same CPUs.\n")
}

// roundRatios is, for each round of runs, auto's items/s over the best
// fixed setting's of the same round: the settings ran in turn, so these
// pairs are nearest in time, and a machine's drift between rounds cancels.
func roundRatios(runs map[string][]writersRun) []float64 {
	var q []float64
	for i, a := range runs["auto"] {
		best := 0.0
		for _, s := range fixedSettings() {
			if rs := runs[s]; i < len(rs) {
				best = max(best, rs[i].perSecond())
			}
		}
		if best > 0 {
			q = append(q, a.perSecond()/best)
		}
	}
	return q
}

// autoVsFixed is the (j) cases' headline: the median of roundRatios, with
// them listed.
func autoVsFixed(runs map[string][]writersRun) (ratio float64, rounds string) {
	q := roundRatios(runs)
	texts := make([]string, len(q))
	for i, r := range q {
		texts[i] = fmt.Sprintf("%.2f", r)
	}
	return median(q), strings.Join(texts, ", ")
}

// writerSettings are auto and fixedWriters' settings.
func writerSettings() []string { return append([]string{"auto"}, fixedSettings()...) }

func fixedSettings() []string {
	var s []string
	for _, n := range fixedWriters {
		s = append(s, strconv.Itoa(n))
	}
	return s
}
