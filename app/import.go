package app

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/export"
)

func importCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "have DynamoDB load an export from S3 itself: ImportTable for a new table, StartBulkPutItems for an existing one",
		UsageText: "pg2dynamo import --mapping FILE --from s3://BUCKET/PREFIX/ [--source URL] [--endpoint-url URL] [options]",
		Description: `import reads the export's manifests (pg2dynamo export; one per shard), checks
they were made with this mapping file and, for a split export, that every shard
is there and all read one --snapshot, and hands the load to DynamoDB (an
emulator such as dynalite or DynamoDB Local has neither operation):

  - the table does not exist: ImportTable creates it (key schema, GSIs and
    billing mode from the mapping) and loads PREFIX/data/ without consuming
    write capacity, priced per GB of source data;
  - the table exists, created by an ImportTable of this export under way or
    done (an import stopped while it waited): import goes on with it, waiting
    and finishing the table without loading again;
  - the table exists (and matches the mapping): StartBulkPutItems loads
    PREFIX/data/ into it (--tier, --max-write-units), and writes the items it
    could not write to --report-to, which import reads back into --rejects.

It prints the operation's progress from DescribeImport / DescribeBulkOperation
every --poll-interval, then verifies the table against the database (unless
--no-verify): as it is then, the export's snapshot being gone, so rows changed
since the export are differences (migrate --changes-only writes them).
ImportTable's errors go to CloudWatch Logs: import names the log group and
counts them as rejected.

Exit code 0 when every item was loaded (and verify passed), 3 when some were
not (with --no-verify; verify finds them missing: 4), 4 when verify found
differences, 2 for a usage error, 1 on failure.`,
		Flags: append([]cli.Flag{mappingFlag(), sourceFlag(), endpointFlag(), regionFlag(), profileFlag(), maxBackoffFlag(), tableFlag(),
			&cli.StringFlag{Name: "from", Usage: "the export's `URL`, s3://BUCKET/PREFIX/ (required)"},
			&cli.StringFlag{Name: "s3-endpoint-url", Usage: "an S3-compatible server's `URL` instead of AWS's (path-style addressing), for reading the manifests and the report"},
			&cli.StringFlag{Name: "report-to", Usage: "the `URL` (s3://BUCKET/PREFIX/) where StartBulkPutItems writes the items it could not write (default: PREFIX/reports/ of --from)"},
			&cli.StringFlag{Name: "tier", Value: string(types.BulkOperationPerformanceTierStandard), Usage: "StartBulkPutItems' performance `TIER`: STANDARD or ACCELERATED"},
			&cli.Int64Flag{Name: "max-write-units", Usage: fmt.Sprintf("cap StartBulkPutItems' write request units per second at `N` (at least %d)", export.MinBulkWriteUnits), DefaultText: "0, no cap"},
			&cli.DurationFlag{Name: "poll-interval", Value: 10 * time.Second, Usage: "how often (a `DURATION`) the operation's progress is read and printed"},
			&cli.PathFlag{Name: "rejects", Value: "pg2dynamo-import-rejects.jsonl", TakesFile: true, Usage: "JSON Lines `FILE` listing the items StartBulkPutItems could not write (not export's rejects file, which it would replace)"},
			&cli.BoolFlag{Name: "no-verify", Usage: "skip the verification (as pg2dynamo verify) that follows the load"},
		}, append(progressFlags(), reportFlags()[1:]...)...),
		Action: runImport,
	}
}

func runImport(c *cli.Context) error {
	cfg, err := config(c)
	if err != nil {
		return err
	}
	return engine.Import(c.Context, cfg, engine.ImportOptions{ReportOptions: reportOptions(c), From: c.String("from"),
		ReportTo: c.String("report-to"), Tier: c.String("tier"), MaxWriteUnits: c.Int64("max-write-units"),
		PollInterval: c.Duration("poll-interval"), Rejects: c.Path("rejects"), NoVerify: c.Bool("no-verify")})
}
