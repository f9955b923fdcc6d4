package engine

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

	"github.com/pg2dynamo/pg2dynamo/export"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

type importPlan struct {
	from, reportTo export.Location
	compression    string
	items          int64
	objects        int // under data/
	s3             *s3.Client
}

func checkImport(j *job, mappingFile string) (*importPlan, error) {
	ip := &importPlan{}
	var err error
	if j.imp.From == "" {
		return nil, optionError(j.opt(OptFrom)+" is required: s3://BUCKET/PREFIX/ of an export", OptFrom)
	}
	if ip.from, err = export.ParseLocation(j.imp.From); err != nil || ip.from.Dir != "" {
		return nil, refused(&OptionError{Options: []Option{OptFrom}, Err: fmt.Errorf("%s %q: expected s3://BUCKET/PREFIX/ (DynamoDB imports from S3 only)", j.opt(OptFrom), j.imp.From)})
	}
	ip.reportTo = export.Location{Bucket: ip.from.Bucket, Prefix: ip.from.Prefix + "reports/"}
	if r := j.imp.ReportTo; r != "" {
		if ip.reportTo, err = export.ParseLocation(r); err != nil || ip.reportTo.Dir != "" {
			return nil, refused(&OptionError{Options: []Option{OptReportTo}, Err: fmt.Errorf("%s %q: expected s3://BUCKET/PREFIX/", j.opt(OptReportTo), r)})
		}
	}
	if t := j.imp.Tier; t != string(types.BulkOperationPerformanceTierStandard) && t != string(types.BulkOperationPerformanceTierAccelerated) {
		return nil, refused(&OptionError{Options: []Option{OptTier}, Err: fmt.Errorf("%s %q: expected STANDARD or ACCELERATED", j.opt(OptTier), t)})
	}
	if n := j.imp.MaxWriteUnits; n != 0 && n < export.MinBulkWriteUnits {
		return nil, refused(&OptionError{Options: []Option{OptMaxWriteUnits}, Err: fmt.Errorf("%s %d: StartBulkPutItems takes at least %d", j.opt(OptMaxWriteUnits), n, export.MinBulkWriteUnits)})
	}
	if j.imp.PollInterval <= 0 {
		return nil, optionError(j.opt(OptPollInterval)+": expected a positive duration", OptPollInterval)
	}
	if ip.s3, err = s3Client(j); err != nil {
		return nil, err
	}
	mans, err := export.Manifests(j.ctx, ip.s3, ip.from)
	if err != nil {
		return nil, err
	}
	if err := export.CheckShards(mans); err != nil {
		return nil, refused(fmt.Errorf("%s: %w", ip.from, err))
	}
	hash, err := fileSHA256(mappingFile)
	if err != nil {
		return nil, err
	}
	keys, err := export.ListKeys(j.ctx, ip.s3, ip.from, export.DataPrefix)
	if err != nil {
		return nil, err
	}
	if extra, missing := export.Unlisted(keys, mans); len(extra) > 0 {
		return nil, refused(fmt.Errorf("%s%s holds %s no manifest lists (%s), which DynamoDB would load too: left by another export into this prefix, or one that did not finish; delete them, or export again to a new prefix",
			ip.from, export.DataPrefix, report.Count(len(extra), "object", "objects"), strings.Join(head(extra, 3), ", ")))
	} else if len(missing) > 0 {
		return nil, refused(fmt.Errorf("%s: %s the manifests list %s missing (%s): export again", ip.from, report.Count(len(missing), "object", "objects"), map[bool]string{true: "is", false: "are"}[len(missing) == 1], strings.Join(head(missing, 3), ", ")))
	}
	ip.objects = len(keys)
	for _, man := range mans {
		if man.MappingHash != hash {
			return nil, refused(fmt.Errorf("%s was exported with another mapping file (SHA-256 %s, not %s's %s): export again with this mapping", ip.from, man.MappingHash, mappingFile, hash))
		}
		if ip.compression != "" && man.Compression != ip.compression {
			return nil, refused(fmt.Errorf("%s mixes %s and %s objects: one import reads one compression", ip.from, ip.compression, man.Compression))
		}
		ip.compression = man.Compression
		ip.items += man.Items
	}
	return ip, nil
}

// Import loads an export from S3 into DynamoDB, into a new table with
// ImportTable or an existing one with StartBulkPutItems (failed items go to
// o.Rejects), then, unless o.NoVerify, verifies it. Items not loaded are
// KindRejected; an endpoint without these operations is KindRefused.
func Import(ctx context.Context, cfg Config, o ImportOptions) error {
	j := newJob(ctx, cfg, "import")
	j.mig.ReportOptions = o.ReportOptions
	j.mig.NoVerify = o.NoVerify
	j.ld.Rejects = o.Rejects
	j.imp = o
	ip, err := checkImport(j, cfg.Mapping)
	if err != nil {
		return err
	}
	op, err := j.begin(opening{rejects: true, reports: true, dynamo: true})
	if err != nil {
		return err
	}
	defer op.close()
	s, rejects, rf := op.s, op.rejects, op.rf
	exists, err := load.CheckTable(ctx, s.client, s.m)
	if err != nil {
		return tableRefused(ctx, s.client, s.m.Table.Name, err)
	}
	if err := checkImportTarget(j, s, exists); err != nil {
		return err
	}
	if err := rejects.Start(); err != nil {
		return err
	}
	var failed int64
	where := rejects.path
	var arn string
	if exists {
		if arn, err = earlierImport(j, s, ip); err != nil {
			return err
		}
	}
	switch {
	case arn != "":
		failed, where, err = awaitImport(j, s, ip, arn)
	case exists:
		failed, err = bulkPut(j, s, ip, rejects)
	default:
		failed, where, err = importTable(j, s, ip)
	}
	if err != nil {
		return err
	}
	if err := rejects.Close(); err != nil {
		return err
	}
	if !j.mig.NoVerify {
		if err := s.src.Begin(ctx); err != nil {
			return err
		}
		fmt.Fprintln(j.out)
		if err := compareAndReport(j, s, report.ModeVerify, 0, j.out, rf); err != nil {
			return err
		}
	}
	if failed > 0 {
		return rejected(fmt.Errorf("%d items not loaded: see %s", failed, where))
	}
	return nil
}

// importTable creates the table with ImportTable and returns the items in
// error and where they are listed (a CloudWatch Logs log group).
func importTable(j *job, s *session, ip *importPlan) (failed int64, where string, err error) {
	if ip.objects > export.MaxObjects { // each shard's export held its own under it
		return 0, "", refused(fmt.Errorf("%s%s holds %d objects, over the %d one ImportTable reads: export again in larger objects or fewer shards",
			ip.from, export.DataPrefix, ip.objects, export.MaxObjects))
	}
	in := export.ImportTableInput(s.m, ip.from, ip.compression)
	out, err := s.client.ImportTable(j.ctx, in)
	if err != nil {
		return 0, "", operationError(j, "ImportTable", err)
	}
	arn := aws.ToString(out.ImportTableDescription.ImportArn)
	fmt.Fprintf(j.log, "ImportTable %s: creating table %s from %s%s (%d items)\n", arn, s.m.Table.Name, ip.from, export.DataPrefix, ip.items)
	return awaitImport(j, s, ip, arn)
}

// earlierImport returns the ARN of an ImportTable of ip's data that created
// the table and is under way or completed (an import stopped while it
// waited, which DynamoDB went on with), or "" for none (or an endpoint
// without ListImports).
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_ListImports.html
func earlierImport(j *job, s *session, ip *importPlan) (string, error) {
	td, err := load.DescribeTable(j.ctx, s.client, s.m.Table.Name)
	if err != nil || td == nil {
		return "", err
	}
	in := &dynamodb.ListImportsInput{TableArn: td.TableArn}
	for p := dynamodb.NewListImportsPaginator(s.client, in); p.HasMorePages(); {
		out, err := p.NextPage(j.ctx)
		if unknownOperation(err) {
			return "", nil
		}
		if err != nil {
			return "", fmt.Errorf("ListImports: %w", err)
		}
		for _, is := range out.ImportSummaryList {
			src := is.S3BucketSource
			if src == nil || aws.ToString(src.S3Bucket) != ip.from.Bucket || aws.ToString(src.S3KeyPrefix) != ip.from.Prefix+export.DataPrefix {
				continue
			}
			// A completed import that ended before the table was created made an
			// earlier table of the name.
			earlier := is.EndTime != nil && td.CreationDateTime != nil && is.EndTime.Before(*td.CreationDateTime)
			if is.ImportStatus == types.ImportStatusInProgress || is.ImportStatus == types.ImportStatusCompleted && !earlier {
				arn := aws.ToString(is.ImportArn)
				fmt.Fprintf(j.log, "ImportTable %s created table %s from %s%s (%s): going on with it, not loading again\n",
					arn, s.m.Table.Name, ip.from, export.DataPrefix, is.ImportStatus)
				return arn, nil
			}
		}
	}
	return "", nil
}

// awaitImport waits for ImportTable arn, then readies its table (ACTIVE,
// tagged, the settings ImportTable cannot carry); it returns the items in
// error and where they are listed.
func awaitImport(j *job, s *session, ip *importPlan, arn string) (failed int64, where string, err error) {
	var d *types.ImportTableDescription
	wp := startWaitProgress(j, "ImportTable "+s.m.Table.Name, ip.items)
	err = poll(j, func(ctx context.Context) (bool, error) {
		o, err := s.client.DescribeImport(ctx, &dynamodb.DescribeImportInput{ImportArn: aws.String(arn)})
		if err != nil {
			return false, fmt.Errorf("DescribeImport: %w", err)
		}
		d = o.ImportTableDescription
		wp.update(fmt.Sprintf("import: %s, %d imported, %d errors", d.ImportStatus, d.ImportedItemCount, d.ErrorCount),
			d.ProcessedItemCount, d.ImportedItemCount)
		return d.ImportStatus != types.ImportStatusInProgress, nil
	})
	wp.close()
	if err != nil {
		if j.ctx.Err() != nil {
			fmt.Fprintf(j.log, "import: ImportTable %s goes on in DynamoDB; run import again to wait for it and finish the table (tags, settings, verify): it does not load again\n", arn)
		}
		return 0, "", err
	}
	if d.ImportStatus != types.ImportStatusCompleted {
		return 0, "", fmt.Errorf("ImportTable %s: %s: %s %s", arn, d.ImportStatus, aws.ToString(d.FailureCode), aws.ToString(d.FailureMessage))
	}
	where = "CloudWatch Logs, log group " + aws.ToString(d.CloudWatchLogGroupArn)
	if d.ErrorCount > 0 {
		fmt.Fprintf(j.log, "import: %d items in error; ImportTable logs them in %s\n", d.ErrorCount, where)
	}
	if _, err := load.EnsureTable(j.ctx, s.client, s.m, false); err != nil { // waits until ACTIVE
		return 0, "", tableRefused(j.ctx, s.client, s.m.Table.Name, err)
	}
	if err := tagImported(j, s); err != nil {
		return 0, "", err
	}
	return d.ErrorCount, where, applyAfterImport(j, s)
}

// applyAfterImport applies what ImportTable cannot carry, and point-in-time
// recovery; a failure says what is left to do.
func applyAfterImport(j *job, s *session) error {
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
		st.call = func() error { _, err := s.client.UpdateTable(j.ctx, in); return err }
		steps = append(steps, st)
	}
	if in := load.UpdateContinuousBackupsInput(s.m); in != nil {
		steps = append(steps, step{"point-in-time recovery", "aws dynamodb update-continuous-backups",
			func() error { _, err := s.client.UpdateContinuousBackups(j.ctx, in); return err }})
	}
	for _, st := range steps {
		if err := st.call(); err != nil {
			return fmt.Errorf("table %s was imported, but setting its %s failed (set it with %s; a re-run does not): %w", name, st.setting, st.cmd, err)
		}
		fmt.Fprintf(j.log, "import: table %s: %s set\n", name, st.setting)
	}
	return nil
}

// bulkPut runs StartBulkPutItems and lists its report's items in rejects.
func bulkPut(j *job, s *session, ip *importPlan, rejects *rejectFile) (int64, error) {
	earlier, err := export.ListVersions(j.ctx, ip.s3, ip.reportTo) // an earlier import's report is not this one's
	if err != nil {
		return 0, err
	}
	in := export.StartBulkPutItemsInput(s.m, ip.from, ip.compression, export.BulkPut{Report: ip.reportTo,
		MaxWriteUnits: j.imp.MaxWriteUnits, Tier: j.imp.Tier})
	out, err := s.client.StartBulkPutItems(j.ctx, in)
	if err != nil {
		return 0, operationError(j, "StartBulkPutItems", err)
	}
	arn := aws.ToString(out.BulkOperationDescription.BulkOperationArn)
	fmt.Fprintf(j.log, "StartBulkPutItems %s: loading %s%s into table %s (%d items)\n", arn, ip.from, export.DataPrefix, s.m.Table.Name, ip.items)
	var d *types.BulkOperationDescription
	wp := startWaitProgress(j, "StartBulkPutItems "+s.m.Table.Name, ip.items)
	err = poll(j, func(ctx context.Context) (bool, error) {
		o, err := s.client.DescribeBulkOperation(ctx, &dynamodb.DescribeBulkOperationInput{BulkOperationArn: aws.String(arn)})
		if err != nil {
			return false, fmt.Errorf("DescribeBulkOperation: %w", err)
		}
		d = o.BulkOperationDescription
		wp.update(fmt.Sprintf("bulk put: %s, %d failed", d.BulkOperationStatus, d.FailedItemCount),
			d.ProcessedItemCount, d.ProcessedItemCount-d.FailedItemCount)
		st := d.BulkOperationStatus
		return st != types.BulkOperationStatusInProgress && st != types.BulkOperationStatusCancelling, nil
	})
	wp.close()
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
	keyAttrs := s.m.Table.Keys()
	err = export.ReadReport(j.ctx, ip.s3, ip.reportTo, earlier, func(f export.Failed) error {
		listed++
		rej := pipeline.Reject{Reason: "StartBulkPutItems: " + f.Reason}
		if f.Item == nil {
			rej.Reason += " (record: " + f.Line + ")"
		} else {
			rej.ItemKey = pipeline.ItemKeyMap(transform.ItemKey(f.Item, keyAttrs), keyAttrs, s.m.Table.KeyTypes())
			rej.Entity = typeOf[load.StringAttr(f.Item, s.m.TypeAttribute)]
		}
		return rejects.Write(rej)
	})
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(j.log, "bulk put: %d items failed (DescribeBulkOperation), %d listed in the report %s, written to %s\n",
		d.FailedItemCount, listed, ip.reportTo, rejects.path)
	return max(d.FailedItemCount, listed), nil
}

// operationError wraps err of op; an endpoint without op (emulators) gives a
// *missingOperationError, KindRefused.
func operationError(j *job, op string, err error) error {
	if unknownOperation(err) {
		return refused(&missingOperationError{Op: op, Endpoint: j.cfg.AWS.EndpointURL, Err: err, endpointURL: j.opt(OptEndpointURL)})
	}
	return fmt.Errorf("%s: %w", op, err)
}

// unknownOperation reports whether err is an endpoint's answer that it lacks
// the operation (dynalite, DynamoDB Local).
func unknownOperation(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "UnknownOperationException"
}

// missingOperationError refuses an operation the endpoint lacks, saying what to
// do instead.
type missingOperationError struct {
	Op, Endpoint string
	Err          error
	endpointURL  string
}

func (e *missingOperationError) Error() string {
	at := "the DynamoDB endpoint"
	if e.Endpoint != "" {
		at += " " + e.Endpoint
	}
	return fmt.Sprintf("%s does not have %s (UnknownOperationException): an emulator such as dynalite or DynamoDB Local cannot load from S3; import into DynamoDB itself (without %s), or load the table with pg2dynamo migrate, which writes through BatchWriteItem",
		at, e.Op, e.endpointURL)
}

func (e *missingOperationError) Unwrap() error { return e.Err }

// waitProgress shows the wait for an import as the load's progress, and a line
// at each status change.
type waitProgress struct {
	j                  *job
	prog               pipeline.Progress
	close              func()
	name, status       string
	processed, written int64
}

func startWaitProgress(j *job, name string, items int64) *waitProgress {
	prog, closeProg := j.progress()
	if prog != nil {
		prog.Plan([]pipeline.PlannedEntity{{Name: name, Rows: items, Unit: "items"}})
		prog.Start(name)
	}
	return &waitProgress{j: j, prog: prog, close: closeProg, name: name}
}

// update shows the counts now (each only grows), printing a changed status.
func (w *waitProgress) update(status string, processed, written int64) {
	if status != w.status {
		fmt.Fprintln(w.j.log, status)
		w.status = status
	}
	if w.prog != nil && processed > w.processed {
		w.prog.Advance(w.name, int(processed-w.processed), int(max(written-w.written, 0)))
	}
	w.processed, w.written = max(w.processed, processed), max(w.written, written)
}

// poll calls fn every PollInterval until it reports done or fails.
func poll(j *job, fn func(context.Context) (bool, error)) error {
	for {
		done, err := fn(j.ctx)
		if err != nil || done {
			return err
		}
		select {
		case <-j.ctx.Done():
			return context.Cause(j.ctx)
		case <-time.After(j.imp.PollInterval):
		}
	}
}
