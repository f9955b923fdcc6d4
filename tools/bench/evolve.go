package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/tools/faultproxy"
)

// Targets of (p): applying a new version of the mapping that adds GSI
// keys to one entity of shop, beside its follow, against a
// --changes-only of that entity alone; and the follow's lag meanwhile.
const (
	targetEvolveWall = 1.1
	targetEvolveLag  = 5 * time.Second
)

// evolveV1 is shop's mapping: customers and their orders in one item
// collection. The table declares GSI1, which no entity of v1 writes:
// dynalite creates no GSI on an existing table (its UpdateTable ignores
// a GlobalSecondaryIndexUpdates Create), so the index exists from the
// start, and (p) measures what applying the version costs in items.
const evolveV1 = `name: shop
table:
  name: shop
  gsis:
    - {name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK}
entities:
  Customer:
    source: {table: customers}
    pk: CUST#${customer_id}
    sk: PROFILE
  Order:
    source: {table: orders}
    pk: CUST#${customer_id}
    sk: ORDER#${order_id}
`

// evolveV2 adds GSI keys to Order: every order's item changes.
var evolveV2 = strings.Replace(evolveV1, "    sk: ORDER#${order_id}\n",
	"    sk: ORDER#${order_id}\n    indexes:\n      GSI1: {pk: \"STATUS#${status}\", sk: \"ORDER#${order_id}\"}\n", 1)

// evolveBench is (p)'s result.
type evolveBench struct {
	orders, customers int
	store             string // where each dynalite kept its table: disk or memory
	// baseline is migrate --changes-only with Order alone (v2's), on a
	// table v1 wrote; evolve the comparison beside the follow, from its
	// "comparing" line to its "comparison done" line.
	baseline, evolve time.Duration
	// lags are the follow's status lines' lags while the comparison ran,
	// lagsAt when the bench read each line; changes what it applied
	// meanwhile.
	lags    []time.Duration
	lagsAt  []time.Time
	changes string
	// leftOut are, from the follow's "comparison done" line, the writes the
	// comparison found, and the puts and deletes of them it left out, the
	// follow having written those keys since its snapshot ("": not said).
	leftOut []string
	// majorsAt are when the comparison's dynalite ended each Mark-Compact.
	majorsAt []time.Time
	// slot is the follow's replication slot: the bench database's name
	// and _evolve (slots are the server's, shared by its databases).
	slot string
	// loads are the machine's 1-minute load averages (loadAvg) as the
	// baseline began and ended, and as the comparison began and ended:
	// the two sides ran at different times on a machine others share.
	loads [4]string
	// gcs are each side's dynalite's collections over its timed run (the
	// baseline's, the comparison's): time its one thread spent in them,
	// Mark-Compacts, the longest stop.
	gcs [2]struct {
		spent, longest time.Duration
		majors         int
	}
	// cpus are the CPU time each side's dynalite, the PostgreSQL server and
	// pg2dynamo used over its timed run: where the comparison's extra wall
	// went (the workload's updates and their decoding are PostgreSQL's).
	cpus [2]procCPU
	// began and ended bound the comparison.
	began, ended time.Time
	// requests are each timed run's requests by operation (-evolve-count).
	requests [2]map[string]int
}

// loadAvg is the machine's 1-minute load average (/proc/loadavg), or "?"
// where it cannot be read.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// measureEvolve runs (p) on a shop database of orders orders (and an
// eighth as many customers): two tables loaded with v1, each in a
// dynalite of its own, one brought to v2 by migrate --changes-only of
// Order alone, the other by migrate --follow --resume --previous-mapping
// under a steady load of order updates (rate a second).
func measureEvolve(ctx context.Context, cfg config, admin *pgx.Conn, root, bin, outDir string, created map[string]bool, orders, rate int) (*evolveBench, error) {
	eb := &evolveBench{orders: orders, customers: max(1, orders/8), store: cfg.evolveStore, slot: cfg.db + "_evolve"}
	db := cfg.db + "_shop"
	dropDatabase(admin, db)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize()); err != nil {
		return nil, err
	}
	created[db] = true
	url := strings.Replace(cfg.adminURL, "/postgres?", "/"+db+"?", 1)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	log.Printf("(p) shop: %d customers, %d orders", eb.customers, orders)
	if _, err := conn.Exec(ctx, fmt.Sprintf(`
		CREATE TABLE customers (customer_id bigint PRIMARY KEY, name text NOT NULL, city text NOT NULL);
		CREATE TABLE orders (order_id bigint PRIMARY KEY, customer_id bigint NOT NULL REFERENCES customers, status text NOT NULL, total numeric(10,2) NOT NULL);
		INSERT INTO customers SELECT i, 'customer ' || i, (ARRAY['Lyon','Oslo','Lima','Pune'])[1 + i %% 4] FROM generate_series(1, %d) i;
		INSERT INTO orders SELECT i, 1 + i %% %d, (ARRAY['placed','paid','shipped'])[1 + i %% 3], (i %% 1000) / 10.0 FROM generate_series(1, %d) i;
		ALTER TABLE customers REPLICA IDENTITY FULL; ALTER TABLE orders REPLICA IDENTITY FULL; ANALYZE`, eb.customers, eb.customers, orders)); err != nil {
		return nil, err
	}
	dir := filepath.Join(outDir, "evolve")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	v1, v2, order := filepath.Join(dir, "v1.yaml"), filepath.Join(dir, "v2.yaml"), filepath.Join(dir, "order.yaml")
	orderOnly := strings.Replace(evolveV2, "  Customer:\n    source: {table: customers}\n    pk: CUST#${customer_id}\n    sk: PROFILE\n", "", 1)
	for f, text := range map[string]string{v1: evolveV1, v2: evolveV2, order: orderOnly} {
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	// Each side runs against a dynalite of its own that holds its table
	// alone, so that the side measured second pays nothing for the
	// first's table. By default (-evolve-store disk) the table lives in a
	// LevelDB database in a directory of dir, removed at the end: in
	// memory, dynalite keeps it in its one V8 heap (several GB at 1M
	// orders), whose major collections, each longer as the table grows,
	// stop every request for seconds, a cost of the stand-in's that grows
	// with the table and with the CPU the follow takes from it, and that
	// DynamoDB does not have.
	var stores []string
	defer func() {
		for _, s := range stores {
			_ = os.RemoveAll(s)
		}
	}()
	start := func(side string) (*dynalite, error) {
		store := ""
		if cfg.evolveStore == "disk" {
			store = filepath.Join(dir, side+"-store")
			if err := os.RemoveAll(store); err != nil {
				return nil, err
			}
			stores = append(stores, store)
		}
		return startDynaliteIn(ctx, root, store, evolveHeap, evolveYoung, "--trace-gc")
	}
	dyn, err := start("shop-a")
	if err != nil {
		return nil, err
	}
	defer func() {
		if dyn != nil {
			dyn.stop()
		}
	}()
	// With -evolve-count, a counting proxy before each side's dynalite.
	var proxy *faultproxy.Proxy
	count := func() error {
		if !cfg.evolveCount {
			return nil
		}
		if proxy != nil {
			proxy.Close()
		}
		var err error
		proxy, err = faultproxy.Start(dyn.endpoint, faultproxy.Rates{}, 1)
		return err
	}
	if err := count(); err != nil {
		return nil, err
	}
	defer func() {
		if proxy != nil {
			proxy.Close()
		}
	}()
	endpoint := func() string {
		if proxy != nil {
			return proxy.URL
		}
		return dyn.endpoint
	}
	counts := func() map[string]int {
		if proxy == nil {
			return nil
		}
		return proxy.Counts()
	}
	common := func(mappingFile, table string, extra ...string) []string {
		return append([]string{bin, "migrate", "--mapping", mappingFile, "--source", url, "--endpoint-url", endpoint(), "--table", table,
			"--progress", "none", "--rejects", filepath.Join(dir, table+"-rejects.jsonl")}, extra...)
	}
	// profiled puts --cpuprofile FILE (in dir) before the command of
	// args, with -evolve-profile.
	profiled := func(file string, args []string) []string {
		if !cfg.evolveProfile {
			return args
		}
		return append([]string{args[0], "--cpuprofile", filepath.Join(dir, file)}, args[1:]...)
	}
	// The baseline: --changes-only of Order alone (no read-back: the
	// comparison beside the follow reads none back either).
	if err := run1(ctx, common(v1, "shop-a", "--create-table")...); err != nil {
		return nil, err
	}
	log.Printf("(p) migrate --changes-only of Order alone")
	eb.loads[0] = loadAvg()
	before := counts()
	from, cpu0 := time.Now(), cpuNow(dyn)
	res, err := launch(ctx, profiled("changes.prof", common(order, "shop-a", "--changes-only", "--no-verify"))...)
	eb.loads[1] = loadAvg()
	eb.cpus[0] = cpuNow(dyn).since(cpu0)
	eb.cpus[0].pg2dynamo = res.User + res.Sys
	g := &eb.gcs[0]
	g.spent, g.majors, g.longest = dyn.gcStats(from, time.Now())
	if err != nil || res.ExitCode != 0 {
		return nil, fmt.Errorf("(p) migrate --changes-only: exit %d, %v", res.ExitCode, err)
	}
	eb.baseline = res.Wall
	eb.requests[0] = since(counts(), before)
	dyn.stop()
	if dyn, err = start("shop-b"); err != nil {
		return nil, err
	}
	if err := count(); err != nil {
		return nil, err
	}
	if err := eb.followed(ctx, conn, dyn, common, profiled, counts, v1, v2, dir, rate); err != nil {
		return nil, err
	}
	g = &eb.gcs[1]
	g.spent, g.majors, g.longest = dyn.gcStats(eb.began, eb.ended)
	eb.majorsAt = dyn.majorsAt(eb.began, eb.ended)
	return eb, dyn.writeGC(filepath.Join(dir, "shop-b-dynalite-gc.log"), eb.began, eb.ended)
}

// evolveHeap lets a dynalite hold one side's table at 1M orders, past
// node's default heap limit (about 4 GB on this kind of machine).
const evolveHeap = "--max-old-space-size=12288"

// cpuNow reads the CPU time used so far by dyn, by the PostgreSQL server
// and by the running pg2dynamo processes.
func cpuNow(dyn *dynalite) procCPU {
	return procCPU{dynalite: threadCPU(dyn.cmd.Process.Pid), postgres: cpuOfNamed("postgres"), pg2dynamo: cpuOfNamed("pg2dynamo")}
}

func (c procCPU) since(from procCPU) procCPU {
	return procCPU{c.pg2dynamo - from.pg2dynamo, c.dynalite - from.dynalite, c.postgres - from.postgres}
}

// run1 runs one command to its end, which must succeed.
func run1(ctx context.Context, args ...string) error {
	res, err := launch(ctx, args...)
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit %d", res.ExitCode)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", strings.Join(args[1:3], " "), err)
	}
	return nil
}

var (
	evolveLagRE     = regexp.MustCompile(`^follow: applied .*; lag \d+ bytes, ([^;]+);`)
	evolveDoneRE    = regexp.MustCompile(`^comparison done: the follow applied (\d+) changes(?:.*?of the comparison's (\d+) writes, (\d+) puts and (\d+) deletes left out)?`)
	evolveComparing = "beside the follow, in a snapshot of its own"
)

// followed loads shop-b with v1 under a follow, then applies v2 to it
// beside the follow while rate order updates a second are committed,
// timing the comparison and collecting the follow's lag meanwhile.
func (eb *evolveBench) followed(ctx context.Context, conn *pgx.Conn, dyn *dynalite, common func(string, string, ...string) []string, profiled func(string, []string) []string,
	counts func() map[string]int, v1, v2, dir string, rate int) error {
	cp := filepath.Join(dir, "shop-b.json")
	slot := []string{"--follow", "--slot", eb.slot, "--checkpoint", cp, "--audit", "off"}
	defer func() { _, _ = conn.Exec(context.Background(), "SELECT pg_drop_replication_slot($1)", eb.slot) }()
	if err := run1(ctx, common(v1, "shop-b", append(slot, "--create-table", "--until-caught-up")...)...); err != nil {
		return err
	}
	wctx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	go func() {
		t := time.NewTicker(time.Second / time.Duration(max(1, rate)))
		defer t.Stop()
		for i := 1; wctx.Err() == nil; i++ {
			_, _ = conn.Exec(wctx, "UPDATE orders SET total = total + 1 WHERE order_id = $1", 1+(i*7919)%eb.orders)
			select {
			case <-wctx.Done():
			case <-t.C:
			}
		}
	}()
	var mu sync.Mutex
	var began, ended time.Time
	var cpu0 procCPU
	var reqs0 map[string]int
	done := make(chan struct{})
	// The follow's log, each line with when the bench read it, for
	// reading the lag and the comparison's pace after the run.
	logFile, err := os.Create(filepath.Join(dir, "shop-b-follow.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	onLine := func(line string, at time.Time) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(logFile, "%s %s\n", at.UTC().Format("15:04:05.000"), line)
		switch {
		case strings.Contains(line, evolveComparing):
			began, eb.loads[2], cpu0, reqs0 = at, loadAvg(), cpuNow(dyn), counts()
		case evolveDoneRE.MatchString(line) && ended.IsZero():
			m := evolveDoneRE.FindStringSubmatch(line)
			ended, eb.changes, eb.leftOut, eb.loads[3], eb.cpus[1] = at, m[1], m[2:], loadAvg(), cpuNow(dyn).since(cpu0)
			eb.requests[1] = since(counts(), reqs0)
			close(done)
		case !began.IsZero() && ended.IsZero():
			if m := evolveLagRE.FindStringSubmatch(line); m != nil {
				if d, err := time.ParseDuration(m[1]); err == nil {
					eb.lags, eb.lagsAt = append(eb.lags, d), append(eb.lagsAt, at)
				}
			}
		}
	}
	log.Printf("(p) migrate --follow --resume --previous-mapping, %d order updates a second", rate)
	proc, err := startLaunch(ctx, onLine, profiled("evolve.prof", common(v2, "shop-b", append(slot, "--resume", "--previous-mapping", v1, "--progress-interval", "1s")...))...)
	if err != nil {
		return err
	}
	var exited error
	select {
	case <-done:
	case <-ctx.Done():
		exited = ctx.Err()
	}
	_ = proc.interrupt()
	res, err := proc.wait()
	if exited != nil {
		return exited
	}
	if err != nil || began.IsZero() {
		return fmt.Errorf("(p) the follow with v2: exit %d, %v (comparison began: %v)", res.ExitCode, err, !began.IsZero())
	}
	eb.evolve, eb.began, eb.ended = ended.Sub(began), began, ended
	return nil
}

// render prints (p).
func (eb *evolveBench) render() string {
	var b strings.Builder
	ratio := eb.evolve.Seconds() / eb.baseline.Seconds()
	maxLag := time.Duration(0)
	for _, l := range eb.lags {
		maxLag = max(maxLag, l)
	}
	where := "in a LevelDB database on disk"
	if eb.store == "memory" {
		where = "in its V8 heap"
	}
	fmt.Fprintf(&b, "(p) a new version of shop's mapping (GSI keys added to Order: %d customers, %d orders), beside the follow; each side's dynalite keeps its table %s:\n",
		eb.customers, eb.orders, where)
	fmt.Fprintf(&b, "    migrate --changes-only of Order alone: %s\n", eb.baseline.Round(time.Millisecond))
	fmt.Fprintf(&b, "    the comparison beside the follow:      %s (%.2f×; target ≤ %.1f×), %s changes applied by the follow meanwhile\n",
		eb.evolve.Round(time.Millisecond), ratio, targetEvolveWall, eb.changes)
	if len(eb.leftOut) == 3 && eb.leftOut[0] != "" {
		fmt.Fprintf(&b, "    of the comparison's %s writes, it left out %s puts and %s deletes: the follow had written their keys since the comparison's snapshot\n",
			eb.leftOut[0], eb.leftOut[1], eb.leftOut[2])
	}
	fmt.Fprintf(&b, "    the follow's lag meanwhile, over %d status lines: median %s, p95 %s, max %s (target < %s)\n",
		len(eb.lags), quantile(eb.lags, 0.5), quantile(eb.lags, 0.95), maxLag, targetEvolveLag)
	if spikes, near := eb.lagSpikes(); spikes > 0 {
		fmt.Fprintf(&b, "    of the %d status lines with a lag over %s, %d came within %s of the end of one of dynalite's %d Mark-Compacts (their marking steps run on its one thread, between requests)\n",
			spikes, lagSpike, near, lagNearMajor, len(eb.majorsAt))
	}
	for i, side := range []struct {
		name string
		wall time.Duration
	}{{"the baseline", eb.baseline}, {"the comparison", eb.evolve}} {
		g := eb.gcs[i]
		fmt.Fprintf(&b, "    dynalite's one thread collecting garbage over %s: %s (%.0f%% of it), %d Mark-Compacts, the longest stop %s\n",
			side.name, g.spent.Round(time.Millisecond), 100*g.spent.Seconds()/side.wall.Seconds(), g.majors, g.longest.Round(time.Millisecond))
	}
	for i, side := range []string{"the baseline", "the comparison"} {
		c := eb.cpus[i]
		fmt.Fprintf(&b, "    CPU time over %s: dynalite %s, PostgreSQL %s, pg2dynamo %s\n", side,
			c.dynalite.Round(time.Second), c.postgres.Round(time.Second), c.pg2dynamo.Round(time.Second))
	}
	for i, side := range []string{"the baseline", "the comparison"} {
		if eb.requests[i] != nil {
			fmt.Fprintf(&b, "    requests over %s (a counting proxy before dynalite): %v\n", side, eb.requests[i])
		}
	}
	fmt.Fprintf(&b, "    the machine's 1-minute load average: %s to %s over the baseline, %s to %s over the comparison\n",
		eb.loads[0], eb.loads[1], eb.loads[2], eb.loads[3])
	return b.String()
}

// lagSpike is a lag worth explaining; lagNearMajor how near a dynalite
// Mark-Compact's end it must come to be laid to its marking.
const (
	lagSpike     = 2 * time.Second
	lagNearMajor = 3 * time.Second
)

// lagSpikes counts the status lines with a lag over lagSpike, and those of
// them within lagNearMajor of a Mark-Compact's end.
func (eb *evolveBench) lagSpikes() (spikes, near int) {
	for i, l := range eb.lags {
		if l <= lagSpike {
			continue
		}
		spikes++
		if slices.ContainsFunc(eb.majorsAt, func(m time.Time) bool { return m.Sub(eb.lagsAt[i]).Abs() <= lagNearMajor }) {
			near++
		}
	}
	return spikes, near
}

// evolveYoung gives each dynalite's V8 young generation room enough that more
// of a request's garbage dies there instead of being promoted to the old one,
// whose Mark-Compacts of a heap of several GB the follow's extra requests
// bring on. Both sides run with it; it makes the collections a smaller share
// of what (p) measures, not a nil one.
const evolveYoung = "--max-semi-space-size=64"

// since is the counts of now less those of before, the operations' alone
// ("op:Scan"); nil without a count.
func since(now, before map[string]int) map[string]int {
	if now == nil {
		return nil
	}
	out := map[string]int{}
	for k, v := range now {
		if strings.HasPrefix(k, "op:") && v > before[k] {
			out[strings.TrimPrefix(k, "op:")] = v - before[k]
		}
	}
	return out
}
