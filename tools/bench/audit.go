package main

import (
	"cmp"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// targetAuditRatio is the follow's items/s at saturation with the rolling
// audit at its defaults over its items/s with --audit off (issue 35).
const targetAuditRatio = 0.9

// auditRun is one run of (h)'s saturation phase with one --audit setting.
type auditRun struct {
	name string
	args []string
	sat  saturation
	// satPeakKB is the highest VmRSS sampled during the saturation phase;
	// peakKB the process's peak (VmHWM) over the whole run, the full load
	// included.
	satPeakKB, peakKB int64
	// cycles are the audit's cycles done by the end of the saturation phase (from its cycle-end lines and
	// status line).
	cycles   int
	auditLog []string
	// all are the items/s of every run of the variant, in run order,
	// when it is reported by its median run (whose peaks are then the
	// highest of them all).
	all []float64
}

func (r auditRun) itemsPerSec() float64 { return float64(r.sat.items()) / r.sat.wall.Seconds() }

// auditVariants are the settings (h′) compares, in the order run: the
// audit off, at its defaults (report, an hour's cycle: on a fixture of
// this size one slice, whose first pass comes an hour after the follow
// starts), and at a cycle so short that its passes run back to back
// throughout the saturation phase: the audit's whole cost.
var auditVariants = []auditRun{
	{name: "--audit off", args: []string{"--audit", "off"}},
	{name: "the audit at its defaults (--audit report --audit-cycle 1h)", args: nil},
	{name: "--audit report --audit-cycle 1s (passes back to back)", args: []string{"--audit", "report", "--audit-cycle", "1s"}},
}

// measureFollowAudit is (h′): (h)'s full load and saturation phase once
// per auditVariants entry, each on a fresh dynalite, on fix (whose
// tables it alters and changes, as (h) does).
func measureFollowAudit(ctx context.Context, cfg config, admin *pgx.Conn, root, bin, outDir string, m *mapping.Mapping, mappingFile string, fix *fixture) ([]auditRun, error) {
	conn, w, err := followedFixture(ctx, fix, m)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	// The variants alternate, -repeat times, so that a slow spell of a
	// shared machine falls on each; each is reported by its median run.
	all := make([][]auditRun, len(auditVariants))
	for i := range cfg.repeat {
		for j, v := range auditVariants {
			log.Printf("(h′) round %d of %d", i+1, cfg.repeat)
			r, err := saturateWithAudit(ctx, cfg, admin, conn, w, root, bin, outDir, mappingFile, fix, v)
			if err != nil {
				return nil, fmt.Errorf("(h′) %s: %w", v.name, err)
			}
			all[j] = append(all[j], r)
		}
	}
	var runs []auditRun
	for _, rs := range all {
		m := slices.Clone(rs)
		slices.SortFunc(m, func(x, y auditRun) int { return cmp.Compare(x.itemsPerSec(), y.itemsPerSec()) })
		med := m[(len(m)-1)/2]
		for _, r := range rs {
			med.peakKB, med.satPeakKB = max(med.peakKB, r.peakKB), max(med.satPeakKB, r.satPeakKB)
			med.all = append(med.all, r.itemsPerSec())
		}
		runs = append(runs, med)
	}
	return runs, nil
}

// saturateWithAudit runs one variant: migrate --follow with its args, the
// full load, then (h)'s saturation phase, then SIGINT.
func saturateWithAudit(ctx context.Context, cfg config, admin, conn *pgx.Conn, w *workload, root, bin, outDir, mappingFile string, fix *fixture, r auditRun) (auditRun, error) {
	slot := fix.db + "_ha"
	dropSlot(admin, slot)
	defer dropSlot(admin, slot)
	dyn, err := startDynalite(ctx, root)
	if err != nil {
		return r, err
	}
	defer dyn.stop()
	feed := newStatusFeed("h′")
	var auditLines []string
	onLine := func(line string, at time.Time) {
		if strings.HasPrefix(line, "audit: ") {
			auditLines = append(auditLines, line) // one goroutine calls onLine
		}
		feed.line(line, at)
	}
	args := append([]string{"migrate", "--mapping", mappingFile, "--source", fix.url, "--endpoint-url", dyn.endpoint,
		"--create-table", "--progress", "none", "--progress-interval", "1ms", "--rejects", os.DevNull,
		"--audit-file", filepath.Join(outDir, "drift-h.jsonl"),
		"--checkpoint", filepath.Join(outDir, "checkpoint-ha.json"), "--concurrency", strconv.Itoa(cfg.conc),
		"--follow", "--slot", slot, "--publication", slot}, r.args...)
	log.Printf("(h′) %s: the full load, then %d changes at saturation", r.name, cfg.follow.changes)
	proc, err := startLaunch(ctx, onLine, append([]string{bin}, args...)...)
	if err != nil {
		return r, err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = syscall.Kill(proc.pid, syscall.SIGCONT)
			_ = proc.interrupt()
			_, _ = proc.wait()
		}
	}()
	mem := newMemSampler(proc.pid)
	defer mem.stop()
	if _, err := feed.waitFollowing(ctx, proc.drained); err != nil {
		return r, err
	}
	base, err := feed.waitStatus(ctx, proc.drained, 30*time.Second, func(followStatus) bool { return true })
	if err != nil {
		return r, err
	}
	mem.setPhase(1)
	fb := &followBench{}
	if err := fb.saturate(ctx, cfg.follow, admin, conn, w, proc, feed, base, dyn.cmd.Process.Pid, fix.db); err != nil {
		return r, err
	}
	r.sat, r.satPeakKB = fb.sat, mem.peak(1)
	stopped = true
	if err := proc.interrupt(); err != nil {
		return r, err
	}
	res, err := proc.wait()
	if err != nil {
		return r, err
	}
	if res.ExitCode != 0 {
		return r, fmt.Errorf("pg2dynamo migrate --follow: exit %d (the audit found drift?)\n%s", res.ExitCode, strings.Join(auditLines, "\n"))
	}
	r.peakKB, r.auditLog = res.MaxRSSKB, auditLines
	for _, l := range auditLines {
		if strings.Contains(l, " done in ") {
			r.cycles++
		}
	}
	log.Printf("(h′) %s: %.0f items/s at saturation, peak RSS %.1f MB in it (%.1f MB the whole run), %d audit cycles done",
		r.name, r.itemsPerSec(), float64(r.satPeakKB)/1024, float64(r.peakKB)/1024, r.cycles)
	return r, nil
}

// renderAudit is (h′)'s table: each variant's items/s at saturation, its
// ratio to --audit off's, and its memory.
func renderAudit(runs []auditRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "(h′) the follow at saturation with the rolling audit (target: at its defaults ≥ %.1f of --audit off's items/s)\n\n", targetAuditRatio)
	fmt.Fprintf(&b, "| run (median of its runs) | changes | items | wall | items/s | every run's items/s | ratio to --audit off | peak RSS, saturation | peak RSS, whole run | audit cycles done |\n|---|---|---|---|---|---|---|---|---|---|\n")
	off := runs[0].itemsPerSec()
	for _, r := range runs {
		var every []string
		for _, v := range r.all {
			every = append(every, fmt.Sprintf("%.0f", v))
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %.0f | %s | %.2f | %.1f MB | %.1f MB | %d |\n", r.name, r.sat.changes, r.sat.items(),
			r.sat.wall.Round(time.Millisecond), r.itemsPerSec(), strings.Join(every, ", "), r.itemsPerSec()/off, float64(r.satPeakKB)/1024, float64(r.peakKB)/1024, r.cycles)
	}
	return b.String()
}
