package app

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/export"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write the items as DynamoDB JSON files on S3 (or a local directory), for ImportTable or StartBulkPutItems",
		UsageText: "pg2dynamo export --mapping FILE --to s3://BUCKET/PREFIX/ [--source URL] [options]",
		Description: `export reads the source in one snapshot and derives every item exactly as
migrate does (the same checks: rejects file, run-wide duplicate keys, items over
400 KB), but writes them as DynamoDB JSON, one {"Item": {...}} a line, the format
ImportTable and StartBulkPutItems read, instead of calling BatchWriteItem:

  PREFIX/data/00001.json.gz …   gzip (--compression GZIP, the default), ZSTD or NONE
  PREFIX/manifest.json           items per entity, objects, bytes, the mapping's
                                 SHA-256, the snapshot time; written last

Objects hold at most --object-size bytes of JSON before compression; --objects
are written at a time, each batch of 25 items going to the next in turn, and
each object's items are shuffled 128 KiB at a time: loaded in parallel, the
objects spread their writes over the table's partitions. Objects stream to S3 with
multipart uploads (5 MiB parts): no object is held in memory or on disk whole.
An export without manifest.json did not finish. Each export needs a prefix of
its own (DynamoDB loads every object under data/): one that already holds
data objects or a manifest, other than its sibling shards' (finished or under
way), is refused. A failed export removes what it wrote: run it again.

Exit code 0 when every row was exported, 3 when some were rejected (see
--rejects), 2 for a usage error (nothing written), 1 on any other failure, 130
or 143 when stopped by SIGINT or SIGTERM.

Example:
   pg2dynamo export --mapping mapping.yaml --source postgres://… \
      --to s3://my-bucket/exports/2026-11-23/ --region eu-west-1`,
		Flags: append([]cli.Flag{
			mappingFlag(), sourceFlag(), regionFlag(), profileFlag(), tableFlag(),
			&cli.StringFlag{Name: "to", Usage: "where the files go, a `URL`: s3://BUCKET/PREFIX/ or file:///DIR/ (required)"},
			&cli.StringFlag{Name: "s3-endpoint-url", Usage: "an S3-compatible server's `URL` instead of AWS's (path-style addressing)"},
			&cli.StringFlag{Name: "compression", Value: export.GZIP, Usage: "the objects' compression, `KIND`: GZIP (its fastest level), ZSTD or NONE"},
			&cli.Int64Flag{Name: "object-size", Value: export.DefaultObjectBytes, Action: within[int64]("object-size", 1<<20, export.MaxObjectBytes, "expected 1 MiB (1048576) to 4 TiB (4398046511104): an S3 object holds at most 5 TiB"), Usage: fmt.Sprintf("most `BYTES` of DynamoDB JSON in one object, before compression (an import reads at most %d objects; S3 parts are a 9,000th of it, at least 5 MiB, one buffered per object written)", export.MaxObjects)},
			&cli.IntFlag{Name: "objects", Value: export.DefaultSlots, Action: between("objects", 1, 256), Usage: "`N` objects written at a time (each holds up to 128 KiB of items to shuffle, and a compressor)"},
			&cli.StringFlag{Name: "concurrency", Aliases: []string{"c"}, Value: strconv.Itoa(pipeline.DefaultConcurrency), Usage: "parallel writers encoding and compressing items into the objects: a number (1 to 256), or auto to start with 4 and add writers while items/s rises, up to --max-concurrency (each writer holds a batch waiting for it)"},
			&cli.IntFlag{Name: "max-concurrency", Value: pipeline.DefaultMaxConcurrency, Action: between("max-concurrency", 1, MaxConcurrency), Usage: "with --concurrency auto: the most writers"},
			&cli.IntFlag{Name: "readers", Value: defaultReaders(), Action: between("readers", 1, MaxReaders), Usage: "PostgreSQL connections reading in parallel, all on one exported snapshot"},
			minRangeRowsFlag(),
			&cli.PathFlag{Name: "rejects", Value: "pg2dynamo-rejects.jsonl", TakesFile: true, Usage: "JSON Lines `FILE` listing rejected rows"},
			&cli.BoolFlag{Name: "no-duplicate-check", Usage: "do not remember every item key to catch two rows that render the same primary key"},
		}, append(progressFlags(), shardFlags()...)...),
		Action: runExport,
	}
}

func runExport(c *cli.Context) error {
	loc, compression, err := checkExportFlags(c)
	if err != nil {
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
	n, auto := concurrency(c)
	return engine.Export(c.Context, cfg, engine.ExportOptions{LoadOptions: loadOptions(c, shard), To: loc, Compression: compression,
		Objects: c.Int("objects"), ObjectSize: c.Int64("object-size"), Concurrency: n, Auto: auto})
}

// checkExportFlags refuses export's flags out of range (usage errors);
// it returns --to and --compression, parsed.
func checkExportFlags(c *cli.Context) (export.Location, string, error) {
	if c.Args().Present() {
		return export.Location{}, "", usageError{errUnexpectedArg(c)}
	}
	to := c.String("to")
	if to == "" {
		return export.Location{}, "", usageError{fmt.Errorf("--to is required: s3://BUCKET/PREFIX/ or file:///DIR/")}
	}
	loc, err := export.ParseLocation(to)
	if err != nil {
		return loc, "", usageError{fmt.Errorf("--to %w", err)}
	}
	if _, _, err := pipeline.ParseConcurrency(c.String("concurrency"), MaxConcurrency); err != nil {
		return loc, "", usageError{err}
	}
	compression := strings.ToUpper(c.String("compression"))
	if compression != export.GZIP && compression != export.ZSTD && compression != export.NONE {
		return loc, "", usageError{fmt.Errorf("--compression %q: expected GZIP, ZSTD or NONE", c.String("compression"))}
	}
	return loc, compression, nil
}
