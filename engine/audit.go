package engine

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pg2dynamo/pg2dynamo/follow"
)

// The rolling audit of migrate with Follow: options, drift file, lines, exit
// code.

// DefaultAuditFile is AuditFile's default.
const DefaultAuditFile = "pg2dynamo-drift.jsonl"

// maxDriftLines bounds the drifted items a cycle lists on stderr.
const maxDriftLines = 20

type followAudit struct {
	au       *follow.Auditor
	mode     follow.AuditMode
	path     string
	appendTo bool
	mu       sync.Mutex // the file, and the cycle's lines
	// file is created at the first drifted item.
	file          *outputFile
	enc           *json.Encoder
	log           io.Writer
	cfg           Config
	listed, cycle int
}

// newFollowAudit makes the follow's audit and opens its file (nil when it does
// not audit); after, if set, holds its first slice until closed. The caller
// closes it.
func newFollowAudit(j *job, s *session, a *follow.Applier, after <-chan struct{}) (*followAudit, error) {
	mode, on, err := auditMode(j, s)
	if err != nil || !on {
		return nil, err
	}
	fa := &followAudit{mode: mode, path: cmp.Or(j.fol.AuditFile, DefaultAuditFile), log: j.log, appendTo: j.mig.Resume, cfg: j.cfg}
	cycle := cmp.Or(j.fol.AuditCycle, follow.DefaultAuditCycle)
	fa.au = follow.NewAuditor(j.cfg.Source, s.m, s.client, a, follow.AuditOptions{Mode: mode, Cycle: cycle, SliceItems: j.fol.AuditSliceItems, Reads: j.readLimit(),
		OnDrift: fa.drift, OnCycle: fa.cycleDone, After: after,
		OnSkip: func(err error) { fmt.Fprintf(j.log, "audit: %v\n", err) }})
	fmt.Fprintf(j.log, "audit: %s, every item compared at least once every %s (%s); drifted items are listed in %s\n", mode, cycle, j.opt(OptAuditCycle), fa.path)
	return fa, nil
}

// auditMode is the audit mode, and whether to audit (not with Audit off,
// UntilCaughtUp, or a non-DynamoDB sink).
func auditMode(j *job, s *session) (follow.AuditMode, bool, error) {
	mode, err := follow.ParseAuditMode(cmp.Or(j.fol.Audit, "report"))
	if err != nil {
		return mode, false, refused(err)
	}
	return mode, mode != follow.AuditOff && !j.fol.UntilCaughtUp && s.client != nil, nil
}

func (fa *followAudit) auditor() *follow.Auditor {
	if fa == nil {
		return nil
	}
	return fa.au
}

// drift lists a drifted item in the file, and on stderr up to maxDriftLines.
func (fa *followAudit) drift(d follow.Drift) error {
	fa.mu.Lock()
	defer fa.mu.Unlock()
	if d.Cycle != fa.cycle {
		fa.cycle, fa.listed = d.Cycle, 0
	}
	if fa.file == nil {
		f, err := createOutput(fa.path, fa.appendTo)
		if err == nil {
			if err = f.Publish(); err != nil {
				f.Discard()
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", fa.cfg.name(OptAuditFile), err)
		}
		fa.file, fa.enc = f, json.NewEncoder(f)
	}
	if err := fa.enc.Encode(driftLine{Time: time.Now().UTC().Format(time.RFC3339), Drift: d}); err != nil {
		return fmt.Errorf("%s %s: %w", fa.cfg.name(OptAuditFile), fa.path, err)
	}
	fa.listed++
	if fa.listed <= maxDriftLines {
		done := ""
		if d.Repaired {
			done = ", repaired"
		}
		fmt.Fprintf(fa.log, "audit: %s item %s (entity %s, type %s)%s\n", d.Kind, keyText(d.Key), d.Entity, d.Type, done)
	} else if fa.listed == maxDriftLines+1 {
		fmt.Fprintf(fa.log, "audit: more drifted items in cycle %d: every one is listed in %s\n", d.Cycle, fa.path)
	}
	return nil
}

type driftLine struct {
	Time string `json:"time"`
	follow.Drift
}

// keyText prints an item key as name=value pairs, in name order.
func keyText(key map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(key)) {
		parts = append(parts, fmt.Sprintf("%s=%q", k, key[k]))
	}
	return strings.Join(parts, " ")
}

func (fa *followAudit) cycleDone(st follow.AuditStatus) {
	over := ""
	if st.Overran {
		over = " (it took longer than " + fa.cfg.name(OptAuditCycle) + ": the table is larger than a cycle can compare at this pace, or the source and the table are slow)"
	}
	repaired := ""
	if fa.mode == follow.AuditRepair {
		repaired = fmt.Sprintf(", %d repaired", st.Repaired)
		if st.RepairRows > 0 {
			repaired += fmt.Sprintf(" (%d source rows read again to repair them)", st.RepairRows)
		}
	}
	fmt.Fprintf(fa.log, "audit: cycle %d done in %d slices%s: %d items compared, %d left out (written by the follow meanwhile), %d drifted%s\n",
		st.Cycle, st.Slices, over, st.Compared, st.Skipped, st.Drifted, repaired)
}

// close returns the KindMismatch error the follow stops with when the table may
// still hold drift found, with what to do.
func (fa *followAudit) close(j *job, slot string) error {
	if fa == nil {
		return nil
	}
	fa.mu.Lock()
	defer fa.mu.Unlock()
	if fa.file != nil {
		if err := fa.file.Close(); err != nil {
			return fmt.Errorf("%s: %w", j.opt(OptAuditFile), err)
		}
	}
	st := fa.au.Status()
	if st.Unrepaired() == 0 {
		return nil
	}
	how := "not repaired (" + j.opt(OptAudit) + " report)"
	if fa.mode == follow.AuditRepair {
		how = fmt.Sprintf("%d not yet repaired when the follow stopped", st.LastDrifted-st.LastRepaired)
	}
	return mismatch(fmt.Errorf("follow: the rolling audit found %d items that differ from the source in cycle %d (the last that found any), %s; "+
		"every one is listed in %s. To rewrite them from the source: %s repair (it goes on from slot %s and repairs what its audit finds)",
		st.LastDrifted, st.LastDriftCycle, how, fa.path, j.cfg.run("migrate", OptFollow, OptResume, OptAudit), slot))
}

// FollowAuditLine is the audit's part of the follow's status line ("" without).
func FollowAuditLine(a follow.AuditStatus) string {
	if a.Mode == follow.AuditOff || a.Cycle == 0 {
		return ""
	}
	line := fmt.Sprintf("; audit cycle %d: %d%%, %d drifted", a.Cycle, int(100*a.Progress), a.Drifted)
	if a.Mode == follow.AuditRepair {
		line += fmt.Sprintf(", %d repaired", a.Repaired)
	}
	if a.Overran {
		line += " (overran)"
	}
	if a.PrevDrifted > 0 && a.Mode == follow.AuditRepair {
		line += fmt.Sprintf(" (cycle %d: %d drifted, %d repaired)", a.Cycle-1, a.PrevDrifted, a.PrevRepaired)
	} else if a.PrevDrifted > 0 {
		line += fmt.Sprintf(" (cycle %d: %d drifted)", a.Cycle-1, a.PrevDrifted)
	}
	if a.Mode == follow.AuditReport && a.Unrepaired() > 0 {
		line += fmt.Sprintf(" (DRIFT: %d items in cycle %d, not repaired)", a.LastDrifted, a.LastDriftCycle)
	}
	return line
}

// lockLog makes w safe for several goroutines: a StructuredLog already is.
func lockLog(w io.Writer) io.Writer {
	if _, ok := w.(StructuredLog); ok {
		return w
	}
	return &lockedWriter{w: w}
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
