package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// targetChangesWall is (m)'s wall over (f)'s: migrate --changes-only, on a
// table 1% of whose source rows changed, against verify of the table
// matching its source.
const targetChangesWall = 1.3

// changesBench is the measurement of migrate --changes-only on verify's
// fixture, after (f) and before (g): -changes-pct of its source rows are
// changed (tickets: 80% updated, 10% deleted, 10% inserted as copies under
// new IDs), then
//
//	(n) diff: what changes-only will write and delete, and its estimate of
//	    the write units;
//	(m) migrate --changes-only: it must write exactly that (the write units
//	    of what it wrote equal (n)'s estimate), read it back and pass;
//	(o) verify of the table (m) left: it must pass.
//
// (m)'s wall is set beside verify's: the mean of (f)'s and (o)'s, the runs
// just before and after it, as this machine's speed drifts. All show their
// progress as verify's (f) does (lines on stderr), so that their walls
// compare.
type changesBench struct {
	updated, deleted, inserted int64
	n, m, o                    *result
	diff                       changesJSON // (n)'s report
	changes                    changesJSON // (m)'s report
}

// changesJSON is what the bench reads of diff's and --changes-only's JSON
// reports.
type changesJSON struct {
	OK      bool
	Summary struct{ New, Changed, Stale int64 }
	Totals  struct{ Derived int64 }
	Cost    *struct {
		WriteUnits       int64 `json:"write_units"`
		ChangeWriteUnits int64 `json:"change_write_units"`
		StaleWriteUnits  int64 `json:"stale_write_units"`
	}
	Applied *struct {
		Written, Deleted   int64
		WriteUnits         int64   `json:"write_units"`
		ConsumedWriteUnits float64 `json:"consumed_write_units"`
		FullWriteUnits     int64   `json:"full_write_units"`
		ReadBack           bool    `json:"read_back"`
	}
}

// changeTickets changes pct percent of rows source rows of the tickets
// fixture (at least 10), taking the tickets with the highest IDs, so that
// (g)'s edit of the first tickets does not meet them.
func (cb *changesBench) changeTickets(ctx context.Context, conn *pgx.Conn, rows int64, pct float64) error {
	n := max(10, int64(float64(rows)*pct/100))
	del, ins := n/10, n/10
	upd := n - del - ins
	var err error
	step := func(sql string, args ...any) int64 {
		if err != nil {
			return 0
		}
		var tag interface{ RowsAffected() int64 }
		tag, err = conn.Exec(ctx, sql, args...)
		if err != nil {
			return 0
		}
		return tag.RowsAffected()
	}
	cb.updated = step(`UPDATE tickets SET subject = subject || ' (changed)'
WHERE ticket_id IN (SELECT ticket_id FROM tickets ORDER BY ticket_id DESC LIMIT $1)`, upd)
	cb.deleted = step(`DELETE FROM tickets WHERE ticket_id IN (SELECT ticket_id FROM tickets ORDER BY ticket_id DESC OFFSET $1 LIMIT $2)`, upd, del)
	cb.inserted = step(`INSERT INTO tickets (ticket_id, org_id, user_id, subject, status, priority, created_at, updated_at, tags, metadata)
SELECT ticket_id + 1000000000, org_id, user_id, 'copy of ' || subject, status, priority, created_at, updated_at, tags, metadata
FROM tickets ORDER BY ticket_id DESC OFFSET $1 LIMIT $2`, upd, ins)
	if err != nil {
		return fmt.Errorf("change tickets for (m): %w", err)
	}
	log.Printf("(m) changed %d tickets in the source: %d updated, %d deleted, %d inserted", cb.updated+cb.deleted+cb.inserted, cb.updated, cb.deleted, cb.inserted)
	return nil
}

// measureChanges runs (n), (m) and (o) on the verify fixture at url,
// loaded into the dynalite at endpoint; rows is the fixture's source rows.
func measureChanges(ctx context.Context, cfg config, conn *pgx.Conn, bin, mappingFile, url, endpoint, outDir string, rows int64) (*changesBench, error) {
	cb := &changesBench{}
	if err := cb.changeTickets(ctx, conn, rows, cfg.changesPct); err != nil {
		return nil, err
	}
	nJSON, mJSON := filepath.Join(outDir, "n.report.json"), filepath.Join(outDir, "m.report.json")
	n, err := runReported(ctx, bin, "n", "pg2dynamo diff, the changes (m) will write", rows, nJSON, &cb.diff,
		"diff", "--mapping", mappingFile, "--source", url, "--endpoint-url", endpoint, "--report-json", nJSON)
	if err != nil {
		return nil, err
	}
	n.items = cb.diff.Totals.Derived
	cb.n = &n
	want := cb.updated + cb.deleted + cb.inserted
	if d := cb.diff.Summary; d.New+d.Changed+d.Stale != want || cb.diff.Cost == nil {
		return nil, fmt.Errorf("(n) diff: %d new, %d changed, %d stale; want %d differences in all", d.New, d.Changed, d.Stale, want)
	}
	m, err := runReported(ctx, bin, "m", fmt.Sprintf("pg2dynamo migrate --changes-only, %s source rows changed", num(want)), rows, mJSON, &cb.changes,
		"migrate", "--changes-only", "--mapping", mappingFile, "--source", url, "--endpoint-url", endpoint,
		"--rejects", os.DevNull, "--checkpoint", filepath.Join(outDir, "checkpoint.json"), "--concurrency", strconv.Itoa(cfg.conc), "--report-json", mJSON)
	if err != nil {
		return nil, err
	}
	m.items = cb.changes.Totals.Derived
	cb.m = &m
	a, estimate := cb.changes.Applied, cb.diff.Cost.ChangeWriteUnits+cb.diff.Cost.StaleWriteUnits
	switch {
	case a == nil || !cb.changes.OK || !a.ReadBack:
		return nil, fmt.Errorf("(m) migrate --changes-only: not read back as applied (see %s)", mJSON)
	case a.Written+a.Deleted != want || a.WriteUnits != estimate:
		return nil, fmt.Errorf("(m) migrate --changes-only wrote %d items and deleted %d for %d write units; (n) diff found %d differences for %d",
			a.Written, a.Deleted, a.WriteUnits, want, estimate)
	}
	o, err := runVerify(ctx, bin, "o", "pg2dynamo verify of the table (m) left", rows, 0, 0,
		"verify", "--mapping", mappingFile, "--source", url, "--endpoint-url", endpoint)
	if err != nil {
		return nil, err
	}
	cb.o = &o
	return cb, nil
}

// runReported runs pg2dynamo with args through the launcher, checks it
// exits 0, and decodes the JSON report it wrote to report into into.
func runReported(ctx context.Context, bin, key, name string, rows int64, report string, into any, args ...string) (result, error) {
	return runReportedLines(ctx, bin, key, name, rows, report, into, nil, args...)
}

// runReportedLines is runReported with each line of the run's stderr given
// to onLine (nil: none) as it is echoed.
func runReportedLines(ctx context.Context, bin, key, name string, rows int64, report string, into any, onLine func(string), args ...string) (result, error) {
	var lr launchResult
	var err error
	if onLine == nil {
		lr, err = launchLogged(ctx, key, name, append([]string{bin}, args...)...)
	} else {
		log.Printf("(%s) %s", key, name)
		var proc *launched
		if proc, err = startLaunch(ctx, func(line string, _ time.Time) { onLine(line); fmt.Fprintln(os.Stderr, line) }, append([]string{bin}, args...)...); err == nil {
			lr, err = proc.wait()
		}
	}
	if err != nil {
		return result{}, err
	}
	if lr.ExitCode != 0 {
		return result{}, fmt.Errorf("(%s) %s: exit %d\n%.3000s", key, name, lr.ExitCode, lr.Stdout)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		return result{}, err
	}
	if err := json.Unmarshal(b, into); err != nil {
		return result{}, fmt.Errorf("(%s) %s: %w", key, report, err)
	}
	r := result{key: key, name: name, rows: rows, items: rows, wall: lr.Wall, cpu: lr.User + lr.Sys, rssKB: lr.MaxRSSKB, floorKB: lr.LauncherKB}
	log.Printf("(%s) %s, %.1f CPU s per 1M rows, peak RSS %.1f MB", key, r.wall.Round(time.Millisecond), r.perMillion(r.cpu), float64(r.rssKB)/1024)
	return r, nil
}

// wallRatio is (m)'s wall over verify's: the mean of f's (before it) and
// (o)'s (after it).
func (cb *changesBench) wallRatio(f *result) float64 {
	return cb.m.wall.Seconds() / ((f.wall.Seconds() + cb.o.wall.Seconds()) / 2)
}

// target is (m)'s line among the targets.
func (cb *changesBench) target(f *result) string {
	a, r := cb.changes.Applied, cb.wallRatio(f)
	return fmt.Sprintf("migrate --changes-only (m) after %s of %s source rows changed: **%s write units**, diff's estimate (n) %s (equal, checked); "+
		"a full re-put %s; wall %s, **%.2f×** verify's (the mean of (f) %s and (o) %s, the runs before and after it), target ≤ %.1f×: %s",
		num(cb.updated+cb.deleted+cb.inserted), num(cb.m.rows), num(a.WriteUnits), num(cb.diff.Cost.ChangeWriteUnits+cb.diff.Cost.StaleWriteUnits),
		num(a.FullWriteUnits), cb.m.wall.Round(10*time.Millisecond), r, f.wall.Round(10*time.Millisecond), cb.o.wall.Round(10*time.Millisecond),
		targetChangesWall, verdict(r, targetChangesWall, false, "×", 2))
}

// render writes the paragraph on (n) and (m) under verify's table.
func (cb *changesBench) render(p func(format string, args ...any)) {
	a := cb.changes.Applied
	p("\n(n) and (m) follow (f): %s tickets updated (`subject || ' (changed)'`), %s deleted and %s inserted (copies under new IDs), the tickets of the highest IDs. "+
		"(m) put %s items and deleted %s, read each back and ran the access patterns: %s write units as diff prices them, %.0f as dynalite reported them "+
		"(dynalite counts the table alone, not the GSIs); a full re-put of every item would take %s. (o), verify of the table (m) left, passed.\n",
		num(cb.updated), num(cb.deleted), num(cb.inserted), num(a.Written), num(a.Deleted), num(a.WriteUnits), a.ConsumedWriteUnits, num(a.FullWriteUnits))
}
