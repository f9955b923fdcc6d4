// Command bench measures pg2dynamo against the floors of its source and its
// target, side by side in one run (make bench, or scripts/bench.sh with its flags):
//
//	(a) extraction floor: COPY (…) TO STDOUT of the queries migrate runs, into io.Discard;
//	(b) load floor: a minimal BatchWriteItem loader writing the items (c) writes,
//	    pre-built by migrate's own code path, same concurrency, fresh dynalite;
//	(c) pg2dynamo migrate end to end, fresh dynalite;
//	(d) pg2dynamo migrate into the null sink (extract and transform only);
//	(e) (d) again on a larger fixture (-flat-rows, default 10M source rows),
//	    to show whether peak RSS stays flat with table size;
//	(i) pg2dynamo export of (c)'s fixture to a directory (gzip DynamoDB
//	    JSON), alternating with (d): its items/s over (d)'s, and its peak
//	    RSS; (i′) the same on (e)'s fixture;
//	(k) (d) with --metrics-addr, alternating with (d): the metrics' cost,
//	    its items/s over (d)'s (tools/bench/metricscost.go);
//	(j) pg2dynamo migrate --concurrency auto against fixed 8, 16, 32 and
//	    64 writers, through the fault proxy adding -writers-latency a
//	    request; (j′) auto against a table of -writers-capacity write
//	    units a second: the share held and the requests throttled;
//	    (j″) migrate --changes-only, (j‴) migrate --prune of a table whose
//	    items are all stale and (j⁗) migrate --follow --resume applying a
//	    backlog, with the same settings as (j) (tools/bench/writers.go,
//	    writerscases.go; -writers-only measures them alone);
//	(h) pg2dynamo migrate --follow on (c)'s fixture, fresh dynalite: after
//	    its full load, the changes/s and items/s it applies at saturation
//	    (a burst of -follow-changes row changes), its lag under a steady
//	    -follow-rate changes/s for -follow-duration, and its RSS meanwhile
//	    (tools/bench/follow.go; needs wal_level=logical, else it is skipped).
//
// (f) and (g), verify's memory, and (n) and (m), migrate --changes-only
// beside verify, are in tools/bench/verify.go and tools/bench/changes.go. -quick is a
// smoke run at small sizes; -cases measures some of the cases alone.
//
// It prints items/s for each, the ratios c/b and d/a, pg2dynamo's own CPU
// seconds per million items (getrusage of its process, apart from
// PostgreSQL and dynalite), its peak RSS, where the CPU goes (CPU
// profiles of (b) to (e), kept in -profile-dir), and rewrites
// BENCHMARKS.md with the figures and each target met or missed.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/fixtures"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

type config struct {
	rows, flatRows int
	// verifyRows and verifyDiffer size the verify measurements (f) and
	// (g); verifyOnly runs them alone.
	verifyRows, verifyDiffer int
	verifyOnly               bool
	// changesPct is the percentage of the verify fixture's source rows
	// changed before (n) and (m), migrate --changes-only; 0 skips them.
	changesPct float64
	// writersRows sizes (j) (0 skips it), writersLatency and
	// writersCapacity its proxy; writersOnly runs it alone.
	writersRows     int
	writersLatency  time.Duration
	writersCapacity float64
	writersOnly     bool
	conc            int
	repeat          int
	adminURL        string
	db              string
	out             string
	profileDir      string
	profile         bool
	follow          followConfig
	quick           bool
	// cases are the cases to measure (caseSet); nil: all.
	cases caseSet
	// followAuditOnly measures (h′) alone.
	followAuditOnly bool
	// evolveOnly measures (p) alone, on a shop of evolveOrders orders
	// under evolveRate order updates a second.
	evolveOnly               bool
	evolveOrders, evolveRate int
	// evolveProfile has (p)'s two timed runs write CPU profiles
	// (changes.prof, evolve.prof in -profile-dir's evolve directory).
	evolveProfile bool
	// evolveCount puts a counting proxy before each side's dynalite and
	// prints the requests each timed run made, by operation.
	evolveCount bool
	// evolveStore is where (p)'s dynalites keep their tables: "memory"
	// (its V8 heap) or "disk" (LevelDB, dynalite's --path).
	evolveStore string
	args        string // the command line, for the report
}

func main() {
	if os.Getenv(launcherEnv) != "" {
		runLauncher(os.Args[1:])
		return
	}
	var cfg config
	flag.IntVar(&cfg.rows, "rows", 1_000_000, "source rows of the tickets fixture (orgs, users, tickets) for (a) to (d)")
	flag.IntVar(&cfg.flatRows, "flat-rows", 10_000_000, "source rows of the larger fixture for (e), migrate --sink null (0: skip (e))")
	flag.IntVar(&cfg.verifyRows, "verify-rows", 1_000_000, "source rows of the tickets fixture for verify's measurements (f) and (g), strategies mapping (0: skip them)")
	flag.IntVar(&cfg.verifyDiffer, "verify-differ", 100_000, "tickets changed in the source before (g), each one differing item")
	flag.Float64Var(&cfg.changesPct, "changes-pct", 1, "percent of the verify fixture's source rows changed (tickets updated, deleted, inserted) before (n) diff, (m) migrate --changes-only and (o) verify; (m)'s wall is set beside (f)'s and (o)'s (0: skip them)")
	flag.BoolVar(&cfg.verifyOnly, "verify-only", false, "measure verify alone, (f) and (g), with (n) and (m), migrate --changes-only: no (a) to (e), no transform benchmark; prints only unless -out is given")
	flag.IntVar(&cfg.writersRows, "writers-rows", 200_000, "source rows of the tickets fixture for (j), --concurrency auto against fixed writers; (j‴)'s fixture is a twentieth of it, (j⁗)'s backlogs as many row changes (0: skip (j))")
	flag.DurationVar(&cfg.writersLatency, "writers-latency", 8*time.Millisecond, "(j): latency the fault proxy adds to each request")
	flag.Float64Var(&cfg.writersCapacity, "writers-capacity", 5000, "(j′): write units a second the proxy's table takes (0: skip (j′))")
	flag.BoolVar(&cfg.writersOnly, "writers-only", false, "measure (j) to (j⁗) alone: no (a) to (i), no verify measurements; prints only unless -out is given")
	flag.IntVar(&cfg.conc, "concurrency", 8, "writers, for (b) and (c)")
	flag.IntVar(&cfg.repeat, "repeat", 3, "runs of (a), (d), (k) and (i), in turn; each is reported by its median run")
	flag.StringVar(&cfg.adminURL, "pg", testenv.AdminURL(), "PostgreSQL admin URL (databases are created and dropped through it)")
	flag.StringVar(&cfg.db, "db", "pg2dynamo_bench", "name of the bench database (dropped and re-created; (e) uses NAME_flat); dropped at the end")
	flag.StringVar(&cfg.out, "out", "BENCHMARKS.md", "file to rewrite with the results (empty: print only)")
	flag.StringVar(&cfg.profileDir, "profile-dir", "bench-out", "directory for the pg2dynamo binary, the CPU profiles and their pprof reports")
	flag.BoolVar(&cfg.profile, "profile", true, "run (b) to (e) with a CPU profile (pprof)")
	flag.IntVar(&cfg.follow.changes, "follow-changes", 50_000, "(h): row changes of the burst applied at saturation (0: skip (h))")
	flag.IntVar(&cfg.follow.txSize, "follow-tx", 5_000, "(h) and (j⁗): row changes per transaction of the burst, of the backlog")
	flag.IntVar(&cfg.follow.rate, "follow-rate", 500, "(h): row changes/s of the steady load whose lag is measured (transactions of 10)")
	flag.DurationVar(&cfg.follow.duration, "follow-duration", 20*time.Second, "(h): how long the steady load lasts")
	flag.BoolVar(&cfg.followAuditOnly, "follow-audit-only", false, "measure (h′) alone: (h)'s full load and saturation phase with --audit off, with the audit at its defaults, and with passes back to back, alternately -repeat times (each reported by its median run), on the fixture at -rows; prints only")
	flag.Var(&cfg.cases, "cases", "measure only these cases, a comma-separated list of a, b, c, d, e, i, k, h, t (transform benchmark), j and f (verify's (f), (g), (n), (m), (o)); (i) and (k) bring (d), their baseline; prints only unless -out is given (default: all)")
	flag.BoolVar(&cfg.evolveOnly, "evolve-only", false, "measure (p) alone: a new version of shop's mapping (GSI keys added to Order) applied beside its follow (migrate --follow --resume --previous-mapping) against migrate --changes-only of Order alone, and the follow's lag meanwhile; prints only")
	flag.IntVar(&cfg.evolveOrders, "evolve-orders", 1_000_000, "(p): orders of the shop fixture (and an eighth as many customers)")
	flag.IntVar(&cfg.evolveRate, "evolve-rate", 200, "(p): order updates a second committed while the new version is applied")
	flag.BoolVar(&cfg.evolveCount, "evolve-count", false, "(p): count each timed run's requests by operation through a proxy before dynalite (the proxy takes CPU of its own: for a diagnosis, not a measurement)")
	flag.StringVar(&cfg.evolveStore, "evolve-store", "disk", "(p): where each side's dynalite keeps its table: memory (its V8 heap) or disk (a LevelDB database, dynalite's --path)")
	flag.BoolVar(&cfg.evolveProfile, "evolve-profile", false, "(p): write CPU profiles of the --changes-only and of the follow applying the new version (changes.prof, evolve.prof in -profile-dir/evolve)")
	flag.BoolVar(&cfg.quick, "quick", false, "a smoke run: the sizes not given default to -rows 50000 -flat-rows 0 -verify-rows 0 -repeat 1 -follow-changes 5000 -follow-duration 5s, no transform benchmark; prints only unless -out is given")
	flag.Parse()
	log.SetFlags(log.Ltime)
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	outSet := set["out"]
	if cfg.quick {
		for name, v := range map[string]string{"rows": "50000", "flat-rows": "0", "verify-rows": "0", "repeat": "1",
			"follow-changes": "5000", "follow-duration": "5s", "writers-rows": "20000"} {
			if !set[name] {
				_ = flag.Set(name, v)
			}
		}
		if !outSet {
			cfg.out = ""
		}
	}
	if (cfg.verifyOnly || cfg.writersOnly || cfg.followAuditOnly || cfg.evolveOnly || cfg.cases != nil) && !outSet {
		cfg.out = "" // BENCHMARKS.md holds the whole suite
	}
	if cfg.evolveStore != "disk" && cfg.evolveStore != "memory" {
		log.Fatalf("bench: -evolve-store %q: want disk or memory", cfg.evolveStore)
	}
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "pg", "out", "db", "profile-dir": // no bearing on the figures
		default:
			cfg.args += fmt.Sprintf(" -%s %s", f.Name, f.Value)
		}
	})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		log.Fatalf("bench: %v", err)
	}
}

// result is one measurement.
type result struct {
	key   string // a, b, c, d, e, e2
	name  string
	rows  int64 // source rows (of the fixture measured)
	items int64
	wall  time.Duration
	// cpu is the Go process's own CPU time: pg2dynamo's for (c) to (e),
	// the bench loader's for (b).
	cpu      time.Duration
	rssKB    int64         // pg2dynamo's peak RSS, (c) to (e)
	floorKB  int64         // the launcher's own peak RSS (a floor of rssKB)
	dynCPU   time.Duration // dynalite's CPU time, (b) and (c)
	gcCycles int           // (b): GC cycles of the bench process during the loop
	profile  string        // CPU profile, if any
	prof     *profileSummary
}

func (r result) perSecond() float64 { return float64(r.items) / r.wall.Seconds() }

// medianRun returns the run of median wall time (of an even number, the
// faster of the middle two).
func medianRun(rs []result) *result {
	sorted := slices.Clone(rs)
	slices.SortFunc(sorted, func(x, y result) int { return cmp.Compare(x.wall, y.wall) })
	m := sorted[(len(sorted)-1)/2]
	return &m
}

// perMillion scales d to one million items.
func (r result) perMillion(d time.Duration) float64 {
	return d.Seconds() / (float64(r.items) / 1e6)
}

// fixture is one loaded bench database.
type fixture struct {
	db, url   string
	rows      int64
	counts    map[string]int64
	load      time.Duration // fixtures.Load
	vacuum    time.Duration // VACUUM ANALYZE
	sizeBytes int64
}

// report is everything the run measured, for render.
type report struct {
	cfg                      config
	started                  time.Time
	took                     time.Duration
	machine                  string
	fix, flat                *fixture
	flatSkipped              string
	items                    *floorItems
	a, b, c, d, e, e2        *result
	i, i2                    *result // pg2dynamo export to a directory: (c)'s fixture, (e)'s
	k                        *result // (d) with --metrics-addr
	kRuns                    []result
	kScrapes                 []scrapeResult // one of each (k) run
	verify                   *verifyBench
	follow                   *followBench
	writers                  *writersBench // (j)
	aRuns, dRuns, iRuns      []result      // every run of (a), (d) and (i), in order
	transform                *benchResult
	transformCLIGC           *benchResult // under GOGC=400, as main.go sets it
	transformProf            *profileSummary
	transformErr             string
	instr                    *instrCounts
	instrErr                 string
	mapping                  *mapping.Mapping
	mappingFile, dynaliteVer string
	pgVersion, nodeVer       string
	binaryInRepo             string
}

func run(ctx context.Context, cfg config) error {
	rep := &report{cfg: cfg, started: time.Now()}
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"} {
		os.Setenv(k, v)
	}
	if cfg.rows < 1 || cfg.flatRows < 0 || cfg.conc < 1 || cfg.repeat < 1 || cfg.verifyRows < 0 || cfg.verifyDiffer < 1 || cfg.changesPct < 0 || cfg.changesPct > 100 {
		return errors.New("-rows, -concurrency, -repeat and -verify-differ must be at least 1, -flat-rows and -verify-rows at least 0, -changes-pct 0 to 100")
	}
	if f := cfg.follow; f.changes < 0 || f.txSize < 1 || f.rate < lagTxChanges || f.duration <= 0 {
		return fmt.Errorf("-follow-changes must be at least 0, -follow-tx at least 1, -follow-rate at least %d, -follow-duration positive", lagTxChanges)
	}
	if cfg.verifyOnly && cfg.verifyRows == 0 {
		return errors.New("-verify-only with -verify-rows 0: nothing to measure")
	}
	if cfg.writersOnly && (cfg.writersRows == 0 || cfg.verifyOnly) {
		return errors.New("-writers-only: with -writers-rows above 0, and not with -verify-only")
	}
	if cfg.writersRows < 0 || cfg.writersLatency < 0 || cfg.writersCapacity < 0 {
		return errors.New("-writers-rows, -writers-latency and -writers-capacity must be at least 0")
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	outDir := cfg.profileDir
	if !filepath.IsAbs(outDir) {
		outDir = filepath.Join(root, outDir)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	rep.binaryInRepo = filepath.Join(cfg.profileDir, "pg2dynamo")
	bin := filepath.Join(outDir, "pg2dynamo")
	log.Printf("building %s", bin)
	if out, err := exec.Command("go", "build", "-o", bin, root).CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	mappingFile := filepath.Join(root, "fixtures", "mappings", "tickets.yaml")
	rep.mappingFile = "fixtures/mappings/tickets.yaml"
	m, err := mapping.Load(mappingFile)
	if err != nil {
		return err
	}
	rep.machine = machine()
	rep.nodeVer, rep.dynaliteVer = nodeVersions(root)

	// The bench databases are dropped however the run ends.
	admin, err := pgx.Connect(ctx, cfg.adminURL)
	if err != nil {
		return fmt.Errorf("connect to PostgreSQL (%s): %w", cfg.adminURL, err)
	}
	defer admin.Close(context.Background())
	if err := admin.QueryRow(ctx, "SHOW server_version").Scan(&rep.pgVersion); err != nil {
		return err
	}
	created := map[string]bool{}
	defer func() {
		for db := range created {
			dropDatabase(admin, db)
		}
	}()
	logDisk(ctx, admin)

	if cfg.evolveOnly {
		eb, err := measureEvolve(ctx, cfg, admin, root, bin, outDir, created, cfg.evolveOrders, cfg.evolveRate)
		if err != nil {
			return err
		}
		fmt.Print(eb.render())
		return nil
	}
	if cfg.followAuditOnly {
		fix, err := loadFixture(ctx, admin, cfg.adminURL, cfg.db, cfg.rows, created)
		if err != nil {
			return err
		}
		runs, err := measureFollowAudit(ctx, cfg, admin, root, bin, outDir, m, mappingFile, fix)
		if err != nil {
			return err
		}
		fmt.Print(renderAudit(runs))
		return nil
	}
	if !cfg.verifyOnly && !cfg.writersOnly && cfg.cases.suite() {
		if err := runSuite(ctx, cfg, rep, admin, root, bin, outDir, m, mappingFile, created); err != nil {
			return err
		}
	}
	// (j): --concurrency auto against fixed writers.
	if !cfg.cases.has("j") {
		rep.writers = nil
	} else if cfg.writersRows > 0 && !cfg.verifyOnly {
		if rep.writers, err = measureWriters(ctx, cfg, admin, root, bin, outDir, created); err != nil {
			return err
		}
	} else {
		rep.writers = &writersBench{skipped: "-writers-rows 0"}
	}
	// (f) and (g): verify's memory.
	if cfg.writersOnly || !cfg.cases.has("f") {
		rep.verify = nil
	} else if cfg.verifyRows > 0 {
		if rep.verify, err = measureVerify(ctx, cfg, admin, root, bin, outDir, created); err != nil {
			return err
		}
	} else {
		rep.verify = &verifyBench{skipped: "-verify-rows 0"}
	}

	for _, r := range []*result{rep.b, rep.c, rep.d, rep.e} {
		if r != nil && r.profile != "" {
			pbin := bin
			if r.key == "b" {
				pbin, _ = os.Executable()
			}
			if r.prof, err = analyzeProfile(pbin, r.profile); err != nil {
				log.Printf("profile of (%s): %v", r.key, err)
			}
		}
	}
	rep.took = time.Since(rep.started)
	text := render(rep)
	fmt.Print(text)
	if cfg.out == "" {
		return nil
	}
	out := cfg.out
	if !filepath.IsAbs(out) {
		out = filepath.Join(root, out)
	}
	return os.WriteFile(out, []byte(text), 0o644)
}

// runSuite measures (a) to (e) and the transform benchmark into rep.
func runSuite(ctx context.Context, cfg config, rep *report, admin *pgx.Conn, root, bin, outDir string, m *mapping.Mapping,
	mappingFile string, created map[string]bool) error {
	profile := func(name string) string {
		if !cfg.profile {
			return ""
		}
		return filepath.Join(outDir, name+".cpu.pprof")
	}
	var err error
	rep.mapping = m
	// (a) to (d) on the fixture at -rows.
	rep.fix, err = loadFixture(ctx, admin, cfg.adminURL, cfg.db, cfg.rows, created)
	if err != nil {
		return err
	}
	// (a) and (d) come after (b) and (c), alternately, -repeat times each.
	if cfg.cases.has("b") {
		if err := measureLoadFloor(ctx, cfg, rep, root, m, profile("b")); err != nil {
			return err
		}
	}
	common := []string{"--mapping", mappingFile, "--source", rep.fix.url, "--progress", "none", "--rejects", os.DevNull,
		"--checkpoint", filepath.Join(outDir, "checkpoint.json")}
	if cfg.cases.has("c") {
		if err := measureEndToEnd(ctx, cfg, rep, root, bin, profile("c"), common); err != nil {
			return err
		}
	}
	if err := alternate(ctx, cfg, rep, bin, mappingFile, outDir, common); err != nil {
		return err
	}
	if cfg.profile && cfg.cases.has("d") {
		dp, err := migrate(ctx, bin, "d", dName+", profiled", rep.fix.rows, profile("d"), append(common, "--sink", "null")...)
		if err != nil {
			return err
		}
		rep.d.profile = dp.profile
	}
	// (h): following changes, on the same fixture (which it changes: it
	// comes after (a) and (d)).
	if !cfg.cases.has("h") {
		rep.follow = nil
	} else if cfg.follow.changes > 0 {
		if rep.follow, err = measureFollow(ctx, cfg, admin, root, bin, outDir, m, mappingFile, rep.fix); err != nil {
			return err
		}
		if rep.follow.skipped != "" {
			log.Printf("(h) skipped: %s", rep.follow.skipped)
		}
	} else {
		rep.follow = &followBench{skipped: "-follow-changes 0"}
	}
	if cfg.cases.has("t") {
		measureTransform(ctx, cfg, rep, root, outDir)
	} else {
		rep.transformErr = "not in -cases"
	}
	dropDatabase(admin, rep.fix.db)
	delete(created, rep.fix.db)
	if !cfg.cases.has("e") {
		rep.flatSkipped = "not in -cases"
		return nil
	}
	return measureFlat(ctx, cfg, rep, admin, bin, mappingFile, outDir, profile("e"), created)
}

// measureLoadFloor is (b): it builds the items with migrate's code path,
// then writes them with the minimal loader.
func measureLoadFloor(ctx context.Context, cfg config, rep *report, root string, m *mapping.Mapping, profile string) error {
	log.Printf("(b) building the items with migrate's code path (Prepare, Stream, Items)")
	fi, err := buildItems(ctx, rep.fix.url, m)
	if err != nil {
		return err
	}
	log.Printf("(b) built %d items (%d bytes, avg %.0f) in %s; Go heap %.0f MB", fi.items, fi.bytes, float64(fi.bytes)/float64(fi.items),
		fi.build.Round(time.Millisecond), fi.heapMB)
	log.Printf("(b) writing them: %d writers, fresh dynalite", cfg.conc)
	b, err := loadFloor(ctx, root, m, fi, cfg.conc, profile)
	if err != nil {
		return err
	}
	b.name, b.rows = fmt.Sprintf("minimal BatchWriteItem loader, the same items pre-built, %d writers (load floor)", cfg.conc), rep.fix.rows
	rep.b = &b
	// Release them (and their pages) before pg2dynamo runs.
	fi.batches = nil
	rep.items = fi
	runtime.GC()
	debug.FreeOSMemory()
	return nil
}

// measureEndToEnd is (c): migrate into a fresh dynalite.
func measureEndToEnd(ctx context.Context, cfg config, rep *report, root, bin, profile string, common []string) error {
	dyn, err := startDynalite(ctx, root)
	if err != nil {
		return err
	}
	c, err := migrate(ctx, bin, "c", fmt.Sprintf("pg2dynamo migrate, end to end, %d writers", cfg.conc), rep.fix.rows, profile,
		append(common, "--endpoint-url", dyn.endpoint, "--create-table", "--no-verify", "--concurrency", strconv.Itoa(cfg.conc))...)
	c.dynCPU = dyn.stop()
	if err != nil {
		return err
	}
	if rep.b != nil && c.items != rep.b.items {
		return fmt.Errorf("(c) wrote %d items, (b) %d: the floor does not write what migrate writes", c.items, rep.b.items)
	}
	rep.c = &c
	return nil
}

const (
	aName = "COPY (…) TO STDOUT into io.Discard, the queries migrate runs (extraction floor)"
	dName = "pg2dynamo migrate --sink null (extract + transform)"
	kName = "pg2dynamo migrate --sink null --metrics-addr (d with metrics served)"
	iName = "pg2dynamo export to file:/// (gzip DynamoDB JSON objects)"
)

// alternate measures (a), (d), (k) and (i), those selected, in turn,
// -repeat times, unprofiled, so that a slow spell of a shared machine
// falls on all of them; each is reported by its median run. A last (d)
// with a CPU profile gives (d)'s profile.
func alternate(ctx context.Context, cfg config, rep *report, bin, mappingFile, outDir string, common []string) error {
	var as, ds, ks, is []result
	for i := range cfg.repeat {
		nth := fmt.Sprintf(" (%d of %d)", i+1, cfg.repeat)
		if cfg.cases.has("a") {
			log.Printf("(a) COPY of the queries migrate runs%s", nth)
			a, err := copyFloor(ctx, rep.fix.url, rep.mapping)
			if err != nil {
				return err
			}
			a.name, a.rows = aName, rep.fix.rows
			log.Printf("(a) %d rows in %s", a.items, a.wall.Round(time.Millisecond))
			as = append(as, a)
		}
		if cfg.cases.has("d") {
			d, err := migrate(ctx, bin, "d", dName+nth, rep.fix.rows, "", append(common, "--sink", "null")...)
			if err != nil {
				return err
			}
			d.name = dName
			ds = append(ds, d)
		}
		if cfg.cases.has("k") {
			k, sc, err := metricsRun(ctx, bin, kName+nth, rep.fix.rows, ds[len(ds)-1].wall/2, append(common, "--sink", "null"))
			if err != nil {
				return err
			}
			k.name = kName
			ks, rep.kScrapes = append(ks, k), append(rep.kScrapes, sc)
		}
		if cfg.cases.has("i") {
			x, err := exportRun(ctx, bin, "i", iName+nth, rep.fix.rows, mappingFile, rep.fix.url, outDir)
			if err != nil {
				return err
			}
			x.name = iName
			is = append(is, x)
		}
	}
	for _, x := range []struct {
		runs   []result
		median **result
		all    *[]result
	}{{as, &rep.a, &rep.aRuns}, {ds, &rep.d, &rep.dRuns}, {ks, &rep.k, &rep.kRuns}, {is, &rep.i, &rep.iRuns}} {
		if len(x.runs) > 0 {
			*x.median, *x.all = medianRun(x.runs), x.runs
		}
	}
	return nil
}

// measureTransform is the transform benchmark: BenchmarkItems against its
// reference, its profile and its instruction counts.
func measureTransform(ctx context.Context, cfg config, rep *report, root, outDir string) {
	if !cfg.quick {
		log.Printf("transform: BenchmarkItems and BenchmarkItemsReference, %d rounds", transformRounds)
	}
	if cfg.quick {
		rep.transformErr = "-quick"
	} else if tbin, noCgo, err := buildTransformTests(ctx, root, outDir); err != nil {
		log.Printf("transform benchmark: %v", err)
		rep.transformErr = err.Error()
	} else {
		if rep.transform, err = transformBench(ctx, tbin); err != nil {
			log.Printf("transform benchmark: %v", err)
			rep.transformErr = err.Error()
		} else if rep.transformCLIGC, err = transformBench(ctx, tbin, "GOGC=400"); err != nil {
			log.Printf("transform benchmark (GOGC=400): %v", err)
		}
		if rep.transformProf, err = transformProfile(ctx, tbin, outDir); err != nil {
			log.Printf("transform profile: %v", err)
		}
		log.Printf("transform: instructions per item (callgrind)")
		if rep.instr, err = instructions(ctx, noCgo); err != nil {
			log.Printf("instruction counts: %v", err)
			rep.instrErr = firstLine(err.Error())
		}
	}
}

// measureFlat is (e), the null sink on the larger fixture, and (i′).
func measureFlat(ctx context.Context, cfg config, rep *report, admin *pgx.Conn, bin, mappingFile, outDir, profile string,
	created map[string]bool) error {
	var err error
	if cfg.flatRows > 0 {
		rep.flatSkipped = checkDisk(ctx, admin, rep.fix, cfg.flatRows)
	} else {
		rep.flatSkipped = "-flat-rows 0"
	}
	if rep.flatSkipped == "" {
		if rep.flat, err = loadFixture(ctx, admin, cfg.adminURL, cfg.db+"_flat", cfg.flatRows, created); err != nil {
			return err
		}
		flatArgs := []string{"--mapping", mappingFile, "--source", rep.flat.url, "--progress", "none", "--rejects", os.DevNull,
			"--checkpoint", filepath.Join(outDir, "checkpoint.json"), "--sink", "null"}
		e, err := migrate(ctx, bin, "e", "pg2dynamo migrate --sink null, larger fixture", rep.flat.rows, profile, flatArgs...)
		if err != nil {
			return err
		}
		rep.e = &e
		if cfg.cases.has("i") {
			i2, err := exportRun(ctx, bin, "i2", "pg2dynamo export, larger fixture", rep.flat.rows, mappingFile, rep.flat.url, outDir)
			if err != nil {
				return err
			}
			rep.i2 = &i2
		}
		// Peak RSS over the target at scale: measure how much of it is the
		// duplicate check's key set (8 to 16 bytes per item).
		if e.rssKB > rssTargetKB {
			e2, err := migrate(ctx, bin, "e2", "(e) with --no-duplicate-check", rep.flat.rows, "", append(flatArgs, "--no-duplicate-check")...)
			if err != nil {
				return err
			}
			rep.e2 = &e2
		}
		dropDatabase(admin, rep.flat.db)
		delete(created, rep.flat.db)
	} else {
		log.Printf("(e) skipped: %s", rep.flatSkipped)
	}
	return nil
}

// exportRun is (i): pg2dynamo export of the fixture at url into a fresh
// directory below outDir, removed after.
func exportRun(ctx context.Context, bin, key, name string, rows int64, mappingFile, url, outDir string) (result, error) {
	dir := filepath.Join(outDir, "export")
	os.RemoveAll(dir)
	defer os.RemoveAll(dir)
	abs, err := filepath.Abs(dir)
	if err != nil {
		return result{}, err
	}
	return command(ctx, bin, "export", key, name, rows, "", "--mapping", mappingFile, "--source", url, "--progress", "none",
		"--rejects", os.DevNull, "--to", "file://"+abs+"/")
}

// migrate runs pg2dynamo migrate (with --cpuprofile if profile is set)
// through the launcher and reads the items it wrote from its summary.
func migrate(ctx context.Context, bin, key, name string, rows int64, profile string, args ...string) (result, error) {
	return command(ctx, bin, "migrate", key, name, rows, profile, args...)
}

// command runs pg2dynamo cmd as migrate describes.
func command(ctx context.Context, bin, cmd, key, name string, rows int64, profile string, args ...string) (result, error) {
	full := []string{bin}
	if profile != "" {
		full = append(full, "--cpuprofile", profile)
	}
	full = append(full, cmd)
	full = append(full, args...)
	lr, err := launchLogged(ctx, key, name, full...)
	if err != nil {
		return result{}, err
	}
	if lr.ExitCode != 0 {
		return result{}, fmt.Errorf("(%s) %s: exit %d\n%s", key, name, lr.ExitCode, lr.Stdout)
	}
	items, rejected, err := summaryTotal(lr.Stdout)
	if err != nil {
		return result{}, fmt.Errorf("(%s): %w\n%s", key, err, lr.Stdout)
	}
	if rejected > 0 {
		return result{}, fmt.Errorf("(%s): %d rows rejected\n%s", key, rejected, lr.Stdout)
	}
	r := result{key: key, name: name, rows: rows, items: items, wall: lr.Wall, cpu: lr.User + lr.Sys,
		rssKB: lr.MaxRSSKB, floorKB: lr.LauncherKB, profile: profile}
	log.Printf("(%s) %d items in %s, %.0f items/s, %.1f CPU s per 1M items, peak RSS %.1f MB", key, r.items,
		r.wall.Round(time.Millisecond), r.perSecond(), r.perMillion(r.cpu), float64(r.rssKB)/1024)
	return r, nil
}

// summaryTotal reads the items written and rows rejected from the total
// row of migrate's summary table.
func summaryTotal(stdout string) (items, rejected int64, err error) {
	var head []string
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == "entity" {
			head = f
		}
		if len(f) < 4 || f[0] != "total" {
			continue
		}
		// entity, rows read, rows written, rows rejected, [not written],
		// items written, elapsed: the counts are the fields before the last.
		counts := f[1 : len(f)-1]
		if len(counts) < 4 {
			break
		}
		if items, err = strconv.ParseInt(counts[len(counts)-1], 10, 64); err != nil {
			break
		}
		rejected, err = strconv.ParseInt(counts[2], 10, 64)
		return items, rejected, err
	}
	return 0, 0, fmt.Errorf("no total row in migrate's summary (header %q)", strings.Join(head, " "))
}

// loadFixture creates database db and loads the tickets fixture at about
// rows source rows into it, logging the COPY progress.
func loadFixture(ctx context.Context, admin *pgx.Conn, adminURL, db string, rows int, created map[string]bool) (*fixture, error) {
	if !dbName.MatchString(db) {
		return nil, fmt.Errorf("-db %q: expected letters, digits and _", db)
	}
	dropDatabase(admin, db)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize()); err != nil {
		return nil, err
	}
	created[db] = true
	u, err := url.Parse(adminURL)
	if err != nil {
		return nil, err
	}
	u.Path = "/" + db
	f := &fixture{db: db, url: u.String()}
	conn, err := pgx.Connect(ctx, f.url)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	scale := float64(rows) / 22020 // rows per unit of scale: 20 orgs, 2,000 users, 20,000 tickets
	log.Printf("loading the tickets fixture into %s: %d source rows (scale %.2f)", db, rows, scale)
	start := time.Now()
	// The admin connection is free while Load runs.
	stopLog := logEvery(15*time.Second, func(elapsed time.Duration) {
		var table string
		var n int64
		err := admin.QueryRow(ctx, "SELECT relid::regclass::text, tuples_processed FROM pg_stat_progress_copy WHERE datname = $1", db).Scan(&table, &n)
		if err == nil {
			log.Printf("  %s: copying %s, %d rows (%s)", db, table, n, elapsed.Round(time.Second))
		}
	})
	f.counts, err = fixtures.Load(ctx, conn, "tickets", scale, 1)
	stopLog()
	if err != nil {
		return nil, err
	}
	f.load = time.Since(start)
	for _, n := range f.counts {
		f.rows += n
	}
	start = time.Now()
	if _, err := conn.Exec(ctx, "VACUUM (ANALYZE)"); err != nil {
		return nil, err
	}
	f.vacuum = time.Since(start)
	if err := conn.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&f.sizeBytes); err != nil {
		return nil, err
	}
	log.Printf("loaded %d rows in %s (%.1f s per 1M rows), VACUUM ANALYZE %s, database %s", f.rows, f.load.Round(time.Millisecond),
		f.load.Seconds()/(float64(f.rows)/1e6), f.vacuum.Round(time.Millisecond), mb(f.sizeBytes))
	logDisk(ctx, admin)
	return f, nil
}

var dbName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,57}$`)

func dropDatabase(admin *pgx.Conn, db string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)"); err != nil {
		log.Printf("drop database %s: %v", db, err)
	}
}

// dataDirFree returns the free bytes on PostgreSQL's data directory, when
// it is on this machine and readable.
func dataDirFree(ctx context.Context, admin *pgx.Conn) (string, int64, bool) {
	var dir string
	if err := admin.QueryRow(ctx, "SHOW data_directory").Scan(&dir); err != nil {
		return "", 0, false
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return dir, 0, false
	}
	return dir, int64(st.Bavail) * st.Bsize, true
}

func logDisk(ctx context.Context, admin *pgx.Conn) {
	if dir, free, ok := dataDirFree(ctx, admin); ok {
		log.Printf("disk: %s free on %s", mb(free), dir)
	}
}

// checkDisk returns why (e) cannot run, or "": its database would need
// about flatRows/f.rows times f's size, plus 2 GB to spare.
func checkDisk(ctx context.Context, admin *pgx.Conn, f *fixture, flatRows int) string {
	_, free, ok := dataDirFree(ctx, admin)
	if !ok {
		return ""
	}
	need := int64(float64(f.sizeBytes)*float64(flatRows)/float64(f.rows)) + 2<<30
	if free < need {
		return fmt.Sprintf("a %d-row fixture needs about %s of disk, %s is free", flatRows, mb(need), mb(free))
	}
	return ""
}

func mb(b int64) string {
	if b >= 10<<30 {
		return fmt.Sprintf("%.1f GB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%.0f MB", float64(b)/(1<<20))
}

func machine() string {
	model := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	memGB := 0.0
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
				memGB = kb / (1 << 20)
			}
		}
	}
	s := fmt.Sprintf("%s/%s, %d CPUs", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	if model != "" {
		s += " (" + model + ")"
	}
	if memGB > 0 {
		s += fmt.Sprintf(", %.0f GB RAM", memGB)
	}
	return s + ", " + runtime.Version()
}

func nodeVersions(root string) (node, dynalite string) {
	if out, err := exec.Command("node", "--version").Output(); err == nil {
		node = strings.TrimSpace(string(out))
	}
	if b, err := os.ReadFile(filepath.Join(root, "node_modules", "dynalite", "package.json")); err == nil {
		if _, rest, ok := strings.Cut(string(b), `"version": "`); ok {
			dynalite, _, _ = strings.Cut(rest, `"`)
		}
	}
	return node, dynalite
}
