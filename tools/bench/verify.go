package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// verifyBench is the measurement of verify's memory: the tickets fixture
// at -verify-rows, loaded into a fresh dynalite by migrate with the
// strategies mapping (its access patterns are sampled and checked), then
//
//	(f) verify, the table matching the source;
//	(n), (m) and (o), diff, migrate --changes-only and verify after
//	    -changes-pct of the source rows changed (tools/bench/changes.go), which
//	    bring the table back in line with the source;
//	(g) verify after -verify-differ tickets changed in the source: as many
//	    items differ (exit 4), with the JSON and HTML reports written.
type verifyBench struct {
	fix         *fixture
	mappingFile string
	load        *result // migrate, loading the table
	f, g        *result
	differ      int64 // tickets changed before (g)
	skipped     string
	// changes is (n) and (m), migrate --changes-only (tools/bench/changes.go);
	// nil with -changes-pct 0.
	changes *changesBench
}

// verifyHeadline reads verify's counts from its headline.
var verifyHeadline = regexp.MustCompile(`verify (PASSED|FAILED): table \S+, (\d+) items expected, (\d+) new, (\d+) changed, (\d+) stale`)

// measureVerify runs the verify measurements on a fixture of cfg.verifyRows
// source rows in database cfg.db+"_verify" (dropped before it returns).
func measureVerify(ctx context.Context, cfg config, admin *pgx.Conn, root, bin, outDir string, created map[string]bool) (*verifyBench, error) {
	vb := &verifyBench{mappingFile: "fixtures/mappings/strategies/tickets.yaml"}
	mappingFile := filepath.Join(root, vb.mappingFile)
	var err error
	if vb.fix, err = loadFixture(ctx, admin, cfg.adminURL, cfg.db+"_verify", cfg.verifyRows, created); err != nil {
		return nil, err
	}
	defer func() {
		dropDatabase(admin, vb.fix.db)
		delete(created, vb.fix.db)
	}()
	dyn, err := startDynalite(ctx, root)
	if err != nil {
		return nil, err
	}
	defer dyn.stop()
	load, err := migrate(ctx, bin, "l", "pg2dynamo migrate, strategies mapping (loads the table verified by (f) and (g))", vb.fix.rows, "",
		"--mapping", mappingFile, "--source", vb.fix.url, "--endpoint-url", dyn.endpoint, "--create-table", "--no-verify",
		"--progress", "none", "--rejects", os.DevNull, "--checkpoint", filepath.Join(outDir, "checkpoint.json"),
		"--concurrency", strconv.Itoa(cfg.conc))
	if err != nil {
		return nil, err
	}
	vb.load = &load

	common := []string{"verify", "--mapping", mappingFile, "--source", vb.fix.url, "--endpoint-url", dyn.endpoint}
	f, err := runVerify(ctx, bin, "f", "pg2dynamo verify, strategies mapping, the table matching the source", vb.fix.rows, 0, 0,
		append(common, "--report-json", filepath.Join(outDir, "f.report.json"))...)
	if err != nil {
		return nil, err
	}
	vb.f = &f

	conn, err := pgx.Connect(ctx, vb.fix.url)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	if cfg.changesPct > 0 {
		if vb.changes, err = measureChanges(ctx, cfg, conn, bin, mappingFile, vb.fix.url, dyn.endpoint, outDir, vb.fix.rows); err != nil {
			return nil, err
		}
	}
	tag, err := conn.Exec(ctx, `UPDATE tickets SET subject = subject || ' (edited)'
WHERE ticket_id IN (SELECT ticket_id FROM tickets ORDER BY ticket_id LIMIT $1)`, cfg.verifyDiffer)
	if err != nil {
		return nil, fmt.Errorf("change tickets for (g): %w", err)
	}
	vb.differ = tag.RowsAffected()
	log.Printf("(g) changed %d tickets in the source", vb.differ)
	// The mismatch is certain: the GSI checks that fail are not queried
	// again (--gsi-wait 0).
	g, err := runVerify(ctx, bin, "g", fmt.Sprintf("pg2dynamo verify, %s items differing, JSON and HTML reports written", num(vb.differ)),
		vb.fix.rows, 4, vb.differ, append(common, "--gsi-wait", "0", "--report-json", filepath.Join(outDir, "g.report.json"),
			"--html", filepath.Join(outDir, "g.report.html"))...)
	if err != nil {
		return nil, err
	}
	vb.g = &g
	return vb, nil
}

// runVerify runs pg2dynamo verify through the launcher and checks its exit
// code and the number of differing items its headline gives.
func runVerify(ctx context.Context, bin, key, name string, rows int64, wantExit int, wantDiffer int64, args ...string) (result, error) {
	lr, err := launchLogged(ctx, key, name, append([]string{bin}, args...)...)
	if err != nil {
		return result{}, err
	}
	m := verifyHeadline.FindStringSubmatch(lr.Stdout)
	if lr.ExitCode != wantExit || m == nil {
		return result{}, fmt.Errorf("(%s) %s: exit %d, want %d\n%.3000s", key, name, lr.ExitCode, wantExit, lr.Stdout)
	}
	items, _ := strconv.ParseInt(m[2], 10, 64)
	differ, _ := strconv.ParseInt(m[4], 10, 64)
	if differ != wantDiffer {
		return result{}, fmt.Errorf("(%s) %s: %d items differ, want %d\n%.3000s", key, name, differ, wantDiffer, lr.Stdout)
	}
	r := result{key: key, name: name, rows: rows, items: items, wall: lr.Wall, cpu: lr.User + lr.Sys,
		rssKB: lr.MaxRSSKB, floorKB: lr.LauncherKB}
	log.Printf("(%s) %d items in %s, %.1f CPU s per 1M items, peak RSS %.1f MB", key, r.items,
		r.wall.Round(time.Millisecond), r.perMillion(r.cpu), float64(r.rssKB)/1024)
	return r, nil
}

// render writes the verify section of BENCHMARKS.md.
func (vb *verifyBench) render(p func(format string, args ...any)) {
	p("\n## verify's memory\n\n")
	if vb.f == nil {
		p("Not measured: %s.\n", vb.skipped)
		return
	}
	p("The tickets fixture at %s source rows, mapping `%s` (two GSIs, four access patterns, each run for 20 sampled parameter tuples), loaded by (l) into a fresh dynalite. (g) follows (f) after `UPDATE tickets SET subject = subject || ' (edited)'` on the first %s tickets.\n\n",
		num(vb.fix.rows), vb.mappingFile, num(vb.differ))
	p("| | measurement | source rows | items | wall | CPU s per 1M items | peak RSS |\n|---|---|--:|--:|--:|--:|--:|\n")
	rows := []*result{vb.load, vb.f}
	if cb := vb.changes; cb != nil {
		rows = append(rows, cb.n, cb.m, cb.o)
	}
	for _, x := range append(rows, vb.g) {
		p("| (%s) | %s | %s | %s | %s | %.1f | %.1f MB |\n", x.key, x.name, num(x.rows), num(x.items), x.wall.Round(10*time.Millisecond),
			x.perMillion(x.cpu), float64(x.rssKB)/1024)
	}
	if cb := vb.changes; cb != nil {
		cb.render(p)
	}
	p("\nCPU s and peak RSS are those of the pg2dynamo process alone. The targets are in the list above.\n")
}

func (vb *verifyBench) targets() []string {
	if vb.f == nil {
		return []string{"verify's peak RSS: not measured (" + vb.skipped + ")"}
	}
	at := ""
	if vb.fix.rows < 1_000_000 {
		at = fmt.Sprintf(" (measured at %s source rows, not at the target's 1,000,000: `-verify-rows 1000000`)", num(vb.fix.rows))
	}
	t := []string{
		fmt.Sprintf("verify's peak RSS at %s items, strategies mapping (f): **%.1f MB**, target ≤ %s: %s%s", num(vb.f.items),
			float64(vb.f.rssKB)/1024, rssTargetLabel, verdict(float64(vb.f.rssKB)/1024, rssTargetKB/1024, false, " MB", 1), at),
		fmt.Sprintf("verify's peak RSS with %s differing items (g): **%.1f MB**, target ≤ %s: %s%s", num(vb.differ),
			float64(vb.g.rssKB)/1024, rssTargetLabel, verdict(float64(vb.g.rssKB)/1024, rssTargetKB/1024, false, " MB", 1), at),
	}
	if cb := vb.changes; cb != nil {
		t = append(t, cb.target(vb.f)+at)
	}
	return t
}
