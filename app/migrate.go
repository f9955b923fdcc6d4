package app

import (
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/report"
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
			mappingFlag(), sourceFlag(), endpointFlag(), regionFlag(), profileFlag(), maxBackoffFlag(),
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

// MaxReaders bounds --readers: each is a PostgreSQL connection.
const MaxReaders = 64

// defaultReaders is --readers' default: one reader per CPU, at most 4
// (each also keeps a PostgreSQL backend busy).
func defaultReaders() int { return max(1, min(4, runtime.NumCPU())) }

func runMigrate(c *cli.Context) error {
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
	cfg, err := config(c)
	if err != nil {
		return err
	}
	if c.Bool("dry-run") || c.Bool("changes-only") {
		if err := checkReportFlags(c); err != nil {
			return err
		}
	}
	return engine.Migrate(c.Context, cfg, engine.MigrateOptions{
		LoadOptions: loadOptions(c, shard), WriteOptions: writeOptions(c), ReportOptions: reportOptions(c),
		Checkpoint: c.Path("checkpoint"), CheckpointInterval: c.Duration("checkpoint-interval"), Resume: c.Bool("resume"),
		NoVerify: c.Bool("no-verify"), Prune: c.Bool("prune"), ChangesOnly: c.Bool("changes-only"), DryRun: c.Bool("dry-run"),
		Follow: c.Bool("follow"), FollowOptions: followOptions(c),
	})
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
