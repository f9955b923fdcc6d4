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
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

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
BatchWriteItem (25 items a request, --concurrency writers).

Rows that cannot become items (a NULL key column, a number DynamoDB cannot hold)
are listed in the rejects file as JSON Lines {entity, source_key, reason}; the
summary reconciles rows read = rows written + rows rejected.

Example, against DynamoDB Local:
   AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local \
   pg2dynamo migrate --mapping examples/northwind/mapping.yaml \
      --source postgres://postgres@localhost/northwind \
      --endpoint-url http://localhost:8000 --region us-east-1 --create-table`,
		Flags: append([]cli.Flag{
			mappingFlag, sourceFlag, endpointFlag, regionFlag, profileFlag,
			tableFlag,
			&cli.BoolFlag{Name: "create-table", Usage: "create the table and its GSIs from the mapping if it does not exist, and wait until it is ACTIVE"},
			&cli.IntFlag{Name: "concurrency", Aliases: []string{"c"}, Value: pipeline.DefaultConcurrency, Usage: "number of parallel BatchWriteItem writers"},
			&cli.IntFlag{Name: "readers", Value: defaultReaders(), Usage: "PostgreSQL connections reading in parallel, all on one exported snapshot; a table of 40,000 rows or more is split into primary-key ranges, one per reader; the default is one per CPU, at most 4"},
			&cli.IntFlag{Name: "max-write-units", Usage: "cap the write capacity consumed per second (as DynamoDB reports it); throttling halves the rate, which then climbs back (default: no cap)"},
			&cli.IntFlag{Name: "max-retries", Usage: "retries per DynamoDB request after the first attempt (sets --max-attempts to this + 1)"},
			&cli.DurationFlag{Name: "retry-deadline", Value: 5 * time.Minute, Usage: "give up a batch (and stop the run, with its checkpoint) when its retries, throttling included, take longer than this"},
			&cli.IntFlag{Name: "max-attempts", Value: 10, Usage: "attempts per DynamoDB request on throttling, 5xx and network errors (exponential backoff with jitter)"},
			&cli.PathFlag{Name: "rejects", Value: "pg2dynamo-rejects.jsonl", TakesFile: true, Usage: "JSON Lines `FILE` listing rejected rows (written on every run: empty when none was rejected)"},
			&cli.StringFlag{Name: "progress", Value: "auto", Usage: "progress display: auto (bars on a terminal, lines otherwise), bars, lines or none"},
			&cli.DurationFlag{Name: "progress-interval", Value: 10 * time.Second, Usage: "how often --progress lines prints"},
			&cli.BoolFlag{Name: "no-duplicate-check", Usage: "do not remember every item key to catch two rows that render the same primary key (saves 11 to 21 bytes of memory per item of the entities whose keys are not proven unique, and lets them be read in parallel; duplicates within one batch are still caught)"},
			&cli.StringFlag{Name: "sink", Value: "dynamodb", Usage: "where items go: dynamodb, or null to read and transform everything and write nothing (for measuring)"},
			&cli.PathFlag{Name: "checkpoint", Value: "pg2dynamo-checkpoint.json", TakesFile: true, Usage: "`FILE` recording, as batches are acknowledged, how far each entity is written (each entity is read in primary-key order)"},
			&cli.DurationFlag{Name: "checkpoint-interval", Value: time.Second, Usage: "how often the checkpoint is rewritten while batches are acknowledged (and when an entity is done, and at the end); a crash redoes at most this much work"},
			&cli.BoolFlag{Name: "resume", Usage: "finish the run the checkpoint records (same mapping, table and source): skip entities done, read the others after their recorded position"},
			&cli.BoolFlag{Name: "dry-run", Usage: "write nothing: report what the run would change and cost (as pg2dynamo diff)"},
			&cli.BoolFlag{Name: "no-verify", Usage: "skip the verification (as pg2dynamo verify) that follows the load"},
			&cli.Float64Flag{Name: "price-per-million", Value: report.DefaultPricePerMillion, Usage: "with --dry-run: on-demand price in US dollars per million write request units"},
		}, reportFlags()[1:]...),
		Action: runMigrate,
	}
}

// MaxConcurrency bounds --concurrency.
const MaxConcurrency = 256

// MaxReaders bounds --readers: each is a PostgreSQL connection.
const MaxReaders = 64

// defaultReaders is --readers' default: one reader per CPU, at most 4
// (each also keeps a PostgreSQL backend busy).
func defaultReaders() int { return max(1, min(4, runtime.NumCPU())) }

func runMigrate(c *cli.Context) error {
	ctx := c.Context
	out, errw := c.App.Writer, c.App.ErrWriter
	if c.Args().Present() {
		return usageError{errUnexpectedArg(c)}
	}
	if n := c.Int("concurrency"); n < 1 || n > MaxConcurrency {
		return usageError{fmt.Errorf("--concurrency %d: expected 1 to %d", n, MaxConcurrency)}
	}
	if n := c.Int("readers"); n < 1 || n > MaxReaders {
		return usageError{fmt.Errorf("--readers %d: expected 1 to %d", n, MaxReaders)}
	}
	if n := c.Int("max-write-units"); n < 0 {
		return usageError{fmt.Errorf("--max-write-units %d: expected a positive number (0: no cap)", n)}
	}
	if c.IsSet("max-retries") {
		if n := c.Int("max-retries"); n < 0 {
			return usageError{fmt.Errorf("--max-retries %d: expected 0 or more", n)}
		}
		_ = c.Set("max-attempts", fmt.Sprint(c.Int("max-retries")+1))
	}
	if d := c.Duration("retry-deadline"); d <= 0 {
		return usageError{fmt.Errorf("--retry-deadline %s: expected a positive duration", d)}
	}
	if n := c.Int("max-attempts"); n < 1 {
		return usageError{fmt.Errorf("--max-attempts %d: expected at least 1", n)}
	}
	if d := c.Duration("progress-interval"); d <= 0 {
		return usageError{fmt.Errorf("--progress-interval %s: expected a positive duration", d)}
	}
	sinkKind := c.String("sink")
	if sinkKind != "dynamodb" && sinkKind != "null" {
		return usageError{fmt.Errorf("--sink %q: expected dynamodb or null", sinkKind)}
	}
	prog, closeProg, err := progressFor(c.String("progress"), errw, c.Duration("progress-interval"))
	if err != nil {
		return err
	}
	defer closeProg()
	path, err := requireMapping(c)
	if err != nil {
		return err
	}
	// One run at a time per checkpoint (and its rejects file).
	if !c.Bool("dry-run") {
		release, err := lockCheckpoint(c.Path("checkpoint"))
		if err != nil {
			return err
		}
		defer release()
	}
	// Created first, so that it describes this run however it ends; a
	// resumed run adds to it; a dry run writes nothing.
	var rejects *rejectFile
	if !c.Bool("dry-run") {
		if rejects, err = createRejects(c.Path("rejects"), c.Bool("resume")); err != nil {
			return err
		}
		defer rejects.Close()
	} else if err := checkReportFlags(c); err != nil {
		return err
	}
	s, err := open(c)
	if err != nil {
		return err
	}
	defer s.src.Close(ctx)
	m, src, plans := s.m, s.src, s.plans

	if c.Bool("dry-run") {
		if err := s.dynamo(c, nil); err != nil {
			return err
		}
		if err := src.Begin(ctx); err != nil {
			return err
		}
		return compareAndReport(c, s, report.ModeDiff, c.Float64("price-per-million"), out)
	}

	// The checkpoint before the table: --resume without one (or with
	// another run's) is refused before anything is created.
	cp, skip, ranges, err := startCheckpoint(c, path, m, src.Name(), plans)
	if err != nil {
		return err
	}

	var sink load.Sink = load.Null{}
	var stats func() load.Stats
	var attempts atomic.Int64
	target := "the null sink (nothing is written)"
	if sinkKind == "dynamodb" {
		if err := s.dynamo(c, &attempts); err != nil {
			return err
		}
		created, err := load.EnsureTable(ctx, s.client, m, c.Bool("create-table"))
		if err != nil {
			return tableRefused(err)
		}
		if created {
			fmt.Fprintf(errw, "created table %s\n", m.Table.Name)
		}
		ds := load.NewDynamoDB(s.client, m.Table.Name, m.Table.PartitionKey, m.Table.SortKey)
		ds.Deadline = c.Duration("retry-deadline")
		if n := c.Int("max-write-units"); n > 0 {
			ds.LimitWriteUnits(n, func(item map[string]types.AttributeValue) int64 { return transform.WriteUnits(m, item) })
		}
		sink, target = ds, "DynamoDB table "+m.Table.Name
		stats = func() load.Stats {
			st := ds.Stats()
			st.Retries = attempts.Load() - st.Requests
			return st
		}
	}

	if err := src.Begin(ctx); err != nil {
		return err
	}
	fmt.Fprintf(errw, "migrating %d entities from %s to %s\n", len(plans), src.Name(), target)
	if !c.Bool("no-duplicate-check") {
		var checked []string
		for i, ok := range transform.KeysUnique(m, plans) {
			if !ok {
				checked = append(checked, plans[i].Entity().Name)
			}
		}
		if len(checked) == 0 {
			fmt.Fprintln(errw, "duplicate-key check: not needed, every entity's keys are proven unique by the mapping and the tables' unique keys")
		} else {
			fmt.Fprintf(errw, "duplicate-key check: on for %s (keys not proven unique: read one after another, so that the earlier row, in mapping then primary-key order, keeps a key; 11 to 21 bytes of memory per item)\n", strings.Join(checked, ", "))
		}
	}
	sum, runErr := pipeline.Run(ctx, src, m, plans, sink, pipeline.Options{
		Concurrency: c.Int("concurrency"), OnReject: rejects.Write, Progress: prog,
		Readers: c.Int("readers"), SkipDuplicateCheck: c.Bool("no-duplicate-check"), Skip: skip, Ranges: ranges,
		OnProgress: func(entity int, rs []pipeline.Range) error {
			ep := cp.Entities[plans[entity].Entity().Name]
			ep.Ranges, ep.After, ep.Done = rs, nil, true
			for _, r := range rs {
				ep.Done = ep.Done && r.Done
			}
			// Saved at most once an interval (and when an entity is
			// done): rewriting the file for every batch cost more CPU
			// than the transform. A crash redoes at most an interval.
			if !ep.Done && time.Since(cp.Updated) < c.Duration("checkpoint-interval") {
				return nil
			}
			return cp.save()
		},
	})
	// The last progress, however the run ended.
	if err := cp.save(); err != nil && runErr == nil {
		runErr = err
	}
	closeProg()
	if sum != nil {
		printSummary(out, sum, stats)
	}
	if err := rejects.Close(); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		if ctx.Err() == nil {
			fmt.Fprintln(errw, "pg2dynamo: what was read before the error is written (see the summary); fix the cause and run again with --resume to finish")
		}
		return runErr
	}
	if s.client != nil && !c.Bool("no-verify") {
		// The same snapshot: what was read is what is checked, all of it
		// (a resumed run read only what was left).
		fmt.Fprintln(out)
		for _, p := range plans {
			p.WithPosition(nil)
		}
		if err := compareAndReport(c, s, report.ModeVerify, 0, out); err != nil {
			return err
		}
	}
	if t := sum.Total(); t.Rejected > 0 {
		return withCode(ExitRejected, fmt.Errorf("%d rows rejected: see %s", t.Rejected, rejects.path))
	}
	return nil
}

// startCheckpoint sets up the run's checkpoint: a fresh one, or, with
// --resume, the recorded one, which must be for the same mapping, table and
// source. Every plan reads in primary-key order; skip marks the entities
// already done, ranges the recorded ranges of the others (nil: split
// afresh).
func startCheckpoint(c *cli.Context, mappingFile string, m *mapping.Mapping, source string, plans []*transform.Plan) (*checkpoint, []bool, [][]pipeline.Range, error) {
	fp, err := fingerprint(mappingFile, m.Table.Name)
	if err != nil {
		return nil, nil, nil, err
	}
	path := c.Path("checkpoint")
	cp := &checkpoint{Version: 2, Mapping: fp, Source: source, Table: m.Table.Name, Entities: map[string]*entityProgress{}, path: path}
	if c.Bool("resume") {
		if cp, err = loadCheckpoint(path); err != nil {
			return nil, nil, nil, err
		}
		switch {
		case cp.Mapping != fp:
			return nil, nil, nil, usageError{fmt.Errorf("--resume: checkpoint %s was written for another mapping file or table; run without --resume to start over", path)}
		case cp.Source != source:
			return nil, nil, nil, usageError{fmt.Errorf("--resume: checkpoint %s was written for source %s, not %s", path, cp.Source, source)}
		}
		cp.Version = 2
	}
	skip := make([]bool, len(plans))
	ranges := make([][]pipeline.Range, len(plans))
	var resumed []string
	for i, p := range plans {
		name := p.Entity().Name
		ep := cp.Entities[name]
		if ep == nil {
			ep = &entityProgress{}
			cp.Entities[name] = ep
		}
		if len(ep.After) > 0 && len(ep.Ranges) == 0 { // version 1
			ep.Ranges, ep.After = []pipeline.Range{{After: ep.After}}, nil
		}
		ordered := p.WithPosition(nil)
		switch {
		case ep.Done:
			skip[i] = true
			resumed = append(resumed, name+" (done)")
		case ordered && len(ep.Ranges) > 0:
			ranges[i] = ep.Ranges
			var at []string
			for _, r := range ep.Ranges {
				switch {
				case r.Done:
					at = append(at, "done")
				case len(r.After) > 0:
					at = append(at, fmt.Sprintf("after %v", r.After))
				default:
					at = append(at, "from the start")
				}
			}
			resumed = append(resumed, fmt.Sprintf("%s (%s)", name, strings.Join(at, "; ")))
		}
	}
	if c.Bool("resume") {
		fmt.Fprintf(c.App.ErrWriter, "resuming from %s: %s\n", path, strings.Join(resumed, ", "))
	}
	return cp, skip, ranges, cp.save()
}

// loadMapping loads the mapping file; a file that cannot be read is a usage
// error (exit 2), like an invalid one. It returns context.Cause(ctx) as
// soon as ctx is done: reading a file that blocks (a FIFO) or the YAML
// parser (which cannot be stopped; mapping's bounds limit it to about a
// second) is left to finish in the background.
func loadMapping(ctx context.Context, path string) (*mapping.Mapping, error) {
	type loaded struct {
		m   *mapping.Mapping
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		m, err := mapping.LoadContext(ctx, path)
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
		// A terminal without a size (some CI ptys) cannot show bars.
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			if width, _, err := term.GetSize(int(f.Fd())); err == nil && width > 0 {
				mode = "bars"
			}
		}
	}
	switch mode {
	case "bars":
		b := newBarProgress(w)
		return b, sync.OnceFunc(b.Close), nil
	case "lines":
		l := newLineProgress(w, interval)
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
	if stats != nil {
		st := stats()
		fmt.Fprintf(w, "%d BatchWriteItem/PutItem requests, %d retried by the SDK (throttling, 5xx, network), %d UnprocessedItems re-sends, %.0f write units consumed\n",
			st.Requests, st.Retries, st.UnprocessedRetries, st.ConsumedWriteUnits)
	}
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
