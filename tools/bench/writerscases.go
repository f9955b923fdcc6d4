package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// exitMismatch is pg2dynamo's exit status when its verify finds the table
// differs from the source (app.ExitMismatch).
const exitMismatch = 4

// target is c's line among the targets: auto's items/s over the best
// fixed setting's, by median run.
func (c *writersCase) target(latency time.Duration) string {
	if c.skipped != "" {
		return fmt.Sprintf("%s --concurrency auto vs the best fixed writers (%s): not measured (%s)", c.what, c.key, c.skipped)
	}
	auto, best := medianOf(c.runs, "auto"), bestOf(c.runs)
	ratio, rounds := autoVsFixed(c.runs)
	writers := ""
	if auto.lo > 0 {
		writers = ", writers " + writerRange(auto.lo, auto.hi)
	}
	return fmt.Sprintf("%s --concurrency auto vs the best fixed writers (%s), %s a request: **%.2f×** (median of the rounds' ratios: %s; the median runs %.0f items/s%s against %s's %.0f), target ≥ %.1f×: %s",
		c.what, c.key, latency, ratio, rounds, auto.perSecond(), writers, best.setting, best.perSecond(), targetAutoVsFixed,
		verdict(ratio, targetAutoVsFixed, true, "", 2))
}

// render writes c's paragraph and table in the (j) section.
func (c *writersCase) render(p func(format string, args ...any)) {
	if c.skipped != "" {
		p("\n(%s) `pg2dynamo %s`: not measured (%s).\n", c.key, c.what, c.skipped)
		return
	}
	best := bestOf(c.runs)
	p("\n(%s) %s; the ratios are to the best fixed setting (%s writers).\n\n", c.key, c.about, best.setting)
	p("| `--concurrency` | wall | items | items/s | vs the best fixed | writers | walls, in run order |\n|---|--:|--:|--:|--:|--:|---|\n")
	for _, s := range writerSettings() {
		m := medianOf(c.runs, s)
		writers := s
		if s == "auto" {
			writers = "not reported"
			if m.lo > 0 {
				writers = fmt.Sprintf("%s (%d halvings)", writerRange(m.lo, m.hi), m.halvings)
			}
		}
		var walls []string
		for _, r := range c.runs[s] {
			walls = append(walls, r.wall.Round(10*time.Millisecond).String())
		}
		p("| %s | %s | %s | %.0f | %.2f× | %s | %s |\n", s, m.wall.Round(10*time.Millisecond), num(m.items), m.perSecond(),
			m.perSecond()/best.perSecond(), writers, strings.Join(walls, ", "))
	}
	_, rounds := autoVsFixed(c.runs)
	p("\nAuto over the best fixed setting of each round (the headline is their median): %s.\n", rounds)
}

// measurePrune is (j‴): migrate --prune with each setting. Its source is a
// tickets fixture of a twentieth of -writers-rows whose items the table holds
// (written into dynalite directly, once) and whose rows are then all gone
// (TRUNCATE), so that each run loads nothing, finds every item stale and
// deletes it, a conditional DeleteItem each, which the proxy answers
// itself (AnswerDeletes): the table stays full for the next run.
func measurePrune(ctx context.Context, cfg config, admin *pgx.Conn, bin, outDir, mappingFile string, created map[string]bool,
	dynalite, endpoint string, latency time.Duration) (*writersCase, error) {
	c := &writersCase{key: "j‴", what: "migrate --prune"}
	fix, err := loadFixture(ctx, admin, cfg.adminURL, cfg.db+"_prune", max(1, cfg.writersRows/20), created)
	if err != nil {
		return nil, err
	}
	defer func() {
		dropDatabase(admin, fix.db)
		delete(created, fix.db)
	}()
	common := []string{"--mapping", mappingFile, "--source", fix.url, "--progress", "none", "--rejects", os.DevNull,
		"--checkpoint", filepath.Join(outDir, "prune-checkpoint.json")}
	loaded, err := migrate(ctx, bin, "j‴", "the prune fixture's items, into dynalite directly", fix.rows, "",
		append(common, "--endpoint-url", dynalite, "--no-verify", "--concurrency", "8")...)
	if err != nil {
		return nil, err
	}
	conn, err := pgx.Connect(ctx, fix.url)
	if err != nil {
		return nil, err
	}
	var tables []string
	for _, t := range slices.Sorted(maps.Keys(fix.counts)) {
		tables = append(tables, pgx.Identifier{t}.Sanitize())
	}
	_, err = conn.Exec(ctx, "TRUNCATE "+strings.Join(tables, ", "))
	conn.Close(context.Background())
	if err != nil {
		return nil, err
	}
	c.about = fmt.Sprintf("`pg2dynamo migrate --prune` through the same proxy, which answers DeleteItem itself too (`AnswerDeletes`: the item stays). "+
		"The table holds the %s items of a tickets fixture of %s source rows (a twentieth of (j)'s, written into dynalite directly, once); the source is that fixture "+
		"with every row gone (TRUNCATE), so that each run loads nothing, finds every item stale and deletes it, a conditional DeleteItem each (`pipeline.Writes`). "+
		"The verify after the prune finds them all still there (exit 4, expected); its JSON report is checked: every item deleted, every item still stale. "+
		"Items/s are the items deleted over the prune's wall, from its first line (`prune: comparing …`) to its last (`prune: deleted …`), the comparison's Scan and source read included",
		num(loaded.items), num(fix.rows))
	c.runs, err = rotate(cfg.repeat, func(s, nth string) (writersRun, error) {
		name := fmt.Sprintf("migrate --prune --concurrency %s, %s a request %s", s, latency, nth)
		return pruneMigrate(ctx, bin, name, append(common, "--endpoint-url", endpoint, "--concurrency", s), s, outDir, fix.rows, loaded.items)
	})
	return c, err
}

// pruneMigrate runs one (j‴), migrate --prune with args, timed by the
// prune's first and last lines; its items are those its JSON report says
// it deleted, which must be want, every item of the table.
func pruneMigrate(ctx context.Context, bin, name string, args []string, setting, outDir string, rows, want int64) (writersRun, error) {
	report := filepath.Join(outDir, "prune-writers.json")
	if err := os.Remove(report); err != nil && !os.IsNotExist(err) {
		return writersRun{}, err
	}
	r := writersRun{setting: setting, result: result{key: "j‴", name: name, rows: rows}}
	var began, ended time.Time
	onLine := func(line string, at time.Time) { // one goroutine; read after wait
		switch {
		case strings.HasPrefix(line, "prune: comparing"):
			began = at
		case strings.HasPrefix(line, "prune: deleted"):
			ended = at
		}
		r.readAuto(line)
		fmt.Fprintln(os.Stderr, line)
	}
	log.Printf("(j‴) %s", name)
	proc, err := startLaunch(ctx, onLine, append([]string{bin, "migrate", "--prune", "--report-json", report}, args...)...)
	if err != nil {
		return writersRun{}, err
	}
	lr, err := proc.wait()
	if err != nil {
		return writersRun{}, err
	}
	if lr.ExitCode != exitMismatch || began.IsZero() || ended.IsZero() {
		return writersRun{}, fmt.Errorf("(j‴) %s: exit %d, want %d (the verify finding the items the proxy kept); prune began %v, ended %v\n%.3000s",
			name, lr.ExitCode, exitMismatch, !began.IsZero(), !ended.IsZero(), lr.Stdout)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		return writersRun{}, err
	}
	var out changesJSON
	if err := json.Unmarshal(b, &out); err != nil {
		return writersRun{}, fmt.Errorf("(j‴) %s: %w", report, err)
	}
	if out.Applied == nil || out.Applied.Deleted != want || out.Summary.Stale != want {
		return writersRun{}, fmt.Errorf("(j‴) %s: deleted %+v, %d stale after; want all %d items deleted and still there", name, out.Applied, out.Summary.Stale, want)
	}
	r.items, r.wall, r.cpu, r.rssKB, r.floorKB = out.Applied.Deleted, ended.Sub(began), lr.User+lr.Sys, lr.MaxRSSKB, lr.LauncherKB
	note := ""
	if setting == "auto" {
		note = fmt.Sprintf(", writers %s, %d halvings", writerRange(r.lo, r.hi), r.halvings)
	}
	log.Printf("(j‴) %d items deleted in %s, %.0f items/s (the whole run %s)%s", r.items, r.wall.Round(time.Millisecond), r.perSecond(),
		lr.Wall.Round(time.Millisecond), note)
	return r, nil
}

// measureFollowWriters is (j⁗): migrate --follow --resume with each
// setting, applying a backlog at saturation. A first follow
// (--until-caught-up) loads fix (its tables made REPLICA IDENTITY FULL)
// and creates the slot; then, before each run, -writers-rows row changes
// of (h)'s mix are committed while no follow runs (steadyTx: the deletes
// take the tickets earlier backlogs inserted, so that every backlog
// changes about as many rows), and the run is timed from "following
// slot" to the status line counting them all, then stopped (SIGINT). A
// backlog that takes several seconds to apply measures the writers, not
// a process's start. It changes fix.
func measureFollowWriters(ctx context.Context, cfg config, admin *pgx.Conn, bin, outDir, mappingFile string, fix *fixture,
	endpoint string, latency time.Duration) (*writersCase, error) {
	c := &writersCase{key: "j⁗", what: "migrate --follow"}
	var walLevel string
	if err := admin.QueryRow(ctx, "SHOW wal_level").Scan(&walLevel); err != nil {
		return nil, err
	}
	if walLevel != "logical" {
		c.skipped = fmt.Sprintf("the server's wal_level is %s, not logical", walLevel)
		log.Printf("(j⁗) skipped: %s", c.skipped)
		return c, nil
	}
	fc := followConfig{changes: max(1, cfg.writersRows), txSize: cfg.follow.txSize}
	m, err := mapping.Load(mappingFile)
	if err != nil {
		return nil, err
	}
	conn, w, err := followedFixture(ctx, fix, m)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	slot := fix.db + "_j"
	dropSlot(admin, slot) // an earlier run's, interrupted
	defer dropSlot(admin, slot)
	common := []string{"--mapping", mappingFile, "--source", fix.url, "--endpoint-url", endpoint, "--progress", "none", "--rejects", os.DevNull,
		"--checkpoint", filepath.Join(outDir, "checkpoint-j-follow.json"), "--follow", "--slot", slot, "--publication", slot}
	if _, err := migrate(ctx, bin, "j⁗", "the full load and the slot (--follow --until-caught-up)", fix.rows, "",
		append(common, "--until-caught-up", "--concurrency", "64")...); err != nil {
		return nil, err
	}
	c.about = fmt.Sprintf("`pg2dynamo migrate --follow --resume` on (j)'s fixture (every table `REPLICA IDENTITY FULL`) through the same proxy, applying a backlog: "+
		"a first follow (`--until-caught-up`) loaded the table and created the slot; before each run, %s row changes of (h)'s mix (80%% updates, 10%% inserts, 10%% deletes of tickets, the deletes taking the tickets earlier backlogs inserted) "+
		"were committed in transactions of up to %s while no follow ran, "+
		"and the run (`--audit off`) is timed from its `following slot` line to the status line (`--progress-interval 1ms`) counting them all, then stopped (SIGINT), its slot confirmed past them. "+
		"Items/s are the items put and deleted over that wall (the walsender's decoding included)",
		num(int64(fc.changes)), num(int64(fc.txSize)))
	c.runs, err = rotate(cfg.repeat, func(s, nth string) (writersRun, error) {
		committed, before, err := backlog(ctx, conn, w, fc)
		if err != nil {
			return writersRun{}, err
		}
		name := fmt.Sprintf("migrate --follow --resume --concurrency %s, a backlog of %s row changes, %s a request %s", s, num(committed), latency, nth)
		args := append(slices.Clone(common), "--resume", "--audit", "off", "--progress-interval", "1ms", "--concurrency", s)
		r, err := followRun(ctx, bin, name, args, s, committed)
		if err != nil {
			return writersRun{}, err
		}
		// A slot short of the backlog would have the next run apply part
		// of it again, counted as its own.
		var confirmed bool
		if err := admin.QueryRow(ctx, "SELECT confirmed_flush_lsn > $1::pg_lsn FROM pg_replication_slots WHERE slot_name = $2", before, slot).Scan(&confirmed); err != nil {
			return writersRun{}, err
		}
		if !confirmed {
			return writersRun{}, fmt.Errorf("(j⁗) %s: stopped, its slot %s has not confirmed the backlog's last transaction", name, slot)
		}
		return r, nil
	})
	return c, err
}

// backlog commits fc.changes row changes of (h)'s mix (steadyTx) in transactions of
// fc.txSize and returns the rows they changed and the WAL position before
// the last transaction: a slot confirmed past it has the backlog applied.
func backlog(ctx context.Context, conn *pgx.Conn, w *workload, fc followConfig) (int64, string, error) {
	var committed int64
	var before string
	for left := fc.changes; left > 0; {
		n := min(left, fc.txSize)
		if n == left {
			if err := conn.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&before); err != nil {
				return 0, "", err
			}
		}
		got, err := w.steadyTx(ctx, conn, n)
		if err != nil {
			return 0, "", fmt.Errorf("(j⁗) backlog: %w", err)
		}
		committed += got
		left -= n
	}
	return committed, before, nil
}

// followRun runs one (j⁗), migrate --follow with args, timed from its
// "following slot" to the status line counting want changes; then it is
// stopped.
func followRun(ctx context.Context, bin, name string, args []string, setting string, want int64) (writersRun, error) {
	log.Printf("(j⁗) %s", name)
	feed := newStatusFeed("j⁗")
	proc, err := startLaunch(ctx, feed.line, append([]string{bin, "migrate"}, args...)...)
	if err != nil {
		return writersRun{}, err
	}
	start, err := feed.waitFollowing(ctx, proc.drained)
	var last followStatus
	if err == nil {
		last, err = feed.waitStatus(ctx, proc.drained, max(5*time.Minute, time.Duration(want)*10*time.Millisecond),
			func(st followStatus) bool { return st.changes >= want })
	}
	_ = proc.interrupt()
	lr, werr := proc.wait()
	switch {
	case err != nil:
		return writersRun{}, fmt.Errorf("(j⁗) %s: %w", name, err)
	case werr != nil:
		return writersRun{}, werr
	case lr.ExitCode != 0:
		return writersRun{}, fmt.Errorf("(j⁗) %s: exit %d\n%.3000s", name, lr.ExitCode, lr.Stdout)
	}
	r := writersRun{setting: setting, result: result{key: "j⁗", name: name, rows: want, items: last.puts + last.deletes,
		wall: last.at.Sub(start), cpu: lr.User + lr.Sys, rssKB: lr.MaxRSSKB, floorKB: lr.LauncherKB}}
	feed.mu.Lock()
	r.readAuto(feed.auto)
	feed.mu.Unlock()
	log.Printf("(j⁗) %d changes, %d items put and %d deleted in %s: %.0f items/s", last.changes, last.puts, last.deletes,
		r.wall.Round(time.Millisecond), r.perSecond())
	return r, nil
}
