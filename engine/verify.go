package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// session is what verify, diff and migrate share.
type session struct {
	m      *mapping.Mapping
	src    *extract.Source
	plans  []*transform.Plan
	client *dynamodb.Client
	// inFlight says which items changed after the check's snapshot while a
	// follow streams into the table (watchFollow).
	inFlight verify.InFlightFunc
	// mappingSHA256 is the mapping file's hex SHA-256, for the reports.
	mappingSHA256 string
	// pruned is what migrate with Prune deleted before the verify.
	pruned *report.Applied
}

// open checks EndpointURL, loads the mapping, and connects to and checks the
// source; dynamo builds s.client. The caller closes s.src.
func open(j *job) (*session, error) {
	path := j.cfg.Mapping
	if path == "" {
		return nil, refused(errors.New("no mapping file given"))
	}
	if err := checkEndpoint(j, j.cfg.AWS.EndpointURL); err != nil {
		return nil, err
	}
	m, err := loadForCheck(j.ctx, path)
	if err != nil {
		return nil, err
	}
	if t := j.cfg.Table; t != "" {
		if !mapping.ValidTableName(t) {
			return nil, refused(fmt.Errorf("%s %q: expected 3-255 characters of a-z, A-Z, 0-9, '_', '-', '.'", j.opt(OptTable), t))
		}
		m.Table.Name = t
	}
	s := &session{m: m, mappingSHA256: mappingSHA256(path)}
	if s.src, s.plans, err = connectAndCheck(j, m); err != nil {
		return nil, err
	}
	return s, nil
}

// dynamo builds s.client; writeRetries, if set, counts the SDK's write retries.
func (s *session) dynamo(j *job, writeRetries *atomic.Int64) error {
	var err error
	s.client, err = load.NewClient(j.ctx, load.ClientConfig{Region: j.cfg.AWS.Region, Profile: j.cfg.AWS.Profile,
		EndpointURL: j.cfg.AWS.EndpointURL, MaxAttempts: j.cfg.AWS.MaxAttempts, WriteRetries: writeRetries})
	if err == nil && j.cfg.AWS.MaxBackoff > 0 {
		s.client = dynamodb.New(s.client.Options(), func(o *dynamodb.Options) {
			o.Retryer = retry.AddWithMaxBackoffDelay(o.Retryer, j.cfg.AWS.MaxBackoff)
		})
	}
	return err
}

// CompareOptions are verify's and diff's.
type CompareOptions struct {
	ReportOptions
	// Mode is report.ModeVerify or report.ModeDiff.
	Mode string
	// Slot and Publication name a follow's, which verify reads in step with.
	Slot, Publication string
	// PreviousMapping, with diff, prices applying Config.Mapping as its new
	// version (EvolveOptions), not a full run.
	PreviousMapping string
}

// Compare derives every item from the source in one snapshot, compares them
// with the table and writes the report. verify also runs the access patterns
// and counts what a streaming follow changed after the snapshot as in flight; a
// failed verification is KindMismatch, a table migrate would refuse
// KindRefused.
func Compare(ctx context.Context, cfg Config, o CompareOptions) error {
	j := newJob(ctx, cfg, o.Mode)
	j.mig.ReportOptions = o.ReportOptions
	j.fol.Slot, j.fol.Publication = o.Slot, o.Publication
	mode, price := o.Mode, o.PricePerMillion
	op, err := j.begin(opening{reports: true, dynamo: true})
	if err != nil {
		return err
	}
	defer op.close()
	s, rf := op.s, op.rf
	if o.PreviousMapping != "" && mode == report.ModeDiff {
		j.mig.PreviousMapping = o.PreviousMapping
		return evolveDiff(j, s, rf)
	}
	var watch *follow.Watch
	if mode == report.ModeVerify {
		if watch, err = watchFollow(j, s); err != nil {
			return err
		}
	}
	if watch != nil {
		defer watch.Close(context.WithoutCancel(j.ctx))
	} else {
		if err := s.src.Begin(j.ctx); err != nil {
			return err
		}
	}
	return compareAndReport(j, s, mode, price, j.out, rf)
}

// watchFollow, when the table's follow slot exists, begins s's snapshot at a
// temporary slot's and sets s.inFlight, so items the follow changed or has yet
// to change count as in flight, not wrong. It returns nil, the snapshot not
// begun, without such a slot.
func watchFollow(j *job, s *session) (*follow.Watch, error) {
	ctx := j.ctx
	slot, pub, err := followNames(j, s.m)
	if err != nil {
		return nil, err
	}
	conn := s.src.Conn()
	if _, exists, err := follow.SlotPosition(ctx, conn, slot); err != nil || !exists {
		return nil, err
	}
	g, err := follow.NewGraph(ctx, conn, s.m, s.plans)
	if err != nil {
		return nil, fmt.Errorf("the follow of slot %s: %w", slot, err)
	}
	w, err := follow.NewWatch(ctx, j.cfg.Source, g, pub, slotWaitReport(j.log))
	if err != nil {
		return nil, err
	}
	if err := s.src.BeginAt(ctx, w.Snapshot()); err != nil {
		w.Close(ctx)
		return nil, err
	}
	s.inFlight = func(ctx context.Context, pk, sk string, readAt time.Time) (bool, error) {
		return w.Changed(ctx, s.src, pk, sk, readAt)
	}
	if err := followLag(j, conn, w, slot); err != nil {
		w.Close(ctx)
		return nil, err
	}
	return w, nil
}

// followLag waits up to FollowWait for the follow to apply every change before
// w's snapshot; if it stays behind, w watches the changes it has not applied
// too (follow.Watch.FromFollow).
func followLag(j *job, conn *pgx.Conn, w *follow.Watch, slot string) error {
	ctx := j.ctx
	at := w.Consistent()
	start, wait := time.Now(), j.rep.FollowWait
	confirmed, active, err := waitForSlot(ctx, conn, slot, at, wait)
	if err != nil {
		return err
	}
	behind := confirmed < at
	if behind {
		if confirmed, behind, err = w.FromFollow(ctx, slot); err != nil {
			return err
		}
	}
	switch {
	case !behind:
		fmt.Fprintf(j.log, "verify: the follow (slot %s) has applied every change this check's snapshot holds (%s, waited %s); items changed after it while the check runs count as in flight\n",
			slot, at, time.Since(start).Round(time.Millisecond))
	case !active:
		fmt.Fprintf(j.log, "verify: the follow of slot %s is not running, %d bytes behind this check's snapshot: the items the changes it has not applied explain count as in flight (resume it: migrate %s)\n",
			slot, uint64(at)-uint64(confirmed), j.cfg.names(OptFollow, OptResume))
	default:
		fmt.Fprintf(j.log, "verify: the follow (slot %s) is %d bytes behind this check's snapshot after %s: the items the changes it has not applied explain count as in flight\n",
			slot, uint64(at)-uint64(confirmed), wait)
	}
	return nil
}

// waitForSlot waits up to wait for slot's confirmed position to reach at, and
// says whether a process streams from it: a stopped follow is not waited for.
func waitForSlot(ctx context.Context, conn *pgx.Conn, slot string, at pglogrepl.LSN, wait time.Duration) (pglogrepl.LSN, bool, error) {
	start := time.Now()
	for {
		confirmed, _, err := follow.SlotPosition(ctx, conn, slot)
		if err != nil || confirmed >= at {
			return confirmed, true, err
		}
		active, err := follow.SlotActive(ctx, conn, slot)
		if err != nil || !active || time.Since(start) >= wait {
			return confirmed, active, err
		}
		select {
		case <-ctx.Done():
			return confirmed, active, context.Cause(ctx)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// reportFiles are a command's JSON and HTML files (nil if not asked for),
// opened before the work so a bad path fails before hours of migration, and
// published when written so a failed command leaves the last run's files.
type reportFiles struct{ json, html *outputFile }

func openReportFiles(j *job) (*reportFiles, error) {
	rf := &reportFiles{}
	for _, f := range []struct {
		opt  Option
		path string
		dst  **outputFile
	}{{OptReportJSON, j.rep.JSON, &rf.json}, {OptHTML, j.rep.HTML, &rf.html}} {
		if p := f.path; p != "" {
			file, err := createOutput(p, false)
			if err != nil {
				rf.discard()
				return nil, refused(fmt.Errorf("%s: %w", j.opt(f.opt), err))
			}
			*f.dst = file
		}
	}
	return rf, nil
}

func (rf *reportFiles) discard() {
	for _, f := range []*outputFile{rf.json, rf.html} {
		if f != nil {
			f.Discard()
		}
	}
}

// compareAndReport checks the table as migrate would, compares in s's snapshot
// and writes the report; a failed verification is KindMismatch.
func compareAndReport(j *job, s *session, mode string, price float64, out io.Writer, rf *reportFiles) error {
	if err := s.checkTable(j); err != nil {
		return err
	}
	paced := ""
	if n := j.rep.MaxReadUnits; n > 0 {
		paced = fmt.Sprintf(" (at most %d read units a second, %s)", n, j.opt(OptMaxReadUnits))
	}
	fmt.Fprintf(j.log, "%s: deriving items from %s and reading table %s%s\n", mode, s.src.Name(), s.m.Table.Name, paced)
	prog, closeProg := j.progress()
	run := s.runInfo(j, time.Now())
	read := j.readLimit().Consumed()
	res, err := verify.Compare(j.ctx, s.src, s.m, s.plans, s.client, verify.Options{
		Segments: j.rep.Segments, Reads: j.readLimit(), Sample: j.rep.Sample, SkipPatterns: mode == report.ModeDiff, IndexWait: j.rep.GSIWait,
		InFlight: s.inFlight, ExportBytes: exportBytes(mode), ChangeCost: mode == report.ModeDiff, Progress: prog,
	})
	closeProg()
	if err != nil {
		return err
	}
	if !res.TableMissing {
		what := "a strongly consistent Scan"
		if mode != report.ModeDiff && len(s.m.AccessPatterns) > 0 {
			what += " and the access patterns' Queries"
		}
		fmt.Fprintf(j.log, "%s: reading table %s consumed %.0f read units (%s)\n", mode, s.m.Table.Name, j.readLimit().Consumed()-read, what)
	}
	defer res.Close() // its lists' temporary files
	r := report.New(mode, res, price)
	r.Run = run
	r.Applied = s.pruned // what migrate with Prune deleted before this check, if anything
	if mode == report.ModeDiff {
		r.PriceImport(j.rep.ImportPricePerGB)
	}
	if err := writeReport(j, r, out, rf); err != nil {
		return err
	}
	if mode == report.ModeVerify && !r.OK {
		hint := staleHint(j, res)
		if running := runningFollow(j, s); running != "" {
			hint = followAdvice(j, running) // never a run that writes beside it
		}
		return mismatch(fmt.Errorf("%s%s", r.Headline(), hint))
	}
	return nil
}

// writeReport writes r to out in Format (text when none) and to rf's files.
func writeReport(j *job, r *report.Report, out io.Writer, rf *reportFiles) error {
	format := j.rep.Format
	if format == "" { // migrate has no Format: its report is text
		format = report.FormatText
	}
	if err := report.Render(out, r, format, j.rep.Limit); err != nil {
		return err
	}
	if f := rf.json; f != nil {
		if err := report.Render(f, r, report.FormatJSON, 0); err != nil {
			return fmt.Errorf("%s: %w", j.opt(OptReportJSON), err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("%s: %w", j.opt(OptReportJSON), err)
		}
	}
	if f := rf.html; f != nil {
		if err := report.HTML(f, r); err != nil {
			return fmt.Errorf("%s: %w", j.opt(OptHTML), err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("%s: %w", j.opt(OptHTML), err)
		}
	}
	return nil
}

// exportBytes sizes items as an export writes them, for diff's costs.
func exportBytes(mode string) func(map[string]types.AttributeValue) int64 {
	if mode != report.ModeDiff {
		return nil
	}
	return ddbjson.LineBytes
}

// staleHint, when stale items are the only difference, says what removes them.
func staleHint(j *job, res *outcome.Result) string {
	c := res.Counts
	if res.Stale == 0 || c.Missing.Total > 0 || c.Changed.Total > 0 || c.Duplicates.Total > 0 {
		return ""
	}
	for _, e := range res.Entities {
		if e.CountProblem != "" {
			return ""
		}
	}
	return fmt.Sprintf("\nthe only difference: %d stale items, of the mapping's types but no longer produced by the source (a row deleted, or its key changed); "+
		"%s deletes them (migrate %s too, writing only what differs), pg2dynamo diff lists them", res.Stale, j.cfg.run("migrate", OptPrune), j.opt(OptChangesOnly))
}

// runInfo describes the comparison for its report, passwords redacted.
func (s *session) runInfo(j *job, start time.Time) *report.Run {
	run := &report.Run{Time: report.RunTime(start), Source: s.src.Name(), Endpoint: report.Endpoint(j.cfg.AWS.EndpointURL),
		Table: s.m.Table.Name, Mapping: j.cfg.Mapping, MappingSHA256: s.mappingSHA256, Version: j.cfg.Version}
	if s.client != nil {
		run.Region = s.client.Options().Region
	}
	return run
}

// mappingSHA256 is the hex SHA-256 of the file at path; "" unless it is a
// readable regular file (a FIFO would block, or give other bytes).
func mappingSHA256(path string) string {
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	sum, err := fileSHA256(path)
	if err != nil {
		return ""
	}
	return sum
}

// Session is a mapping checked against its source, as Open returns it.
type Session = session

// Open loads cfg.Mapping, connects to cfg.Source and checks the mapping against
// it, compiling its plans; a mapping with problems is refused (KindRefused, or
// the mapping.Errors) with every problem found. No DynamoDB client is made.
// The caller calls Close.
func Open(ctx context.Context, cfg Config) (*Session, error) {
	return open(newJob(ctx, cfg, "open"))
}

// Mapping is the session's mapping (cfg.Table applied); Plans are in mapping
// order.
func (s *Session) Mapping() *mapping.Mapping { return s.m }
func (s *Session) Plans() []*transform.Plan  { return s.plans }
func (s *Session) MappingSHA256() string     { return s.mappingSHA256 }
func (s *Session) Close(ctx context.Context) { s.src.Close(ctx) }

// Connect connects to cfg.Source; with cfg.Source "", a failure says which
// database and user libpq's rules chose.
func Connect(ctx context.Context, cfg Config) (*extract.Source, error) {
	src, err := extract.Connect(ctx, cfg.Source)
	if err != nil {
		return nil, withSourceNote(newJob(ctx, cfg, "connect"), err, false)
	}
	return src, nil
}

// HoldSnapshot exports a snapshot of cfg.Source (pg_export_snapshot()), tells
// held its name, and holds it until ctx ends, for every shard to read.
// https://www.postgresql.org/docs/current/functions-admin.html#FUNCTIONS-SNAPSHOT-SYNCHRONIZATION
func HoldSnapshot(ctx context.Context, cfg Config, held func(name, source string)) error {
	src, err := Connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer src.Close(context.WithoutCancel(ctx))
	if err := src.Begin(ctx); err != nil {
		return err
	}
	name, err := src.ExportSnapshot(ctx)
	if err != nil {
		return err
	}
	held(name, src.Name())
	<-ctx.Done()
	return nil
}
