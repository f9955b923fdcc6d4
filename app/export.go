package app

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/urfave/cli/v2"

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
are written at a time, each item going to one by a hash of its key, and each
object's items are shuffled 256 KiB at a time: loaded in parallel, the objects
spread their writes over the table's partitions. Objects stream to S3 with
multipart uploads (5 MiB parts): no object is held in memory or on disk whole.
An export without manifest.json did not finish. Each export needs a prefix of
its own (DynamoDB loads every object under data/): one that already holds
data objects or a manifest, other than its sibling shards' (finished or under
way), is refused. A failed export removes what it wrote: run it again.

Exit code 0 when every row was exported, 3 when some were rejected (see
--rejects), 2 for a usage error (nothing written), 1 on any other failure.

Example:
   pg2dynamo export --mapping mapping.yaml --source postgres://… \
      --to s3://my-bucket/exports/2026-11-23/ --region eu-west-1`,
		Flags: append([]cli.Flag{
			mappingFlag(), sourceFlag(), regionFlag(), profileFlag(), tableFlag(),
			&cli.StringFlag{Name: "to", Usage: "where the files go, a `URL`: s3://BUCKET/PREFIX/ or file:///DIR/ (required)"},
			&cli.StringFlag{Name: "s3-endpoint-url", Usage: "an S3-compatible server's `URL` instead of AWS's (path-style addressing)"},
			&cli.StringFlag{Name: "compression", Value: export.GZIP, Usage: "the objects' compression, `KIND`: GZIP (its fastest level), ZSTD or NONE"},
			&cli.Int64Flag{Name: "object-size", Value: export.DefaultObjectBytes, Usage: fmt.Sprintf("most `BYTES` of DynamoDB JSON in one object, before compression (an import reads at most %d objects)", export.MaxObjects)},
			&cli.IntFlag{Name: "objects", Value: export.DefaultSlots, Usage: "`N` objects written at a time (each holds up to 256 KiB of items to shuffle, and a compressor)"},
			&cli.IntFlag{Name: "readers", Value: defaultReaders(), Usage: "PostgreSQL connections reading in parallel, all on one exported snapshot"},
			&cli.PathFlag{Name: "rejects", Value: "pg2dynamo-rejects.jsonl", TakesFile: true, Usage: "JSON Lines `FILE` listing rejected rows"},
			&cli.BoolFlag{Name: "no-duplicate-check", Usage: "do not remember every item key to catch two rows that render the same primary key"},
		}, append(progressFlags(), shardFlags()...)...),
		Action: runExport,
	}
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
	if n := c.Int("readers"); n < 1 || n > MaxReaders {
		return loc, "", usageError{fmt.Errorf("--readers %d: expected 1 to %d", n, MaxReaders)}
	}
	if n := c.Int("objects"); n < 1 || n > 256 {
		return loc, "", usageError{fmt.Errorf("--objects %d: expected 1 to 256", n)}
	}
	if n := c.Int64("object-size"); n < 1<<20 {
		return loc, "", usageError{fmt.Errorf("--object-size %d: expected at least 1 MiB (1048576)", n)}
	}
	compression := strings.ToUpper(c.String("compression"))
	if compression != export.GZIP && compression != export.ZSTD && compression != export.NONE {
		return loc, "", usageError{fmt.Errorf("--compression %q: expected GZIP, ZSTD or NONE", c.String("compression"))}
	}
	return loc, compression, nil
}

func runExport(c *cli.Context) error {
	ctx := c.Context
	loc, compression, err := checkExportFlags(c)
	if err != nil {
		return err
	}
	shard, err := shardOf(c)
	if err != nil {
		return err
	}
	path, err := requireMapping(c)
	if err != nil {
		return err
	}
	prog, closeProg, err := progressOf(c)
	if err != nil {
		return err
	}
	defer closeProg()
	rejects, err := createRejects(c.Path("rejects"), false)
	if err != nil {
		return err
	}
	defer rejects.Close()
	s, err := open(c)
	if err != nil {
		return err
	}
	defer s.src.Close(ctx)
	var client *s3.Client
	if loc.Dir == "" {
		if client, err = s3Client(c); err != nil {
			return err
		}
	} else if err := os.MkdirAll(loc.Dir, 0o755); err != nil {
		return usageError{fmt.Errorf("--to %s: %w", loc, err)}
	}
	store := export.NewStore(client, loc)
	if err := beginSnapshot(c, s); err != nil {
		return err
	}
	opts := export.Options{ObjectBytes: c.Int64("object-size"), Slots: c.Int("objects"), Compression: compression}
	manifestKey := export.ManifestKey
	if shard.On() {
		// The shards' objects sit side by side under data/, which an
		// import reads whole; each shard has a manifest of its own.
		tag := export.ShardTag(shard.Index, shard.Count)
		opts.Prefix, manifestKey = tag+"-", "manifest-"+tag+".json"
	}
	man := &export.Manifest{Format: "DYNAMODB_JSON", Compression: compression, Table: s.m.Table.Name,
		PartitionKey: s.m.Table.PartitionKey, SortKey: s.m.Table.SortKey, Source: s.src.Name()}
	if err := s.src.Conn().QueryRow(ctx, "SELECT now()").Scan(&man.SnapshotTime); err != nil {
		return fmt.Errorf("snapshot time: %w", err)
	}
	if man.MappingHash, err = fileSHA256(path); err != nil {
		return err
	}
	if shard.On() {
		man.Shard = shard.String()
	}
	man.Snapshot = c.String("snapshot")
	if err := checkFreshDestination(c, store, loc, shard); err != nil {
		return err
	}
	sink, err := export.NewSink(ctx, store, [2]string{s.m.Table.PartitionKey, s.m.Table.SortKey}, len(s.plans), opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "exporting %d entities from %s to %s\n", len(s.plans), s.src.Name(), loc)
	describeDuplicateCheck(c, s)
	sum, runErr := pipeline.Run(ctx, pipeline.Postgres(s.src), s.m, s.plans, sink, pipeline.Options{
		OnReject: rejects.Write, Progress: prog, Readers: c.Int("readers"), SkipDuplicateCheck: c.Bool("no-duplicate-check"),
		Shard: shard,
	})
	closeProg()
	if sum != nil {
		printSummary(c.App.Writer, sum, nil)
	}
	if runErr != nil {
		return abortExport(c, sink, loc, runErr)
	}
	if err := completeExport(c, s, sink, sum, man, store, manifestKey); err != nil {
		return abortExport(c, sink, loc, err)
	}
	return finishExport(c, man, store, loc, manifestKey, rejects)
}

// abortExport removes what a failed export wrote (its objects, complete
// or not: Sink.Abort), so that it can run again into the same place, even
// when interrupted; it returns err, the failure, and what could not be
// removed.
func abortExport(c *cli.Context, sink *export.Sink, loc export.Location, err error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Context), abortTimeout)
	defer cancel()
	left, aerr := sink.Abort(ctx)
	if aerr != nil {
		return errors.Join(err, fmt.Errorf("removing what the export wrote failed, %s left at %s (%s): delete them before running it again: %w",
			countNoun(len(left), "object", "objects"), loc, strings.Join(head(left, 3), ", "), aerr))
	}
	fmt.Fprintf(c.App.ErrWriter, "export failed; what it wrote to %s is removed: run it again once the cause is fixed\n", loc)
	return err
}

// abortTimeout bounds the removal of a failed export's objects.
const abortTimeout = time.Minute

// completeExport completes the objects and writes the manifest, last.
func completeExport(c *cli.Context, s *session, sink *export.Sink, sum *pipeline.Summary, man *export.Manifest,
	store export.Store, manifestKey string) error {
	objects, perEntity, err := sink.Close()
	if err != nil {
		return err
	}
	man.Objects = objects
	for i, p := range s.plans {
		man.Entities = append(man.Entities, export.EntityItems{Entity: p.Entity().Name, Type: p.Entity().Type, Items: perEntity[i]})
	}
	man.Sum()
	man.Rejected = sum.Total().Rejected
	man.Finished = time.Now().UTC()
	return man.Write(c.Context, store, manifestKey)
}

// finishExport says what was exported; rows rejected give ExitRejected.
func finishExport(c *cli.Context, man *export.Manifest, store export.Store, loc export.Location, manifestKey string, rejects *rejectFile) error {
	fmt.Fprintf(c.App.Writer, "exported %d items in %d objects (%s of DynamoDB JSON, %s %s) to %s; manifest %s\n",
		man.Items, len(man.Objects), mib(man.Bytes), mib(man.Stored), strings.ToLower(man.Compression), loc, store.URL(manifestKey))
	if err := rejects.Close(); err != nil {
		return err
	}
	if man.Rejected > 0 {
		return withCode(ExitRejected, fmt.Errorf("%d rows rejected: see %s", man.Rejected, rejects.path))
	}
	return nil
}

// checkFreshDestination refuses to export into a location holding objects
// this export would be mixed with (export.Conflicts): an import reads every
// object under data/.
func checkFreshDestination(c *cli.Context, store export.Store, loc export.Location, shard pipeline.Shard) error {
	found, err := export.Conflicts(c.Context, store, shard.Index, shard.Count)
	if err != nil {
		return err
	}
	if len(found) == 0 {
		return nil
	}
	var temporary string
	if slices.ContainsFunc(found, export.IsTemporary) {
		temporary = " (a name beginning with a dot is the temporary file of an export under way, or killed)"
	}
	return usageError{fmt.Errorf("--to %s already holds %s (%s)%s: an import loads every object under %s, so each export goes to a prefix of its own, shared only by the other shards of its split; export to a new one, or delete these first",
		loc, countNoun(len(found), "object", "objects"), strings.Join(head(found, 3), ", "), temporary, export.DataPrefix)}
}

// head is the first n of ss, and "…" when there are more.
func head(ss []string, n int) []string {
	if len(ss) <= n {
		return ss
	}
	return append(slices.Clone(ss[:n]), "…")
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// fileSHA256 is the hex SHA-256 of the file at path.
func fileSHA256(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", sha256.Sum256(b)), nil
}

// s3Client is the S3 client of export's and import's flags (--region,
// --profile, --s3-endpoint-url).
func s3Client(c *cli.Context) (*s3.Client, error) {
	return export.NewS3Client(c.Context, export.S3Config{Region: c.String("region"), Profile: c.String("profile"),
		EndpointURL: c.String("s3-endpoint-url")})
}
