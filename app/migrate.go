package app

import (
	"fmt"
	"runtime"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
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
			mappingFlag(), sourceFlag(), endpointFlag(), regionFlag(), profileFlag(), maxBackoffFlag(),
			tableFlag(),
			&cli.BoolFlag{Name: "create-table", Usage: "create the table and its GSIs from the mapping if it does not exist, and wait until it is ACTIVE"},
			&cli.StringFlag{Name: "concurrency", Aliases: []string{"c"}, Value: "auto", Usage: "parallel BatchWriteItem writers: a number (1 to 256), or auto to start with 4 and add writers while items/s rises, halving them (and pacing the writes) when DynamoDB throttles, up to --max-concurrency (the full load, --changes-only, --prune and the follow alike)"},
			&cli.IntFlag{Name: "max-concurrency", Value: pipeline.DefaultMaxConcurrency, Action: between("max-concurrency", 1, MaxConcurrency), Usage: "with --concurrency auto: the most writers"},
			&cli.IntFlag{Name: "readers", Value: defaultReaders(), Action: between("readers", 1, MaxReaders), Usage: "PostgreSQL connections reading in parallel, all on one exported snapshot; a table of twice --min-range-rows or more is split into primary-key ranges, one per reader; the default is one per CPU, at most 4"},
			minRangeRowsFlag(),
			&cli.IntFlag{Name: "max-write-units", Action: atLeast("max-write-units", 0, "expected a positive number (0: no cap)"), Usage: "cap the write capacity consumed per second (as DynamoDB reports it); throttling halves the rate, which then climbs back", DefaultText: "no cap"},
			&cli.IntFlag{Name: "max-retries", DefaultText: "9, from --max-attempts 10", Usage: "retries per DynamoDB request after the first attempt (sets --max-attempts to this + 1)"},
			&cli.DurationFlag{Name: "retry-deadline", Value: 5 * time.Minute, Action: positive("retry-deadline"), Usage: "give up a batch (and stop the run, with its checkpoint) when its retries, throttling included, take longer than this"},
			maxAttemptsFlag(),
			&cli.PathFlag{Name: "rejects", Value: "pg2dynamo-rejects.jsonl", TakesFile: true, Usage: "JSON Lines `FILE` listing rejected rows (written on every run: empty when none was rejected)"},
			&cli.BoolFlag{Name: "no-duplicate-check", Usage: "do not remember every item key to catch two rows that render the same primary key (saves 11 to 21 bytes of memory per item of the entities whose keys are not proven unique, and lets them be read in parallel; duplicates within one batch are still caught)"},
			&cli.StringFlag{Name: "sink", Value: "dynamodb", Usage: "where items go: dynamodb, or null to read and transform everything and write nothing (for measuring; not with --prune or --changes-only)"},
			&cli.PathFlag{Name: "checkpoint", Value: "pg2dynamo-checkpoint.json", TakesFile: true, Usage: "`FILE` recording, as batches are acknowledged, how far each entity is written (each entity is read in primary-key order)"},
			&cli.DurationFlag{Name: "checkpoint-interval", Value: time.Second, Usage: "how often the checkpoint is rewritten while batches are acknowledged (and when an entity is done, and at the end); a crash redoes at most this much work"},
			&cli.BoolFlag{Name: "resume", Usage: "finish the run the checkpoint records (same mapping, table and source): skip entities done, read the others after their recorded position"},
			&cli.BoolFlag{Name: "dry-run", Usage: "write nothing: report what the run would change and cost (as pg2dynamo diff)"},
			&cli.BoolFlag{Name: "no-verify", Usage: "skip the verification (as pg2dynamo verify) that follows the load"},
			pruneFlag(),
			changesOnlyFlag(),
			previousMappingFlag("with --changes-only, or --follow --resume: apply the mapping (--mapping), a new version of the table's own mapping (the same name), to the table in place. " +
				"The table's tags (or the follow's checkpoint) must record this file's SHA-256. Changes the table cannot take in place are refused (its key attributes or their types, a GSI's keys): migrate into a new table then. " +
				"New GSIs are created first (UpdateTable, one at a time, each waited for until backfilled); only the entities whose items change are compared with the table, their new and changed items put, their stale and re-keyed items deleted, and the items of removed entities deleted; the table is then tagged with the new version. Not with --prune, which loads every item again"),
			&cli.BoolFlag{Name: "drop-gsis", Usage: "with --previous-mapping: delete the GSIs the previous version declares and this one does not, once the items are in line (kept otherwise: an application may still query them)"},
			&cli.Float64Flag{Name: "price-per-million", Value: transform.PricePerMillionWrites, Usage: "with --dry-run: on-demand price in US dollars per million write request units"},
			&cli.Float64Flag{Name: "import-price-per-gb", Value: transform.ImportPricePerGB, Usage: "with --dry-run: ImportTable's price in US dollars per GB of source data, uncompressed"},
		}, append(append(append(append(progressFlags(), shardFlags()...), followFlags()...), ownerFlags()...), reportFlags()[1:]...)...),
		Action: runMigrate,
	}
}

func pruneFlag() cli.Flag {
	return &cli.BoolFlag{Name: "prune", Usage: "after the load, compare the whole table with the source and delete the stale items: " +
		"of the mapping's types, no longer produced by the source (a deleted row, a changed key). Items of other types are never touched; " +
		"each delete is conditional on the item's type. The verify that follows checks the result (pg2dynamo diff lists what would go). " +
		"With --follow, before following; with --follow --resume, every item is loaded again first: the way to go on after a follow stopped on a TRUNCATE, a lowered replica identity or a lost table"}
}

func changesOnlyFlag() cli.Flag {
	return &cli.BoolFlag{Name: "changes-only", Usage: "write only what differs: derive every item from the source and compare it with the table, " +
		"as diff and verify do (in bounded memory), putting each new and changed item as the comparison finds it; then delete the stale items " +
		"(each conditional on its type, as --prune), read every write back and run the access patterns (--no-verify skips those). " +
		"Interrupted, run it again: its comparison finds what is left. Not with --follow, --shard, --prune or --resume"}
}

// previousMappingFlag is --previous-mapping, with usage saying what it
// does in its command.
func previousMappingFlag(usage string) cli.Flag {
	return &cli.PathFlag{Name: "previous-mapping", TakesFile: true, Usage: "the mapping `FILE` the table was written with, the version before --mapping: " + usage}
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
	cfg, err := config(c)
	if err != nil {
		return err
	}
	return engine.Migrate(c.Context, cfg, engine.MigrateOptions{
		LoadOptions: loadOptions(c, shard), WriteOptions: writeOptions(c), ReportOptions: reportOptions(c),
		Checkpoint: c.Path("checkpoint"), CheckpointInterval: c.Duration("checkpoint-interval"), Resume: c.Bool("resume"),
		NoVerify: c.Bool("no-verify"), Prune: c.Bool("prune"), ChangesOnly: c.Bool("changes-only"), DryRun: c.Bool("dry-run"),
		Follow: c.Bool("follow"), FollowOptions: followOptions(c),
		EvolveOptions: engine.EvolveOptions{PreviousMapping: c.Path("previous-mapping"), DropGSIs: c.Bool("drop-gsis")},
	})
}

// checkMigrateFlags refuses what the flags' own Actions cannot: an
// argument, --concurrency and --sink out of their words, --max-retries
// below 0 (which sets --max-attempts).
func checkMigrateFlags(c *cli.Context) error {
	if c.Args().Present() {
		return usageError{errUnexpectedArg(c)}
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
	if k := c.String("sink"); k != "dynamodb" && k != "null" {
		return usageError{fmt.Errorf("--sink %q: expected dynamodb or null", k)}
	}
	return nil
}

// ownerFlags are migrate's flags that let a run write into a table that
// looks like someone else's.
func ownerFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "allow-other-mapping", Usage: "write into a table tagged for a mapping of another name (pg2dynamo:name): refused otherwise, before anything is written"},
		&cli.BoolFlag{Name: "allow-other-items", Usage: "write into an untagged table whose items are none of the mapping's types: refused otherwise, before anything is written"},
	}
}
