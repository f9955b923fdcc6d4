package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"
	"golang.org/x/time/rate"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// Targets of the follow clause of the benchmark issue (14).
const (
	targetFollowRatio = 0.8         // (h)'s items/s at saturation over (c)'s
	targetLagMedian   = time.Second // median lag under the steady load
	targetRSSGrowth   = 1.2         // the lag phase's peak RSS over the full load's
)

// followBench is (h): one pg2dynamo migrate --follow process on the
// fixture of (a) to (d) (every table REPLICA IDENTITY FULL), a fresh
// dynalite, in three phases:
//
//  1. the full load, until the process prints "following slot";
//  2. saturation: the process is stopped (SIGSTOP) while a burst of
//     row changes is committed, in large transactions of set-based
//     statements, then continued (SIGCONT): the time until its status
//     line counts every change of the burst is the time to apply a
//     backlog, PostgreSQL's commit time apart;
//  3. lag: a steady load of changes (paced with golang.org/x/time/rate),
//     one of them every 100 ms an update of a probe ticket whose item is
//     read back (GetItem every pollEvery) until it shows the update.
//
// Its resident set is sampled throughout (/proc/PID/status).
type followBench struct {
	skipped string
	rows    int64 // source rows of the fixture
	conc    int
	txSize  int // changes per burst transaction
	// The full load: its items (the summary's total) and its time, from
	// the start to "following slot".
	loadItems int64
	loadWall  time.Duration
	sat       saturation
	floor     mixFloor // (h°)
	lag       lagPhase
	mem       followMemory
	exit      launchResult
	cpu       time.Duration // the process's CPU time, all phases
}

// saturation is phase 2.
type saturation struct {
	txs                    int
	committed              int64         // row changes committed (rows affected)
	commit                 time.Duration // PostgreSQL's time to commit them, the follow stopped
	wall                   time.Duration // SIGCONT to the status line counting them all
	changes, puts, deletes int64         // what the follow counted over wall
	cpu                    procCPU       // CPU over wall, by process
	overlapped             bool          // the follow was continued before the burst was all committed
	perWindow              []int64       // changes between consecutive status lines
}

func (s saturation) items() int64 { return s.puts + s.deletes }

// procCPU is CPU time (user + system) by process over an interval;
// postgres sums the backends of the bench database (the walsender and
// the follow's reading session among them).
type procCPU struct{ pg2dynamo, dynalite, postgres time.Duration }

// lagPhase is phase 3.
type lagPhase struct {
	rate       int // changes/s asked for
	duration   time.Duration
	txs        int
	committed  int64         // row changes committed
	wall       time.Duration // from the first transaction to the last commit
	probes     []time.Duration
	lost       int             // probes never seen within the drain timeout
	status     []time.Duration // the status line's lag of each window applied
	roundTrips []time.Duration // each transaction's send to commit acknowledged
	drain      time.Duration   // last commit to the status line counting every change
}

// followMemory is the process's resident set (KB) at the phases' ends.
type followMemory struct {
	loadPeak    int64 // VmHWM when "following slot" came: the full load's peak
	followStart int64 // VmRSS then
	satPeak     int64 // sampled VmRSS, phase 2
	lagPeak     int64 // phase 3: VmHWM reset before it (clear_refs 5), else sampled
	lagPeakHWM  bool  // lagPeak is the kernel's high-water mark, not a sample
	lagStart    int64
	lagEnd      int64
	samples     int
}

// followConfig sizes (h).
type followConfig struct {
	changes  int           // the burst (0: no (h))
	txSize   int           // changes per burst transaction
	rate     int           // changes/s of the lag phase
	duration time.Duration // of the lag phase
}

// lagTxChanges is the number of row changes of each lag-phase
// transaction: 8 updates, an insert and a delete.
const lagTxChanges = 10

// probeEvery is the lag probe's period; pollEvery how often its item is
// read back.
const (
	probeEvery = 100 * time.Millisecond
	pollEvery  = 10 * time.Millisecond
)

// measureFollow runs (h) on fix, whose tables it alters (REPLICA
// IDENTITY FULL) and changes. m is the mapping of (c).
func measureFollow(ctx context.Context, cfg config, admin *pgx.Conn, root, bin, outDir string, m *mapping.Mapping, mappingFile string, fix *fixture) (*followBench, error) {
	fb := &followBench{rows: fix.rows, conc: cfg.conc, txSize: cfg.follow.txSize}
	var walLevel string
	if err := admin.QueryRow(ctx, "SHOW wal_level").Scan(&walLevel); err != nil {
		return nil, err
	}
	if walLevel != "logical" {
		fb.skipped = fmt.Sprintf("the server's wal_level is %s, not logical (-pg: a server with wal_level=logical)", walLevel)
		return fb, nil
	}
	conn, w, err := followedFixture(ctx, fix, m)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	slot := fix.db + "_h"
	dropSlot(admin, slot) // an earlier run's, interrupted
	defer dropSlot(admin, slot)
	dyn, err := startDynalite(ctx, root)
	if err != nil {
		return nil, err
	}
	defer dyn.stop()
	client, err := load.NewClient(ctx, load.ClientConfig{EndpointURL: dyn.endpoint})
	if err != nil {
		return nil, err
	}

	feed := newStatusFeed("h")
	log.Printf("(h) pg2dynamo migrate --follow, %d writers: the full load, then %s changes at saturation, then %d changes/s for %s",
		cfg.conc, num(int64(cfg.follow.changes)), cfg.follow.rate, cfg.follow.duration)
	start := time.Now()
	// --progress-interval 1ms: a status line after every window applied
	// (and every 100 ms idle), so that the end of the burst is seen to
	// the window.
	proc, err := startLaunch(ctx, feed.line, bin, "migrate", "--mapping", mappingFile, "--source", fix.url, "--endpoint-url", dyn.endpoint,
		"--create-table", "--progress", "none", "--progress-interval", "1ms", "--rejects", os.DevNull,
		"--checkpoint", filepath.Join(outDir, "checkpoint-h.json"), "--concurrency", strconv.Itoa(cfg.conc),
		"--follow", "--slot", slot, "--publication", slot)
	if err != nil {
		return nil, err
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

	// Phase 1: the full load.
	stopLog := logEvery(time.Minute, func(elapsed time.Duration) { log.Printf("  (h) full load running (%s)", elapsed.Round(time.Second)) })
	following, err := feed.waitFollowing(ctx, proc.drained)
	stopLog()
	if err != nil {
		return nil, err
	}
	fb.loadWall = following.Sub(start)
	fb.mem.loadPeak, fb.mem.followStart = procStatusKB(proc.pid, "VmHWM:"), procStatusKB(proc.pid, "VmRSS:")
	base, err := feed.waitStatus(ctx, proc.drained, 30*time.Second, func(followStatus) bool { return true })
	if err != nil {
		return nil, err
	}
	log.Printf("(h) full load done in %s; peak RSS %.1f MB, now %.1f MB", fb.loadWall.Round(time.Millisecond),
		float64(fb.mem.loadPeak)/1024, float64(fb.mem.followStart)/1024)

	// Phase 2: saturation.
	mem.setPhase(1)
	if err := fb.saturate(ctx, cfg.follow, admin, conn, w, proc, feed, base, dyn.cmd.Process.Pid, fix.db); err != nil {
		return nil, err
	}
	fb.mem.satPeak = mem.peak(1)
	if fb.floor, err = measureMixFloor(ctx, client, cfg.conc, dyn.cmd.Process.Pid, fix.url, m, w); err != nil {
		return nil, err
	}

	// Phase 3: lag under a steady load.
	hwmReset := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", proc.pid), []byte("5"), 0) == nil
	fb.mem.lagStart = procStatusKB(proc.pid, "VmRSS:")
	mem.setPhase(2)
	if err := fb.measureLag(ctx, cfg.follow, conn, client, m.Table.Name, w, proc, feed); err != nil {
		return nil, err
	}
	fb.mem.lagEnd = procStatusKB(proc.pid, "VmRSS:")
	fb.mem.lagPeak = mem.peak(2)
	if hwm := procStatusKB(proc.pid, "VmHWM:"); hwmReset && hwm > 0 {
		fb.mem.lagPeak, fb.mem.lagPeakHWM = max(hwm, fb.mem.lagPeak), true
	}
	mem.stop()
	fb.mem.samples = mem.count()

	stopped = true
	if err := proc.interrupt(); err != nil {
		return nil, err
	}
	if fb.exit, err = proc.wait(); err != nil {
		return nil, err
	}
	if fb.exit.ExitCode != 0 {
		return nil, fmt.Errorf("(h) pg2dynamo migrate --follow: exit %d\n%s", fb.exit.ExitCode, fb.exit.Stdout)
	}
	fb.cpu = fb.exit.User + fb.exit.Sys
	if fb.loadItems, _, err = summaryTotal(fb.exit.Stdout); err != nil {
		return nil, fmt.Errorf("(h): %w\n%s", err, fb.exit.Stdout)
	}
	log.Printf("(h) done: peak RSS %.1f MB (the full load %.1f MB, the lag phase %.1f MB)", float64(fb.exit.MaxRSSKB)/1024,
		float64(fb.mem.loadPeak)/1024, float64(fb.mem.lagPeak)/1024)
	return fb, nil
}

// saturate is phase 2: the burst committed while the follow is stopped,
// then the time it takes to apply it.
func (fb *followBench) saturate(ctx context.Context, fc followConfig, admin, conn *pgx.Conn, w *workload, proc *launched, feed *statusFeed,
	base followStatus, dynPID int, db string) error {
	s := &fb.sat
	if err := syscall.Kill(proc.pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("stop the follow: %w", err)
	}
	stoppedAt := time.Now()
	var t0 time.Time // when the follow was continued
	var cpu0 procCPU
	var pgPIDs []int
	cont := func() error {
		pgPIDs = backendPIDs(ctx, admin, db)
		cpu0 = readCPU(proc.pid, dynPID, pgPIDs)
		t0 = time.Now()
		return syscall.Kill(proc.pid, syscall.SIGCONT)
	}
	// The walsender drops a client silent for wal_sender_timeout (60 s by
	// default): past 40 s the follow is continued, the burst goes on.
	for left := int64(fc.changes); left > 0; {
		n := min(left, int64(fc.txSize))
		got, err := w.burstTx(ctx, conn, int(n))
		if err != nil {
			if t0.IsZero() {
				_ = cont()
			}
			return fmt.Errorf("(h) burst: %w", err)
		}
		s.committed += got
		s.txs++
		left -= n
		if t0.IsZero() && time.Since(stoppedAt) > 40*time.Second && left > 0 {
			s.overlapped = true
			if err := cont(); err != nil {
				return err
			}
			log.Printf("(h) the burst has taken over 40 s: the follow continues while it goes on")
		}
	}
	s.commit = time.Since(stoppedAt)
	if t0.IsZero() {
		if err := cont(); err != nil {
			return err
		}
	}
	log.Printf("(h) %s changes committed in %d transactions in %s, the follow stopped; continued", num(s.committed), s.txs,
		s.commit.Round(time.Millisecond))
	want := base.changes + s.committed
	last, err := feed.waitStatus(ctx, proc.drained, max(5*time.Minute, time.Duration(s.committed)*10*time.Millisecond),
		func(st followStatus) bool { return st.changes >= want })
	if err != nil {
		return fmt.Errorf("(h) saturation: %w", err)
	}
	cpu1 := readCPU(proc.pid, dynPID, pgPIDs)
	s.wall = last.at.Sub(t0)
	s.changes, s.puts, s.deletes = last.changes-base.changes, last.puts-base.puts, last.deletes-base.deletes
	s.cpu = procCPU{cpu1.pg2dynamo - cpu0.pg2dynamo, cpu1.dynalite - cpu0.dynalite, cpu1.postgres - cpu0.postgres}
	prev := base.changes
	for _, st := range feed.since(t0) {
		if st.changes > prev {
			s.perWindow = append(s.perWindow, st.changes-prev)
			prev = st.changes
		}
	}
	log.Printf("(h) saturation: %s changes, %s items put and %s deleted in %s: %.0f changes/s, %.0f items/s", num(s.changes), num(s.puts),
		num(s.deletes), s.wall.Round(time.Millisecond), float64(s.changes)/s.wall.Seconds(), float64(s.items())/s.wall.Seconds())
	return nil
}

// measureLag is phase 3.
func (fb *followBench) measureLag(ctx context.Context, fc followConfig, conn *pgx.Conn, client *dynamodb.Client, table string,
	w *workload, proc *launched, feed *statusFeed) error {
	l := &fb.lag
	l.rate, l.duration = fc.rate, fc.duration
	base, err := feed.waitStatus(ctx, proc.drained, 30*time.Second, func(followStatus) bool { return true })
	if err != nil {
		return err
	}
	commits := newProbeLog()
	pctx, stopPoll := context.WithCancel(ctx)
	pollDone := make(chan error, 1)
	go func() { pollDone <- pollProbe(pctx, client, table, w, commits) }()

	txPerSec := float64(fc.rate) / lagTxChanges
	// A burst of 100 ms of transactions: a transaction held up on a busy
	// machine is made up for, so that the rate holds on average.
	lim := rate.NewLimiter(rate.Limit(txPerSec), max(1, int(txPerSec/10)))
	probeN := max(1, int(txPerSec*probeEvery.Seconds()+0.5)) // every probeN-th transaction carries the probe
	start := time.Now()
	for time.Since(start) < fc.duration {
		if err := lim.Wait(ctx); err != nil {
			stopPoll()
			return err
		}
		probe := 0
		if l.txs%probeN == 0 {
			probe = commits.next()
		}
		sent := time.Now()
		got, err := w.lagTx(ctx, conn, probe)
		if err != nil {
			stopPoll()
			return fmt.Errorf("(h) lag phase: %w", err)
		}
		done := time.Now()
		if probe > 0 {
			commits.committed(probe, done)
		}
		l.roundTrips = append(l.roundTrips, done.Sub(sent))
		l.committed += got
		l.txs++
	}
	l.wall = time.Since(start)
	lastCommit := time.Now()
	want := base.changes + l.committed
	last, err := feed.waitStatus(ctx, proc.drained, 2*time.Minute, func(st followStatus) bool { return st.changes >= want })
	if err != nil {
		stopPoll()
		return fmt.Errorf("(h) lag phase: %w", err)
	}
	l.drain = last.at.Sub(lastCommit)
	// The last probe's item may show a little after the status line.
	deadline := time.Now().Add(10 * time.Second)
	for commits.pending() > 0 && time.Now().Before(deadline) {
		time.Sleep(pollEvery)
	}
	stopPoll()
	if err := <-pollDone; err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("(h) lag probe: %w", err)
	}
	l.probes, l.lost = commits.lags()
	prev := base.changes
	for _, st := range feed.since(start) {
		if st.changes > prev {
			l.status = append(l.status, st.lag)
			prev = st.changes
		}
	}
	log.Printf("(h) lag: %s changes in %d transactions in %s (%.0f changes/s); probe lag median %s, p95 %s (%d probes, %d not seen)",
		num(l.committed), l.txs, l.wall.Round(time.Millisecond), float64(l.committed)/l.wall.Seconds(),
		quantile(l.probes, 0.5).Round(time.Millisecond), quantile(l.probes, 0.95).Round(time.Millisecond), len(l.probes), l.lost)
	return nil
}

// workload generates the row changes of (h) on the tickets fixture: updates
// and deletes of existing tickets taken in a shuffled order (each ticket
// once until all are used), inserts of copies of random tickets under new
// IDs. One ticket, the probe, is only ever updated by the lag probe.
type workload struct {
	rng      *rand.Rand
	ids      []int64 // shuffled; ids[0] is the probe
	next     int
	maxID    int64
	newID    int64
	probe    int64
	probeKey map[string]types.AttributeValue
	// burstUpdated and burstInserted are the tickets the saturation
	// burst updated and inserted (some inserts may have found their
	// source gone), for (h°).
	burstUpdated, burstInserted []int64
	// steadyInserted are the tickets steadyTx inserted and has not
	// deleted yet, oldest first.
	steadyInserted []int64
}

func newWorkload(ctx context.Context, conn *pgx.Conn, m *mapping.Mapping) (*workload, error) {
	w := &workload{rng: rand.New(rand.NewPCG(14, 8))}
	if err := conn.QueryRow(ctx, "SELECT coalesce(max(ticket_id), 0) FROM tickets").Scan(&w.maxID); err != nil {
		return nil, err
	}
	if w.maxID < 2 {
		return nil, errors.New("(h): the fixture has fewer than 2 tickets")
	}
	w.newID = w.maxID
	w.ids = make([]int64, w.maxID)
	for i := range w.ids {
		w.ids[i] = int64(i) + 1
	}
	w.rng.Shuffle(len(w.ids), func(i, j int) { w.ids[i], w.ids[j] = w.ids[j], w.ids[i] })
	if err := conn.QueryRow(ctx, "SELECT ticket_id FROM tickets WHERE ticket_id >= $1 ORDER BY ticket_id LIMIT 1", w.ids[0]).Scan(&w.probe); err != nil {
		return nil, fmt.Errorf("(h) probe ticket: %w", err)
	}
	w.ids[0], w.next = w.probe, 1
	var err error
	if w.probeKey, err = ticketKey(ctx, conn.Config().ConnString(), m, w.probe); err != nil {
		return nil, fmt.Errorf("(h) probe ticket %d: %w", w.probe, err)
	}
	return w, nil
}

// ticketKey returns the primary key of ticket id's item, rendered by
// migrate's own code path (ticketItems).
func ticketKey(ctx context.Context, srcURL string, m *mapping.Mapping, id int64) (map[string]types.AttributeValue, error) {
	items, err := ticketItems(ctx, srcURL, m, []int64{id})
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, errors.New("not found")
	}
	pk, sk := m.Table.PartitionKey, m.Table.SortKey
	return map[string]types.AttributeValue{pk: items[0][pk], sk: items[0][sk]}, nil
}

// take returns n ticket IDs not taken before (cycling once all are).
func (w *workload) take(n int) []int64 {
	out := make([]int64, 0, n)
	for len(out) < n {
		if w.next >= len(w.ids) {
			w.next = 1
		}
		if id := w.ids[w.next]; id != w.probe {
			out = append(out, id)
		}
		w.next++
	}
	return out
}

// sources returns n random IDs of existing tickets (some may be gone) and
// the first of n new IDs.
func (w *workload) sources(n int) ([]int64, int64) {
	src := make([]int64, n)
	for i := range src {
		src[i] = w.rng.Int64N(w.maxID) + 1
	}
	first := w.newID + 1
	w.newID += int64(n)
	return src, first
}

const (
	updateTickets = `UPDATE tickets SET priority = priority % 4 + 1, updated_at = now(),
  status = CASE status WHEN 'open' THEN 'pending'::ticket_status WHEN 'pending' THEN 'closed' ELSE 'open' END
WHERE ticket_id = ANY($1)`
	deleteTickets = `DELETE FROM tickets WHERE ticket_id = ANY($1)`
	insertTickets = `INSERT INTO tickets (ticket_id, org_id, user_id, subject, status, priority, created_at, updated_at, tags, metadata)
SELECT $2::bigint + u.ord - 1, t.org_id, t.user_id, t.subject, t.status, t.priority, now(), NULL, t.tags, t.metadata
FROM unnest($1::bigint[]) WITH ORDINALITY AS u (id, ord) JOIN tickets t ON t.ticket_id = u.id`
	updateProbe = `UPDATE tickets SET subject = $2 WHERE ticket_id = $1`
)

// changeMix splits n changes: 80% updates, 10% inserts, 10% deletes.
func changeMix(n int) (updates, inserts, deletes int) {
	inserts, deletes = n/10, n/10
	return n - inserts - deletes, inserts, deletes
}

// burstTx commits one transaction of about n changes, three set-based
// statements, and returns the rows they changed.
func (w *workload) burstTx(ctx context.Context, conn *pgx.Conn, n int) (int64, error) {
	nu, ni, nd := changeMix(n)
	src, first := w.sources(ni)
	updated := w.take(nu)
	w.burstUpdated = append(w.burstUpdated, updated...)
	for i := range int64(ni) {
		w.burstInserted = append(w.burstInserted, first+i)
	}
	return sendTx(ctx, conn, queueMix(&pgx.Batch{}, updated, src, first, w.take(nd)))
}

// steadyTx is burstTx on a population that stays whole, for backlogs
// committed again and again ((j⁗)): its deletes take the tickets earlier
// steadyTx calls inserted (existing tickets only until it has inserted
// enough), so its updates keep finding their tickets.
func (w *workload) steadyTx(ctx context.Context, conn *pgx.Conn, n int) (int64, error) {
	nu, ni, nd := changeMix(n)
	src, first := w.sources(ni)
	var deleted []int64
	if len(w.steadyInserted) >= nd {
		deleted, w.steadyInserted = w.steadyInserted[:nd:nd], w.steadyInserted[nd:]
	} else {
		deleted = w.take(nd)
	}
	for i := range int64(ni) {
		w.steadyInserted = append(w.steadyInserted, first+i)
	}
	return sendTx(ctx, conn, queueMix(&pgx.Batch{}, w.take(nu), src, first, deleted))
}

// lagTx commits one lag-phase transaction of lagTxChanges changes; with
// probe > 0, one of its updates sets the probe ticket's subject to
// probeSubject(probe).
func (w *workload) lagTx(ctx context.Context, conn *pgx.Conn, probe int) (int64, error) {
	nu, ni, nd := changeMix(lagTxChanges)
	b := &pgx.Batch{}
	if probe > 0 {
		nu--
		b.Queue(updateProbe, w.probe, probeSubject(probe))
	}
	src, first := w.sources(ni)
	return sendTx(ctx, conn, queueMix(b, w.take(nu), src, first, w.take(nd)))
}

// queueMix queues the three statements of a transaction of the mix: the
// updates of updated, copies of src under IDs from first, the deletes of
// deleted.
func queueMix(b *pgx.Batch, updated, src []int64, first int64, deleted []int64) *pgx.Batch {
	b.Queue(updateTickets, updated)
	b.Queue(insertTickets, src, first)
	b.Queue(deleteTickets, deleted)
	return b
}

// sendTx runs b's statements as one transaction (a batch without
// transaction statements is one implicit transaction, committed at its
// Sync) in one round trip.
func sendTx(ctx context.Context, conn *pgx.Conn, b *pgx.Batch) (int64, error) {
	br := conn.SendBatch(ctx, b)
	var rows int64
	for range b.Len() {
		tag, err := br.Exec()
		if err != nil {
			br.Close()
			return rows, err
		}
		rows += tag.RowsAffected()
	}
	return rows, br.Close()
}

func probeSubject(n int) string { return "bench probe " + strconv.Itoa(n) }

// probeLog records when each probe update committed and when its item
// first showed it (or a later probe's: the probe ticket's subject only
// moves forward).
type probeLog struct {
	mu     sync.Mutex
	n      int
	commit map[int]time.Time
	seen   map[int]time.Time
}

func newProbeLog() *probeLog {
	return &probeLog{commit: map[int]time.Time{}, seen: map[int]time.Time{}}
}

func (p *probeLog) next() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	return p.n
}

func (p *probeLog) committed(n int, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.commit[n] = at
}

// shows records that the item shows probe n at time at.
func (p *probeLog) shows(n int, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k := range p.commit {
		if _, ok := p.seen[k]; !ok && k <= n {
			p.seen[k] = at
		}
	}
}

func (p *probeLog) pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.commit) - len(p.seen)
}

// lags returns each seen probe's lag, seen − committed, and the number
// never seen.
func (p *probeLog) lags() ([]time.Duration, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []time.Duration
	for k, c := range p.commit {
		if s, ok := p.seen[k]; ok {
			out = append(out, max(0, s.Sub(c)))
		}
	}
	return out, len(p.commit) - len(out)
}

// pollProbe reads the probe ticket's item every pollEvery until ctx is
// done, recording the probe its subject shows.
func pollProbe(ctx context.Context, client *dynamodb.Client, table string, w *workload, p *probeLog) error {
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: w.probeKey, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return err
		}
		at := time.Now()
		if s, ok := out.Item["subject"].(*types.AttributeValueMemberS); ok {
			if n, ok := strings.CutPrefix(s.Value, "bench probe "); ok {
				if k, err := strconv.Atoi(n); err == nil {
					p.shows(k, at)
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// followStatus is one status line of the follow ("follow: applied …"),
// its counts since the follow began, and when the bench read it.
type followStatus struct {
	at                     time.Time
	changes, puts, deletes int64
	lag                    time.Duration
}

// statusLine matches the follow's status lines, a window in flight or
// not: while windows overlap, the counts of a window acknowledged show
// first on the line printed when the next one is received ("in flight").
// A window applied is a line whose changes grew.
var statusLine = regexp.MustCompile(`^follow: applied [0-9A-F/]+(?:, in flight to [0-9A-F/]+)?: \d+ transactions, (\d+) changes, (\d+) items put, (\d+) deleted, \d+ rejected; lag \d+ bytes, ([^;\s]+)`)

// statusFeed collects the follow's stderr: the time "following slot"
// came, and every status line; other lines are logged under key, the
// measurement's.
type statusFeed struct {
	key       string
	mu        sync.Mutex
	following time.Time
	all       []followStatus
	auto      string        // the follow's autoscale line (autoLine), when it printed one
	changed   chan struct{} // closed and replaced on every line of note
}

func newStatusFeed(key string) *statusFeed {
	return &statusFeed{key: key, changed: make(chan struct{})}
}

// line is the launcher's onLine: status lines are kept, others logged.
func (f *statusFeed) line(line string, at time.Time) {
	m := statusLine.FindStringSubmatch(line)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case m != nil:
		st := followStatus{at: at}
		st.changes, _ = strconv.ParseInt(m[1], 10, 64)
		st.puts, _ = strconv.ParseInt(m[2], 10, 64)
		st.deletes, _ = strconv.ParseInt(m[3], 10, 64)
		st.lag, _ = time.ParseDuration(m[4])
		f.all = append(f.all, st)
	case strings.HasPrefix(line, "following slot"):
		f.following = at
		log.Printf("  (%s) %s", f.key, line)
	default:
		if autoLine.MatchString(line) {
			f.auto = line
		}
		log.Printf("  (%s) %s", f.key, line)
		return
	}
	close(f.changed)
	f.changed = make(chan struct{})
}

// waitFollowing waits for "following slot", or for exited to be closed.
func (f *statusFeed) waitFollowing(ctx context.Context, exited <-chan struct{}) (time.Time, error) {
	for {
		f.mu.Lock()
		at, ch := f.following, f.changed
		f.mu.Unlock()
		if !at.IsZero() {
			return at, nil
		}
		select {
		case <-ch:
		case <-exited:
			return time.Time{}, errors.New("(h) pg2dynamo migrate --follow exited before following (its stderr is above)")
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

// waitStatus waits for a status line (the last one, or one to come) that
// satisfies ok.
func (f *statusFeed) waitStatus(ctx context.Context, exited <-chan struct{}, timeout time.Duration, ok func(followStatus) bool) (followStatus, error) {
	deadline := time.After(timeout)
	for {
		f.mu.Lock()
		ch := f.changed
		var last followStatus
		have := len(f.all) > 0
		if have {
			last = f.all[len(f.all)-1]
		}
		f.mu.Unlock()
		if have && ok(last) {
			return last, nil
		}
		select {
		case <-ch:
		case <-exited:
			return last, errors.New("pg2dynamo migrate --follow exited (its stderr is above)")
		case <-deadline:
			return last, fmt.Errorf("no such follow status within %s (the last: %d changes applied)", timeout, last.changes)
		case <-ctx.Done():
			return last, ctx.Err()
		}
	}
}

// since returns the status lines read at or after t.
func (f *statusFeed) since(t time.Time) []followStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	i, _ := slices.BinarySearchFunc(f.all, t, func(st followStatus, t time.Time) int { return st.at.Compare(t) })
	return slices.Clone(f.all[i:])
}

// memSampler reads a process's VmRSS every 100 ms, keeping each phase's
// highest.
type memSampler struct {
	mu    sync.Mutex
	pid   int
	phase int
	peaks [3]int64
	n     int
	done  chan struct{}
	once  sync.Once
}

func newMemSampler(pid int) *memSampler {
	s := &memSampler{pid: pid, done: make(chan struct{})}
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
			}
			kb := procStatusKB(pid, "VmRSS:")
			s.mu.Lock()
			s.peaks[s.phase] = max(s.peaks[s.phase], kb)
			s.n++
			s.mu.Unlock()
		}
	}()
	return s
}

func (s *memSampler) setPhase(p int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phase = p
}

func (s *memSampler) peak(p int) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peaks[p]
}

func (s *memSampler) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *memSampler) stop() { s.once.Do(func() { close(s.done) }) }

// procStatusKB returns a "kB" field of /proc/PID/status (VmRSS:, VmHWM:),
// or 0.
func procStatusKB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// clockTick is USER_HZ, the unit of /proc/PID/stat's CPU times (100 on
// every Linux architecture Go supports).
const clockTick = 10 * time.Millisecond

// threadCPU returns a process's CPU time (user + system) from
// /proc/PID/stat, or 0.
func threadCPU(pid int) time.Duration {
	_, cpu, _ := statCPU(strconv.Itoa(pid), 14, 15)
	return cpu
}

func readCPU(pg2dynamo, dynalite int, postgres []int) procCPU {
	c := procCPU{pg2dynamo: threadCPU(pg2dynamo), dynalite: threadCPU(dynalite)}
	for _, p := range postgres {
		c.postgres += threadCPU(p)
	}
	return c
}

// backendPIDs returns the PostgreSQL backends connected to db (the
// walsender and the follow's sessions among them).
func backendPIDs(ctx context.Context, admin *pgx.Conn, db string) []int {
	rows, err := admin.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE datname = $1", db)
	if err != nil {
		return nil
	}
	pids, _ := pgx.CollectRows(rows, pgx.RowTo[int32])
	out := make([]int, len(pids))
	for i, p := range pids {
		out[i] = int(p)
	}
	return out
}

// dropSlot drops replication slot name if it exists, waiting up to 30 s
// for its walsender to let go of it.
func dropSlot(admin *pgx.Conn, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		_, err := admin.Exec(ctx, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1", name)
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			log.Printf("drop replication slot %s: %v", name, err)
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// quantile returns the q-quantile of ds (nearest rank), or 0.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// targets are (h)'s lines of the Targets list; c is (c), whose items/s
// the saturation rate is held against.
func (fb *followBench) targets(c *result) []string {
	if fb.skipped != "" {
		return []string{"following changes (h): not measured (" + fb.skipped + ")"}
	}
	s, l, m := fb.sat, fb.lag, fb.mem
	var t []string
	line := fmt.Sprintf("follow at saturation (h), a backlog of %s row changes: **%.0f items/s** put or deleted (%.0f changes/s)",
		num(s.committed), float64(s.items())/s.wall.Seconds(), float64(s.changes)/s.wall.Seconds())
	if c != nil {
		ratio := float64(s.items()) / s.wall.Seconds() / c.perSecond()
		line += fmt.Sprintf(", against (c)'s %.0f items/s: **%.2f×**, target ≥ %.1f×: %s", c.perSecond(), ratio, targetFollowRatio,
			verdict(ratio, targetFollowRatio, true, "", 2))
	}
	if f := fb.floor; f.wall > 0 {
		rate := float64(f.items()) / f.wall.Seconds()
		line += fmt.Sprintf(". The same server alone, the burst's mix of writes (h°): %.0f items/s", rate)
		if c != nil {
			line += fmt.Sprintf(", %.2f× (c)'s", rate/c.perSecond())
		}
		line += fmt.Sprintf("; the follow reached **%.2f×** of it", float64(s.items())/s.wall.Seconds()/rate)
	}
	t = append(t, line)
	if len(l.probes) > 0 {
		med := quantile(l.probes, 0.5)
		t = append(t, fmt.Sprintf("follow lag (h) under a steady %.0f changes/s (%d asked for), commit to the item readable in DynamoDB, %d probes: median **%s**, p95 %s, target median < %s: %s",
			float64(l.committed)/l.wall.Seconds(), l.rate, len(l.probes), med.Round(time.Millisecond), quantile(l.probes, 0.95).Round(time.Millisecond),
			targetLagMedian, verdict(med.Seconds(), targetLagMedian.Seconds(), false, " s", 3)))
	} else {
		t = append(t, "follow lag (h): **no probe was seen**")
	}
	if m.loadPeak > 0 && m.lagPeak > 0 {
		ratio := float64(m.lagPeak) / float64(m.loadPeak)
		t = append(t, fmt.Sprintf("follow memory (h): peak RSS during the steady load **%.1f MB**, at the end of the full load %.1f MB (its peak): **%.2f×**, target ≤ %.1f× (flat): %s. Within the steady load: %.1f MB resident at its start, so %.2f× from there; %.1f MB during the saturation burst before it",
			float64(m.lagPeak)/1024, float64(m.loadPeak)/1024, ratio, targetRSSGrowth, verdict(ratio, targetRSSGrowth, false, "×", 2),
			float64(m.lagStart)/1024, float64(m.lagPeak)/float64(max(m.lagStart, 1)), float64(m.satPeak)/1024))
	}
	return t
}

// render writes (h)'s section of BENCHMARKS.md.
func (fb *followBench) render(p func(format string, args ...any), c *result) {
	p("\n## Following changes (h)\n\n")
	if fb.skipped != "" {
		p("Not measured: %s.\n", fb.skipped)
		return
	}
	s, l, m := fb.sat, fb.lag, fb.mem
	p("One `pg2dynamo migrate --follow --concurrency %d` process on the fixture of (c) (%s source rows; every table `REPLICA IDENTITY FULL`), a fresh dynalite. Changes are to tickets: 80%% updates (priority, status, updated_at), 10%% inserts (copies of random tickets under new IDs), 10%% deletes; every change touches one Ticket item.\n\n",
		fb.conc, num(fb.rows))
	p("| phase | row changes | transactions | wall | changes/s | items put | items deleted | items/s |\n|---|--:|--:|--:|--:|--:|--:|--:|\n")
	p("| full load (until \"following slot\") | | | %s | | %s | | %.0f |\n", fb.loadWall.Round(10*time.Millisecond), num(fb.loadItems),
		float64(fb.loadItems)/fb.loadWall.Seconds())
	p("| saturation: the backlog applied | %s | %d | %s | %.0f | %s | %s | %.0f |\n", num(s.changes), s.txs, s.wall.Round(10*time.Millisecond),
		float64(s.changes)/s.wall.Seconds(), num(s.puts), num(s.deletes), float64(s.items())/s.wall.Seconds())
	if f := fb.floor; f.wall > 0 {
		p("| (h°) the server alone, the burst's mix | | | %s | | %s | %s | %.0f |\n", f.wall.Round(10*time.Millisecond), num(f.overwrites+f.puts),
			num(f.deletes), float64(f.items())/f.wall.Seconds())
	}
	p("| steady load | %s | %d | %s | %.0f | | | |\n", num(l.committed), l.txs, l.wall.Round(10*time.Millisecond), float64(l.committed)/l.wall.Seconds())
	p("\n")
	ratio := ""
	if c != nil {
		ratio = fmt.Sprintf(" (c) wrote %.0f items/s in the same run; the follow's full load %.0f.", c.perSecond(), float64(fb.loadItems)/fb.loadWall.Seconds())
	}
	p("- **Saturation.** The follow process was stopped (SIGSTOP) while %s row changes were committed in %d transactions of up to %s (three set-based statements each; PostgreSQL took %s), then continued (SIGCONT): the wall is from then to the first status line (`--progress-interval 1ms`: one after every window applied) counting them all, so it holds the walsender's decoding and sending as well as pg2dynamo's work, not PostgreSQL's commits.%s",
		num(s.committed), s.txs, num(int64(fb.txSize)), s.commit.Round(10*time.Millisecond), ratio)
	if s.overlapped {
		p(" **The burst took over 40 s**: the follow was continued while it went on, so PostgreSQL's commits overlap the wall.")
	}
	if len(s.perWindow) > 0 {
		p(" %d windows applied, %s row changes each at the median.", len(s.perWindow), num(medianInt(s.perWindow)))
	}
	p("\n- **Where the time goes at saturation** (CPU over its %s wall, /proc/PID/stat): pg2dynamo %.2f s (%.2f CPUs), dynalite %.2f s (%.2f CPUs), PostgreSQL's backends of the bench database (the walsender, the follow's reading session) %.2f s (%.2f CPUs); this machine has %d CPUs.\n",
		s.wall.Round(10*time.Millisecond), s.cpu.pg2dynamo.Seconds(), s.cpu.pg2dynamo.Seconds()/s.wall.Seconds(),
		s.cpu.dynalite.Seconds(), s.cpu.dynalite.Seconds()/s.wall.Seconds(), s.cpu.postgres.Seconds(), s.cpu.postgres.Seconds()/s.wall.Seconds(), runtime.NumCPU())
	if f := fb.floor; f.wall > 0 {
		p("- **The server's own rate for the mix (h°).** Just after the burst, on the same dynalite, the follow idle: a minimal writer like (b)'s, %d goroutines of BatchWriteItem, sent as many writes of each kind as the burst made, shuffled: %s overwrites of the updated tickets' items with their updated_at changed (and any GSI key attribute that holds it), %s deletes of the inserted tickets' items and %s puts of copies of them under new keys, in %s: %.0f items/s, dynalite busy %.2f CPUs. An untimed round put the table back. The follow's rate over it is what pg2dynamo loses to the server's own cost of these writes; (c) over (b) is the same for the full load.\n",
			fb.conc, num(f.overwrites), num(f.deletes), num(f.puts), f.wall.Round(10*time.Millisecond), float64(f.items())/f.wall.Seconds(), f.dynCPU.Seconds()/f.wall.Seconds())
	}
	p("- **Lag.** %d transactions of %d changes a second, paced by golang.org/x/time/rate, for %s; every %s one of them also sets a probe ticket's subject to a sequence number, and the probe's item is read (GetItem, consistent) every %s until it shows that number or a later one. A probe's lag is from its transaction's commit being acknowledged to the bench to the first read that shows it. Probe lags: median %s, p95 %s, max %s (%d probes, %d not seen). The follow's own status lag (the commit time of a window's oldest transaction to the window applied) was %s at the median over %d windows, p95 %s. The last change was applied %s after the last commit. Each transaction took %s at the median from send to commit acknowledged.\n",
		int(float64(l.rate)/lagTxChanges), lagTxChanges, l.duration, probeEvery, pollEvery,
		quantile(l.probes, 0.5).Round(time.Millisecond), quantile(l.probes, 0.95).Round(time.Millisecond), quantile(l.probes, 1).Round(time.Millisecond),
		len(l.probes), l.lost, quantile(l.status, 0.5).Round(time.Millisecond), len(l.status), quantile(l.status, 0.95).Round(time.Millisecond),
		l.drain.Round(time.Millisecond), quantile(l.roundTrips, 0.5).Round(100*time.Microsecond))
	hwm := "sampled every 100 ms"
	if m.lagPeakHWM {
		hwm = "the kernel's high-water mark, reset before it (clear_refs)"
	}
	p("- **Memory** (/proc/PID/status of the pg2dynamo process): peak %.1f MB at the end of the full load, %.1f MB resident when following began; peak %.1f MB during saturation (sampled every 100 ms); during the steady load %.1f MB at its start, peak %.1f MB (%s), %.1f MB at its end. Peak RSS over the whole run (getrusage): %.1f MB; CPU %.1f s.\n",
		float64(m.loadPeak)/1024, float64(m.followStart)/1024, float64(m.satPeak)/1024, float64(m.lagStart)/1024, float64(m.lagPeak)/1024, hwm,
		float64(m.lagEnd)/1024, float64(fb.exit.MaxRSSKB)/1024, fb.cpu.Seconds())
	p("- No CPU profile is taken of (h): the process's profile would be mostly its full load, which (c)'s profile already shows.\n")
}

func medianInt(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// followedFixture readies fix's tables for a follow (REPLICA IDENTITY
// FULL: (h)'s changes move rows between parents) and returns a connection
// to it, which the caller closes, and the workload that changes them.
func followedFixture(ctx context.Context, fix *fixture, m *mapping.Mapping) (*pgx.Conn, *workload, error) {
	conn, err := pgx.Connect(ctx, fix.url)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range []string{"orgs", "users", "tickets"} {
		if _, err := conn.Exec(ctx, "ALTER TABLE "+t+" REPLICA IDENTITY FULL"); err != nil {
			conn.Close(context.Background())
			return nil, nil, err
		}
	}
	w, err := newWorkload(ctx, conn, m)
	if err != nil {
		conn.Close(context.Background())
		return nil, nil, err
	}
	return conn, w, nil
}
