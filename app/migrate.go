package app

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

func migrateCommand() *cli.Command {
	return &cli.Command{
		Name:      "migrate",
		Usage:     "read the source tables, build the items and write them to the DynamoDB table",
		UsageText: "pg2dynamo migrate --mapping FILE [--source URL] [--create-table] [--endpoint-url URL] [options]",
		Description: `migrate checks the mapping against the live database (every table and column
it names must exist) before anything is written, then reads all entities from one
read-only REPEATABLE READ snapshot and writes every row as an item with
BatchWriteItem (25 items a request, --concurrency writers: by default as many
as raise items/s, halved when DynamoDB throttles).

Rows that cannot become items (a NULL key column, a number DynamoDB cannot hold)
are listed in the rejects file as JSON Lines {entity, source_key, reason}; the
summary reconciles rows read = rows written + rows rejected.

Run again on a loaded table, --changes-only writes only what differs: one
comparison with the table (as verify's) puts the new and changed items and
deletes the stale ones, then reads each write back; --dry-run shows the same
without writing (as pg2dynamo diff).

Example, against DynamoDB Local:
   AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local \
   pg2dynamo migrate --mapping examples/northwind/mapping.yaml \
      --source postgres://postgres@localhost/pg2dynamo_demo_northwind \
      --endpoint-url http://localhost:8000 --region us-east-1 --create-table`,
		Flags: append([]cli.Flag{
			mappingFlag(), sourceFlag(), endpointFlag(), regionFlag(), profileFlag(),
			tableFlag(),
			&cli.BoolFlag{Name: "create-table", Usage: "create the table and its GSIs from the mapping if it does not exist, and wait until it is ACTIVE"},
			&cli.StringFlag{Name: "concurrency", Aliases: []string{"c"}, Value: "auto", Usage: "parallel BatchWriteItem writers: a number (1 to 256), or auto to start with 4 and add writers while items/s rises, halving them (and pacing the writes) when DynamoDB throttles, up to --max-concurrency; --changes-only, --prune and the follow use 8 with auto"},
			&cli.IntFlag{Name: "max-concurrency", Value: pipeline.DefaultMaxConcurrency, Usage: "with --concurrency auto: the most writers"},
			&cli.IntFlag{Name: "readers", Value: defaultReaders(), Usage: "PostgreSQL connections reading in parallel, all on one exported snapshot; a table of 40,000 rows or more is split into primary-key ranges, one per reader; the default is one per CPU, at most 4"},
			&cli.IntFlag{Name: "max-write-units", Usage: "cap the write capacity consumed per second (as DynamoDB reports it); throttling halves the rate, which then climbs back", DefaultText: "no cap"},
			&cli.IntFlag{Name: "max-retries", DefaultText: "9, from --max-attempts 10", Usage: "retries per DynamoDB request after the first attempt (sets --max-attempts to this + 1)"},
			&cli.DurationFlag{Name: "retry-deadline", Value: 5 * time.Minute, Usage: "give up a batch (and stop the run, with its checkpoint) when its retries, throttling included, take longer than this"},
			&cli.IntFlag{Name: "max-attempts", Value: 10, Usage: "attempts per DynamoDB request on throttling, 5xx and network errors (exponential backoff with jitter)"},
			&cli.PathFlag{Name: "rejects", Value: "pg2dynamo-rejects.jsonl", TakesFile: true, Usage: "JSON Lines `FILE` listing rejected rows (written on every run: empty when none was rejected)"},
			&cli.BoolFlag{Name: "no-duplicate-check", Usage: "do not remember every item key to catch two rows that render the same primary key (saves 11 to 21 bytes of memory per item of the entities whose keys are not proven unique, and lets them be read in parallel; duplicates within one batch are still caught)"},
			&cli.StringFlag{Name: "sink", Value: "dynamodb", Usage: "where items go: dynamodb, or null to read and transform everything and write nothing (for measuring)"},
			&cli.PathFlag{Name: "checkpoint", Value: "pg2dynamo-checkpoint.json", TakesFile: true, Usage: "`FILE` recording, as batches are acknowledged, how far each entity is written (each entity is read in primary-key order)"},
			&cli.DurationFlag{Name: "checkpoint-interval", Value: time.Second, Usage: "how often the checkpoint is rewritten while batches are acknowledged (and when an entity is done, and at the end); a crash redoes at most this much work"},
			&cli.BoolFlag{Name: "resume", Usage: "finish the run the checkpoint records (same mapping, table and source): skip entities done, read the others after their recorded position"},
			&cli.BoolFlag{Name: "dry-run", Usage: "write nothing: report what the run would change and cost (as pg2dynamo diff)"},
			&cli.BoolFlag{Name: "no-verify", Usage: "skip the verification (as pg2dynamo verify) that follows the load"},
			pruneFlag(),
			changesOnlyFlag(),
			&cli.Float64Flag{Name: "price-per-million", Value: report.DefaultPricePerMillion, Usage: "with --dry-run: on-demand price in US dollars per million write request units"},
			&cli.Float64Flag{Name: "import-price-per-gb", Value: report.DefaultImportPricePerGB, Usage: "with --dry-run: ImportTable's price in US dollars per GB of source data, uncompressed"},
		}, append(append(append(append(progressFlags(), shardFlags()...), followFlags()...), ownerFlags()...), reportFlags()[1:]...)...),
		Action: runMigrate,
	}
}

// MaxConcurrency bounds --concurrency and --max-concurrency.
const MaxConcurrency = 256

// writersOf is --concurrency: a fixed number of writers, or (auto) an
// Autoscale up to --max-concurrency. checkMigrateFlags checked both.
func writersOf(c *cli.Context) (n int, auto *pipeline.Autoscale) {
	isAuto, n, _ := pipeline.ParseConcurrency(c.String("concurrency"), MaxConcurrency)
	if isAuto {
		return 0, &pipeline.Autoscale{Max: c.Int("max-concurrency")}
	}
	return n, nil
}

// fixedWriters is the writers of the parts of a run that do not adjust
// them (--changes-only, --prune, the follow): --concurrency's number, or
// with auto pipeline.DefaultConcurrency, at most --max-concurrency.
func fixedWriters(c *cli.Context) int {
	n, auto := writersOf(c)
	if auto != nil {
		return min(pipeline.DefaultConcurrency, auto.Max)
	}
	return n
}

// MaxReaders bounds --readers: each is a PostgreSQL connection.
const MaxReaders = 64

// defaultReaders is --readers' default: one reader per CPU, at most 4
// (each also keeps a PostgreSQL backend busy).
func defaultReaders() int { return max(1, min(4, runtime.NumCPU())) }

func runMigrate(c *cli.Context) error {
	ctx := c.Context
	if err := checkMigrateFlags(c); err != nil {
		return err
	}
	shard, err := shardOf(c)
	if err != nil {
		return err
	}
	if shard.On() && c.Bool("follow") {
		return usageError{fmt.Errorf("--shard with --follow: one follow keeps the whole table in step; follow after the shards are done, from one process")}
	}
	if err := checkPrune(c); err != nil {
		return err
	}
	if err := checkChangesOnly(c); err != nil {
		return err
	}
	prog, closeProg, err := progressOf(c)
	if err != nil {
		return err
	}
	defer closeProg()
	path, err := requireMapping(c)
	if err != nil {
		return err
	}
	if c.Bool("dry-run") {
		return dryRun(c)
	}
	if c.Bool("changes-only") {
		return changesOnly(c)
	}
	// One run at a time per checkpoint (and its rejects file).
	release, err := lockCheckpoint(c.Path("checkpoint"))
	if err != nil {
		return err
	}
	defer release()
	// Created first, so that it describes this run however it ends; a
	// resumed run adds to it.
	rejects, err := createRejects(c.Path("rejects"), c.Bool("resume"))
	if err != nil {
		return err
	}
	defer rejects.Close()
	rf, err := openReportFiles(c)
	if err != nil {
		return err
	}
	defer rf.discard()
	s, err := open(c)
	if err != nil {
		return err
	}
	defer s.src.Close(ctx)
	// The checkpoint before the table: --resume without one (or with
	// another run's) is refused before anything is created.
	cp, err := startCheckpoint(c, path, s.m, s.src.Name(), s.plans)
	if err != nil {
		return err
	}
	var fl *following
	if c.Bool("follow") {
		if fl, err = startFollowing(c, s); err != nil {
			return err
		}
	}
	out, err := openSink(c, s)
	if err != nil {
		return err
	}
	if err := beforeLoad(c, s, cp, fl); err != nil {
		return err
	}
	if err := fl.begin(c, s); err != nil {
		return err
	}
	sum, err := fullLoad(c, s, cp, out, rejects, progress{prog, closeProg}, fl != nil)
	if err != nil {
		return err
	}
	if err := afterLoad(c, s, cp, fl, out, rejects, rf); err != nil {
		return err
	}
	if err := rejects.Close(); err != nil {
		return err
	}
	if t := sum.Total(); t.Rejected > 0 || fl.rejected() > 0 {
		return withCode(ExitRejected, fmt.Errorf("%d rows rejected: see %s", t.Rejected+fl.rejected(), rejects.path))
	}
	return nil
}

// beforeLoad readies cp for the full load: with --follow --resume
// --prune every item is loaded again (cp starts over), else a resumed run
// must write into the table cp was written for (checkTableIdentity).
func beforeLoad(c *cli.Context, s *session, cp *checkpointFile, fl *following) error {
	reload := fl != nil && fl.resume && c.Bool("prune")
	if reload {
		// Every item is loaded again in a new snapshot, and the stale
		// ones deleted, before following on.
		cp.Checkpoint = pipeline.NewCheckpoint(cp.Mapping, cp.Source, cp.Table, s.plans)
		fmt.Fprintln(c.App.ErrWriter, "--prune: loading every item again, then deleting the stale ones, before following on from the slot")
		// What the stream says of transactions committed before the
		// load's snapshot is in the table once it is loaded.
		var err error
		if fl.exactFrom, err = follow.CurrentLSN(c.Context, s.src.Conn()); err != nil {
			return err
		}
	}
	return checkTableIdentity(c, s, cp, c.Bool("resume") && !reload)
}

// afterLoad is what follows the full load: --prune, then the follow; or
// a sharded run's last word; or the verify in the load's snapshot.
func afterLoad(c *cli.Context, s *session, cp *checkpointFile, fl *following, out sinkOut, rejects *rejectFile, rf *reportFiles) error {
	if fl != nil {
		if c.Bool("prune") && s.client != nil {
			done, err := pruneStale(c, s, out)
			if err != nil {
				return err
			}
			done()
		}
		return fl.run(c, s, cp, out, rejects)
	}
	if shard := mustShard(c); shard.On() {
		fmt.Fprintf(c.App.ErrWriter, "shard %s done; run pg2dynamo verify once every shard is done (the table holds them all)\n", shard)
		return nil
	}
	if s.client == nil || c.Bool("no-verify") {
		return nil
	}
	// The same snapshot: what was read is what is checked, all of it (a
	// resumed run read only what was left).
	fmt.Fprintln(c.App.Writer)
	if c.Bool("prune") {
		done, err := pruneStale(c, s, out)
		if err != nil {
			return err
		}
		defer done() // its lists, until the verify's report is written
	}
	return compareAndReport(c, s, report.ModeVerify, 0, c.App.Writer, rf)
}

// progress is the run's progress display and its closing.
type progress struct {
	pipeline.Progress
	close func()
}

// fullLoad runs the full load: every entity from the snapshot begun,
// resuming what cp records, into out; then it saves cp, closes the
// progress display, prints the summary and, unless a follow goes on
// (following), closes the rejects file.
func fullLoad(c *cli.Context, s *session, cp *checkpointFile, out sinkOut, rejects *rejectFile, prog progress, following bool) (*pipeline.Summary, error) {
	ctx := c.Context
	fmt.Fprintf(c.App.ErrWriter, "migrating %s from %s to %s\n", countNoun(len(s.plans), "entity", "entities"), s.src.Name(), out.target)
	describeDuplicateCheck(c, s)
	conc, auto := writersOf(c)
	sum, runErr := pipeline.Run(ctx, pipeline.Postgres(s.src), s.m, s.plans, out.sink, pipeline.Options{
		Concurrency: conc, Auto: auto, OnReject: rejects.Write, Progress: prog.Progress,
		Readers: c.Int("readers"), SkipDuplicateCheck: c.Bool("no-duplicate-check"),
		Checkpoint: cp.Checkpoint, OnCheckpoint: cp.onCheckpoint, Shard: mustShard(c),
	})
	// The last progress, however the run ended.
	if err := cp.save(); err != nil && runErr == nil {
		runErr = err
	}
	prog.close()
	if sum != nil {
		printSummary(c.App.Writer, sum, out.stats)
	}
	if !following { // a follow lists rejects too
		if err := rejects.Close(); err != nil && runErr == nil {
			runErr = err
		}
	}
	if runErr != nil && ctx.Err() == nil {
		fmt.Fprintln(c.App.ErrWriter, "pg2dynamo: what was read before the error is written (see the summary); fix the cause and run again with --resume to finish")
	}
	return sum, runErr
}

// checkMigrateFlags refuses migrate's flags out of range (usage errors);
// --max-retries sets --max-attempts.
func checkMigrateFlags(c *cli.Context) error {
	if c.Args().Present() {
		return usageError{errUnexpectedArg(c)}
	}
	ints := []struct {
		flag    string
		lo, hi  int
		expects string
	}{
		{"max-concurrency", 1, MaxConcurrency, fmt.Sprintf("expected 1 to %d", MaxConcurrency)},
		{"readers", 1, MaxReaders, fmt.Sprintf("expected 1 to %d", MaxReaders)},
		{"max-write-units", 0, math.MaxInt, "expected a positive number (0: no cap)"},
		{"max-attempts", 1, math.MaxInt, "expected at least 1"},
	}
	if _, _, err := pipeline.ParseConcurrency(c.String("concurrency"), MaxConcurrency); err != nil {
		return usageError{err}
	}
	if c.IsSet("max-retries") {
		if n := c.Int("max-retries"); n < 0 {
			return usageError{fmt.Errorf("--max-retries %d: expected 0 or more", n)}
		}
		_ = c.Set("max-attempts", fmt.Sprint(c.Int("max-retries")+1))
	}
	for _, f := range ints {
		if n := c.Int(f.flag); n < f.lo || n > f.hi {
			return usageError{fmt.Errorf("--%s %d: %s", f.flag, n, f.expects)}
		}
	}
	for _, flag := range []string{"retry-deadline", "progress-interval"} {
		if d := c.Duration(flag); d <= 0 {
			return usageError{fmt.Errorf("--%s %s: expected a positive duration", flag, d)}
		}
	}
	if k := c.String("sink"); k != "dynamodb" && k != "null" {
		return usageError{fmt.Errorf("--sink %q: expected dynamodb or null", k)}
	}
	return nil
}

// dryRun is migrate --dry-run: what the run would change and cost, as
// pg2dynamo diff; nothing is written.
func dryRun(c *cli.Context) error {
	if err := checkReportFlags(c); err != nil {
		return err
	}
	rf, err := openReportFiles(c)
	if err != nil {
		return err
	}
	defer rf.discard()
	s, err := open(c)
	if err != nil {
		return err
	}
	defer s.src.Close(c.Context)
	if err := s.dynamo(c, nil); err != nil {
		return err
	}
	if err := s.src.Begin(c.Context); err != nil {
		return err
	}
	return compareAndReport(c, s, report.ModeDiff, c.Float64("price-per-million"), c.App.Writer, rf)
}

// sinkOut is where a migration writes: the sink, its description and its
// request counters (nil for the null sink).
type sinkOut struct {
	sink   load.Sink
	target string
	stats  func() load.Stats
	// ds is the DynamoDB sink (sink), for its conditional deletes; nil
	// for the null sink.
	ds *load.DynamoDB
}

// openSink returns --sink's sink. For DynamoDB it connects, makes sure the
// table exists (creating it with --create-table) and sets the retry
// deadline and the write-unit cap.
func openSink(c *cli.Context, s *session) (sinkOut, error) {
	if c.String("sink") == "null" {
		return sinkOut{sink: load.Null{}, target: "the null sink (nothing is written)"}, nil
	}
	m := s.m
	retries := new(atomic.Int64)
	if err := s.dynamo(c, retries); err != nil {
		return sinkOut{}, err
	}
	created, err := load.EnsureTable(c.Context, s.client, m, c.Bool("create-table"))
	if err != nil {
		return sinkOut{}, tableRefused(c.Context, s.client, m.Table.Name, err)
	}
	if created {
		fmt.Fprintf(c.App.ErrWriter, "created table %s\n", m.Table.Name)
	}
	if err := checkOwner(c, s, c.String("mapping"), created); err != nil {
		return sinkOut{}, err
	}
	ds := load.NewDynamoDB(s.client, m.Table.Name, m.Table.PartitionKey, m.Table.SortKey)
	ds.Deadline = c.Duration("retry-deadline")
	if testRetryBackoff > 0 {
		ds.Backoff = retry.NewExponentialJitterBackoff(testRetryBackoff)
	}
	if n := c.Int("max-write-units"); n > 0 {
		ds.LimitWriteUnits(n, func(item map[string]types.AttributeValue) int64 { return transform.WriteUnits(m, item) })
	}
	return sinkOut{sink: ds, ds: ds, target: "DynamoDB table " + m.Table.Name, stats: func() load.Stats {
		st := ds.Stats()
		st.Retries = retries.Load()
		return st
	}}, nil
}

// keysNotProvenUnique names, in mapping order, the entities whose keys the
// mapping and the tables' unique keys do not prove unique
// (transform.KeysUnique): the run-wide duplicate-key check covers them.
func (s *session) keysNotProvenUnique() []string {
	var names []string
	for i, ok := range transform.KeysUnique(s.m, s.plans) {
		if !ok {
			names = append(names, s.plans[i].Entity().Name)
		}
	}
	return names
}

// describeDuplicateCheck says which entities the run-wide duplicate-key
// check covers.
func describeDuplicateCheck(c *cli.Context, s *session) {
	if c.Bool("no-duplicate-check") {
		return
	}
	checked := s.keysNotProvenUnique()
	if len(checked) == 0 {
		fmt.Fprintln(c.App.ErrWriter, "duplicate-key check: not needed, every entity's keys are proven unique by the mapping and the tables' unique keys")
		return
	}
	fmt.Fprintf(c.App.ErrWriter, "duplicate-key check: on for %s (keys not proven unique: read one after another, so that the earlier row, in mapping then primary-key order, keeps a key; 11 to 21 bytes of memory per item)\n", strings.Join(checked, ", "))
}

// checkTableIdentity records in cp the table the run writes to
// (DescribeTable's TableId and CreationDateTime) or, resuming, refuses a
// table other than the one cp was written for: deleted and created again
// (an emptied DynamoDB Local, a restore), it does not hold what cp says
// is loaded. A usage error (exit 2): nothing is written.
func checkTableIdentity(c *cli.Context, s *session, cp *checkpointFile, resume bool) error {
	if s.client == nil {
		return nil
	}
	td, err := load.DescribeTable(c.Context, s.client, s.m.Table.Name)
	if err != nil || td == nil {
		return err
	}
	id, created := aws.ToString(td.TableId), aws.ToTime(td.CreationDateTime).UTC()
	if resume && (cp.TableID != "" || !cp.TableCreated.IsZero()) {
		if cp.TableID != id || !cp.TableCreated.Equal(created) {
			again := "migrate --prune without --resume"
			if c.Bool("follow") {
				again = "migrate --follow --resume --prune"
			}
			return usageError{fmt.Errorf("--resume: table %s is not the one checkpoint %s was written for (that one was created %s, this one %s): it was deleted and created again, or restored, so it lacks what the checkpoint records as loaded; run %s to load every item again and delete the stale ones",
				s.m.Table.Name, cp.path, cp.TableCreated.Format(time.RFC3339), created.Format(time.RFC3339), again)}
		}
		return nil
	}
	cp.TableID, cp.TableCreated = id, created
	return cp.save()
}

// startCheckpoint sets up the run's checkpoint and saves it: a fresh one,
// or, with --resume, the recorded one, which must be for the same mapping
// file, table and source.
func startCheckpoint(c *cli.Context, mappingFile string, m *mapping.Mapping, source string, plans []*transform.Plan) (*checkpointFile, error) {
	b, err := os.ReadFile(mappingFile)
	if err != nil {
		return nil, err
	}
	fp := pipeline.Fingerprint(b, m.Table.Name)
	if sh := mustShard(c); sh.On() {
		fp = pipeline.Fingerprint(b, m.Table.Name+" shard "+sh.String())
	}
	f := &checkpointFile{path: c.Path("checkpoint"), every: c.Duration("checkpoint-interval")}
	if !c.Bool("resume") {
		f.Checkpoint = pipeline.NewCheckpoint(fp, source, m.Table.Name, plans)
		return f, f.save()
	}
	if f.Checkpoint, err = loadCheckpoint(f.path); err != nil {
		return nil, err
	}
	if err := f.Check(fp, source); err != nil {
		return nil, usageError{fmt.Errorf("--resume: checkpoint %s: %w; run without --resume to start over", f.path, err)}
	}
	fmt.Fprintf(c.App.ErrWriter, "resuming from %s: %s\n", f.path, strings.Join(f.Describe(plans), ", "))
	return f, f.save()
}

// loadMapping loads the mapping file; a file that cannot be read is a usage
// error (exit 2), like an invalid one. It returns context.Cause(ctx) as
// soon as ctx is done: reading a file that blocks (a FIFO) or the YAML
// parser (which cannot be stopped; mapping's bounds limit it to about a
// second) is left to finish in the background.
func loadMapping(ctx context.Context, path string) (*mapping.Mapping, error) {
	return loadWith(ctx, path, mapping.LoadContext)
}

// loadWith runs load (mapping.LoadContext or mapping.LoadPartial) as
// loadMapping says: in the background, returning context.Cause(ctx) as
// soon as ctx is done, a file that cannot be read a usage error.
func loadWith(ctx context.Context, path string, load func(context.Context, string) (*mapping.Mapping, error)) (*mapping.Mapping, error) {
	type loaded struct {
		m   *mapping.Mapping
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		m, err := load(ctx, path)
		done <- loaded{m, err}
	}()
	var l loaded
	select {
	case l = <-done:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	var pe *fs.PathError
	if errors.As(l.err, &pe) {
		return nil, usageError{l.err}
	}
	return l.m, l.err
}

func progressFor(mode string, w io.Writer, interval time.Duration) (pipeline.Progress, func(), error) {
	if mode == "auto" {
		mode = "lines"
		// A terminal without a size (some CI ptys) cannot show bars: mpb
		// draws as many lines as the terminal has rows.
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			if width, height, err := term.GetSize(int(f.Fd())); err == nil && width > 0 && height > 0 {
				mode = "bars"
			}
		}
	}
	switch mode {
	case "bars":
		b := newBarProgress(w, nil)
		return b, sync.OnceFunc(b.Close), nil
	case "lines":
		l := newLineProgress(w, interval, nil)
		return l, sync.OnceFunc(l.Close), nil
	case "none":
		return nil, func() {}, nil
	}
	return nil, nil, usageError{fmt.Errorf("--progress %q: expected auto, bars, lines or none", mode)}
}

// printSummary prints the per-entity table: rows read = rows written + rows
// rejected (+ not written, a column shown only when the run stopped with
// rows read but not written); items written counts items (two per row for
// an entity with a mirror).
func printSummary(w io.Writer, s *pipeline.Summary, stats func() load.Stats) {
	total := s.Total()
	stopped := total.NotWritten > 0
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "entity\trows read\trows written\trows rejected\t"
	if stopped {
		head += "not written\t"
	}
	fmt.Fprintln(tw, head+"items written\telapsed\t")
	for _, e := range append(s.Entities, total) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t", e.Name, e.Rows, e.Written, e.Rejected)
		if stopped {
			fmt.Fprintf(tw, "%d\t", e.NotWritten)
		}
		fmt.Fprintf(tw, "%d\t%s\t\n", e.Items, e.Elapsed.Round(time.Millisecond))
	}
	tw.Flush()
	if stopped {
		fmt.Fprintf(w, "the run stopped: %d rows were read but not written; run again to write them\n", total.NotWritten)
	}
	if a := s.Autoscale; a != nil {
		undone := ""
		if a.Undone > 0 {
			undone = fmt.Sprintf(" (%d undone: the throttling went on as much with fewer writers)", a.Undone)
		}
		fmt.Fprintf(w, "writers %s (auto): %s on throttling%s\n", writerRange(a.Min, a.Max), countNoun(a.Halvings, "halving", "halvings"), undone)
	}
	if stats != nil {
		st := stats()
		fmt.Fprintf(w, "%d BatchWriteItem/PutItem requests, %d retried by the SDK (throttling, 5xx, network), %d UnprocessedItems re-sends, %.0f write units consumed\n",
			st.Requests, st.Retries, st.UnprocessedRetries, st.ConsumedWriteUnits)
	}
}

// writerRange is "2–24", or "8" when lo is hi.
func writerRange(lo, hi int) string {
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// rejectFile writes rejects as JSON Lines. It is a new file (see
// outputFile: mode 0600, never written through a link) published at the
// path when the run starts, before any reject is written, so it always
// describes the latest run, and after a crash it holds every reject
// written, as the checkpoint expects; a resumed run's file starts with
// the last one's content and lists no row twice (see createRejects).
type rejectFile struct {
	path string
	mu   sync.Mutex
	f    *outputFile
	enc  *json.Encoder
	// listed counts the rows the file listed before a resumed run, by
	// rowID; each absorbs one reject of the same row.
	listed map[uint64]int
	seed   maphash.Seed
}

// createRejects creates the rejects file at path, or, with appendTo (a
// resumed run), opens it to append. A resumed run reads its rows again from
// its checkpoint's positions, which trail what the earlier run read, so it
// may reject rows that run listed: those are not listed again. A last line
// cut short (the earlier run was killed while writing it) is dropped, and
// its row listed anew. Errors are usage errors naming the file.
func createRejects(path string, appendTo bool) (*rejectFile, error) {
	r := &rejectFile{path: path, seed: maphash.MakeSeed()}
	f, err := createOutput(path, appendTo)
	if err != nil {
		return nil, usageError{fmt.Errorf("rejects file: %w", err)}
	}
	if appendTo && f.tmp != "" { // a copy of the last run's file, not a device
		if err := r.readListed(f.f); err != nil {
			f.Discard()
			return nil, usageError{fmt.Errorf("rejects file %s: %w", path, err)}
		}
	}
	if err := f.Publish(); err != nil {
		f.Discard()
		return nil, usageError{fmt.Errorf("rejects file: %w", err)}
	}
	r.f, r.enc = f, json.NewEncoder(f)
	return r, nil
}

// readListed counts the rows f lists, truncates it after its last
// complete line and leaves its offset there.
func (r *rejectFile) readListed(f *os.File) error {
	r.listed = map[uint64]int{}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	br := bufio.NewReader(f)
	var whole int64 // bytes of complete lines
	for {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		whole += int64(len(line))
		var rej pipeline.Reject
		if json.Unmarshal(line, &rej) == nil {
			r.listed[r.rowID(rej)]++
		}
	}
	if err := f.Truncate(whole); err != nil {
		return err
	}
	_, err := f.Seek(whole, io.SeekStart)
	return err
}

// rowID identifies a reject's row: its entity and source key (which holds
// its table's primary key), not the reason, which may name the row that
// kept a duplicate key differently once a batch is cut elsewhere.
func (r *rejectFile) rowID(rej pipeline.Reject) uint64 {
	key, _ := json.Marshal(rej.SourceKey) // map keys sorted; values strings or nil
	var h maphash.Hash
	h.SetSeed(r.seed)
	h.WriteString(rej.Entity)
	h.WriteByte(0)
	h.Write(key)
	return h.Sum64()
}

// Write lists rej, unless a resumed run's rejects file listed its row
// already. Safe for concurrent use.
func (r *rejectFile) Write(rej pipeline.Reject) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.listed) > 0 {
		if id := r.rowID(rej); r.listed[id] > 0 {
			r.listed[id]--
			return nil
		}
	}
	if err := r.enc.Encode(rej); err != nil {
		return fmt.Errorf("rejects file %s: %w", r.path, err)
	}
	return nil
}

func (r *rejectFile) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
