package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/export"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/transform"
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
  - the table exists (and matches the mapping): StartBulkPutItems loads
    PREFIX/data/ into it (--tier, --max-write-units), and writes the items it
    could not write to --report-to, which import reads back into --rejects.

It prints the operation's progress from DescribeImport / DescribeBulkOperation
every --poll-interval, then verifies the table as migrate does (unless
--no-verify). ImportTable's errors go to CloudWatch Logs: import names the log
group and counts them as rejected.

Exit code 0 when every item was loaded (and verify passed), 3 when some were
not, 4 when verify found differences, 2 for a usage error, 1 on failure.`,
		Flags: append([]cli.Flag{mappingFlag(), sourceFlag(), endpointFlag(), regionFlag(), profileFlag(), tableFlag(),
			&cli.StringFlag{Name: "from", Usage: "the export's `URL`, s3://BUCKET/PREFIX/ (required)"},
			&cli.StringFlag{Name: "s3-endpoint-url", Usage: "an S3-compatible server's `URL` instead of AWS's (path-style addressing), for reading the manifests and the report"},
			&cli.StringFlag{Name: "report-to", Usage: "the `URL` (s3://BUCKET/PREFIX/) where StartBulkPutItems writes the items it could not write (default: PREFIX/reports/ of --from)"},
			&cli.StringFlag{Name: "tier", Value: string(types.BulkOperationPerformanceTierStandard), Usage: "StartBulkPutItems' performance `TIER`: STANDARD or ACCELERATED"},
			&cli.Int64Flag{Name: "max-write-units", Usage: fmt.Sprintf("cap StartBulkPutItems' write request units per second at `N` (at least %d)", export.MinBulkWriteUnits), DefaultText: "0, no cap"},
			&cli.DurationFlag{Name: "poll-interval", Value: 10 * time.Second, Usage: "how often (a `DURATION`) the operation's progress is read and printed"},
			&cli.PathFlag{Name: "rejects", Value: "pg2dynamo-rejects.jsonl", TakesFile: true, Usage: "JSON Lines `FILE` listing the items DynamoDB could not write"},
			&cli.BoolFlag{Name: "no-verify", Usage: "skip the verification (as pg2dynamo verify) that follows the load"},
		}, append(progressFlags(), reportFlags()[1:]...)...),
		Action: runImport,
	}
}

// importPlan is what runImport decided from its flags and the manifests.
type importPlan struct {
	from, reportTo export.Location
	compression    string
	items          int64
	s3             *s3.Client
}

func checkImport(c *cli.Context, mappingFile string) (*importPlan, error) {
	if c.Args().Present() {
		return nil, usageError{errUnexpectedArg(c)}
	}
	ip := &importPlan{}
	var err error
	if c.String("from") == "" {
		return nil, usageError{errors.New("--from is required: s3://BUCKET/PREFIX/ of an export")}
	}
	if ip.from, err = export.ParseLocation(c.String("from")); err != nil || ip.from.Dir != "" {
		return nil, usageError{fmt.Errorf("--from %q: expected s3://BUCKET/PREFIX/ (DynamoDB imports from S3 only)", c.String("from"))}
	}
	ip.reportTo = export.Location{Bucket: ip.from.Bucket, Prefix: ip.from.Prefix + "reports/"}
	if r := c.String("report-to"); r != "" {
		if ip.reportTo, err = export.ParseLocation(r); err != nil || ip.reportTo.Dir != "" {
			return nil, usageError{fmt.Errorf("--report-to %q: expected s3://BUCKET/PREFIX/", r)}
		}
	}
	if t := c.String("tier"); t != string(types.BulkOperationPerformanceTierStandard) && t != string(types.BulkOperationPerformanceTierAccelerated) {
		return nil, usageError{fmt.Errorf("--tier %q: expected STANDARD or ACCELERATED", t)}
	}
	if n := c.Int64("max-write-units"); n != 0 && n < export.MinBulkWriteUnits {
		return nil, usageError{fmt.Errorf("--max-write-units %d: StartBulkPutItems takes at least %d", n, export.MinBulkWriteUnits)}
	}
	if c.Duration("poll-interval") <= 0 {
		return nil, usageError{errors.New("--poll-interval: expected a positive duration")}
	}
	if ip.s3, err = s3Client(c); err != nil {
		return nil, err
	}
	mans, err := export.Manifests(c.Context, ip.s3, ip.from)
	if err != nil {
		return nil, err
	}
	if err := export.CheckShards(mans); err != nil {
		return nil, usageError{fmt.Errorf("%s: %w", ip.from, err)}
	}
	hash, err := fileSHA256(mappingFile)
	if err != nil {
		return nil, err
	}
	keys, err := export.ListKeys(c.Context, ip.s3, ip.from, export.DataPrefix)
	if err != nil {
		return nil, err
	}
	if extra, missing := export.Unlisted(keys, mans); len(extra) > 0 {
		return nil, usageError{fmt.Errorf("%s%s holds %s no manifest lists (%s), which DynamoDB would load too: left by another export into this prefix, or one that did not finish; delete them, or export again to a new prefix",
			ip.from, export.DataPrefix, countNoun(len(extra), "object", "objects"), strings.Join(head(extra, 3), ", "))}
	} else if len(missing) > 0 {
		return nil, fmt.Errorf("%s: %s the manifests list %s missing (%s): export again", ip.from, countNoun(len(missing), "object", "objects"), map[bool]string{true: "is", false: "are"}[len(missing) == 1], strings.Join(head(missing, 3), ", "))
	}
	for _, man := range mans {
		if man.MappingHash != hash {
			return nil, usageError{fmt.Errorf("%s was exported with another mapping file (SHA-256 %s, not %s's %s): export again with this mapping", ip.from, man.MappingHash, mappingFile, hash)}
		}
		if ip.compression != "" && man.Compression != ip.compression {
			return nil, usageError{fmt.Errorf("%s mixes %s and %s objects: one import reads one compression", ip.from, ip.compression, man.Compression)}
		}
		ip.compression = man.Compression
		ip.items += man.Items
	}
	return ip, nil
}

func runImport(c *cli.Context) error {
	ctx := c.Context
	if err := checkReportFlags(c); err != nil {
		return err
	}
	rf, err := openReportFiles(c)
	if err != nil {
		return err
	}
	defer rf.discard()
	path, err := requireMapping(c)
	if err != nil {
		return err
	}
	ip, err := checkImport(c, path)
	if err != nil {
		return err
	}
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
	if err := s.dynamo(c, nil); err != nil {
		return err
	}
	exists, err := load.CheckTable(ctx, s.client, s.m)
	if err != nil {
		return tableRefused(ctx, s.client, s.m.Table.Name, err)
	}
	var failed int64
	if exists {
		failed, err = bulkPut(c, s, ip, rejects)
	} else {
		failed, err = importTable(c, s, ip)
	}
	if err != nil {
		return err
	}
	if err := rejects.Close(); err != nil {
		return err
	}
	if !c.Bool("no-verify") {
		if err := s.src.Begin(ctx); err != nil {
			return err
		}
		fmt.Fprintln(c.App.Writer)
		if err := compareAndReport(c, s, report.ModeVerify, 0, c.App.Writer, rf); err != nil {
			return err
		}
	}
	if failed > 0 {
		return withCode(ExitRejected, fmt.Errorf("%d items not loaded: see %s", failed, rejects.path))
	}
	return nil
}

// importTable creates the table from the export with ImportTable and
// waits for it; it returns the items in error.
func importTable(c *cli.Context, s *session, ip *importPlan) (int64, error) {
	in := export.ImportTableInput(s.m, ip.from, ip.compression)
	out, err := s.client.ImportTable(c.Context, in)
	if err != nil {
		return 0, operationError(c, "ImportTable", err)
	}
	arn := aws.ToString(out.ImportTableDescription.ImportArn)
	fmt.Fprintf(c.App.ErrWriter, "ImportTable %s: creating table %s from %s%s (%d items)\n", arn, s.m.Table.Name, ip.from, export.DataPrefix, ip.items)
	var d *types.ImportTableDescription
	err = poll(c, func(ctx context.Context) (bool, error) {
		o, err := s.client.DescribeImport(ctx, &dynamodb.DescribeImportInput{ImportArn: aws.String(arn)})
		if err != nil {
			return false, fmt.Errorf("DescribeImport: %w", err)
		}
		d = o.ImportTableDescription
		fmt.Fprintf(c.App.ErrWriter, "import: %s, %d of %d items processed, %d imported, %d errors\n", d.ImportStatus,
			d.ProcessedItemCount, ip.items, d.ImportedItemCount, d.ErrorCount)
		return d.ImportStatus != types.ImportStatusInProgress, nil
	})
	if err != nil {
		return 0, err
	}
	if d.ImportStatus != types.ImportStatusCompleted {
		return 0, fmt.Errorf("ImportTable %s: %s: %s %s", arn, d.ImportStatus, aws.ToString(d.FailureCode), aws.ToString(d.FailureMessage))
	}
	if d.ErrorCount > 0 {
		fmt.Fprintf(c.App.ErrWriter, "import: %d items in error; ImportTable logs them in CloudWatch Logs, log group %s\n", d.ErrorCount, aws.ToString(d.CloudWatchLogGroupArn))
	}
	if _, err := load.EnsureTable(c.Context, s.client, s.m, false); err != nil { // waits until ACTIVE
		return 0, tableRefused(c.Context, s.client, s.m.Table.Name, err)
	}
	return d.ErrorCount, applyAfterImport(c, s)
}

// applyAfterImport gives the imported table the mapping's settings
// ImportTable cannot carry (load.AfterImportInputs), and point-in-time
// recovery. A failure says what is left to do by hand.
func applyAfterImport(c *cli.Context, s *session) error {
	name := s.m.Table.Name
	type step struct {
		setting, cmd string
		call         func() error
	}
	var steps []step
	for _, in := range load.AfterImportInputs(s.m) {
		st := step{"deletion protection", "aws dynamodb update-table --deletion-protection-enabled", nil}
		if in.WarmThroughput != nil {
			st.setting, st.cmd = "warm throughput", "aws dynamodb update-table --warm-throughput"
		}
		st.call = func() error { _, err := s.client.UpdateTable(c.Context, in); return err }
		steps = append(steps, st)
	}
	if in := load.UpdateContinuousBackupsInput(s.m); in != nil {
		steps = append(steps, step{"point-in-time recovery", "aws dynamodb update-continuous-backups",
			func() error { _, err := s.client.UpdateContinuousBackups(c.Context, in); return err }})
	}
	for _, st := range steps {
		if err := st.call(); err != nil {
			return fmt.Errorf("table %s was imported, but setting its %s failed (set it with %s; a re-run does not): %w", name, st.setting, st.cmd, err)
		}
		fmt.Fprintf(c.App.ErrWriter, "import: table %s: %s set\n", name, st.setting)
	}
	return nil
}

// bulkPut loads the export into the existing table with
// StartBulkPutItems, waits for it, and lists the items of its report in
// rejects; it returns their number.
func bulkPut(c *cli.Context, s *session, ip *importPlan, rejects *rejectFile) (int64, error) {
	in := export.StartBulkPutItemsInput(s.m, ip.from, ip.compression, export.BulkPut{Report: ip.reportTo,
		MaxWriteUnits: c.Int64("max-write-units"), Tier: c.String("tier")})
	out, err := s.client.StartBulkPutItems(c.Context, in)
	if err != nil {
		return 0, operationError(c, "StartBulkPutItems", err)
	}
	arn := aws.ToString(out.BulkOperationDescription.BulkOperationArn)
	fmt.Fprintf(c.App.ErrWriter, "StartBulkPutItems %s: loading %s%s into table %s (%d items)\n", arn, ip.from, export.DataPrefix, s.m.Table.Name, ip.items)
	var d *types.BulkOperationDescription
	err = poll(c, func(ctx context.Context) (bool, error) {
		o, err := s.client.DescribeBulkOperation(ctx, &dynamodb.DescribeBulkOperationInput{BulkOperationArn: aws.String(arn)})
		if err != nil {
			return false, fmt.Errorf("DescribeBulkOperation: %w", err)
		}
		d = o.BulkOperationDescription
		fmt.Fprintf(c.App.ErrWriter, "bulk put: %s, %d of %d items processed, %d failed\n", d.BulkOperationStatus, d.ProcessedItemCount, ip.items, d.FailedItemCount)
		st := d.BulkOperationStatus
		return st != types.BulkOperationStatusInProgress && st != types.BulkOperationStatusCancelling, nil
	})
	if err != nil {
		return 0, err
	}
	switch d.BulkOperationStatus {
	case types.BulkOperationStatusCompleted:
		return 0, nil
	case types.BulkOperationStatusCompletedWithErrors:
	default:
		return 0, fmt.Errorf("StartBulkPutItems %s: %s: %s %s", arn, d.BulkOperationStatus, aws.ToString(d.FailureCode), aws.ToString(d.FailureMessage))
	}
	var listed int64
	typeOf := map[string]string{}
	for _, p := range s.plans {
		typeOf[p.Entity().Type] = p.Entity().Name
	}
	keyAttrs := [2]string{s.m.Table.PartitionKey, s.m.Table.SortKey}
	err = export.ReadReport(c.Context, ip.s3, ip.reportTo, func(f export.Failed) error {
		listed++
		rej := pipeline.Reject{Reason: "StartBulkPutItems: " + f.Reason}
		if f.Item == nil {
			rej.Reason += " (record: " + f.Line + ")"
		} else {
			k := transform.ItemKey(f.Item, keyAttrs)
			rej.ItemKey = map[string]string{keyAttrs[0]: k[0]}
			if keyAttrs[1] != "" {
				rej.ItemKey[keyAttrs[1]] = k[1]
			}
			if t, ok := f.Item[s.m.TypeAttribute].(*types.AttributeValueMemberS); ok {
				rej.Entity = typeOf[t.Value]
			}
		}
		return rejects.Write(rej)
	})
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(c.App.ErrWriter, "bulk put: %d items failed (DescribeBulkOperation), %d listed in the report %s, written to %s\n",
		d.FailedItemCount, listed, ip.reportTo, rejects.path)
	return max(d.FailedItemCount, listed), nil
}

// operationError is err, from operation op (ImportTable,
// StartBulkPutItems), wrapped; from an endpoint that does not have op
// (UnknownOperationException: dynalite, DynamoDB Local and other
// emulators have neither) it is a *missingOperationError, a usage error.
func operationError(c *cli.Context, op string, err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "UnknownOperationException" {
		return usageError{&missingOperationError{Op: op, Endpoint: c.String("endpoint-url"), Err: err}}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// missingOperationError is the refusal of operation Op by a DynamoDB
// endpoint (Endpoint, "" for AWS's) that does not have it. It says what
// to do instead; nothing was loaded.
type missingOperationError struct {
	Op, Endpoint string
	Err          error
}

func (e *missingOperationError) Error() string {
	at := "the DynamoDB endpoint"
	if e.Endpoint != "" {
		at += " " + e.Endpoint
	}
	return fmt.Sprintf("%s does not have %s (UnknownOperationException): an emulator such as dynalite or DynamoDB Local cannot load from S3; import into DynamoDB itself (without --endpoint-url), or load the table with pg2dynamo migrate, which writes through BatchWriteItem",
		at, e.Op)
}

func (e *missingOperationError) Unwrap() error { return e.Err }

// poll calls fn every --poll-interval until it reports done or fails.
func poll(c *cli.Context, fn func(context.Context) (bool, error)) error {
	for {
		done, err := fn(c.Context)
		if err != nil || done {
			return err
		}
		select {
		case <-c.Context.Done():
			return context.Cause(c.Context)
		case <-time.After(c.Duration("poll-interval")):
		}
	}
}
