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
)

// session is what verify, diff and migrate share: the mapping, the source
// with its compiled plans, and the DynamoDB client.
type session struct {
	m      *mapping.Mapping
	src    *extract.Source
	plans  []*transform.Plan
	client *dynamodb.Client
	// inFlight, while a follow streams into the table, says which items
	// changed after the check's snapshot (watchFollow); nil otherwise.
	inFlight verify.InFlightFunc
	// mappingSHA256 is the hex SHA-256 of the mapping file, read again
	// by open after loading it (mappingSHA256), for the reports.
	mappingSHA256 string
	// pruned is what migrate with Prune deleted before the verify, for its
	// report (pruneStale); nil otherwise.
	pruned *report.Applied
}

// open checks EndpointURL, loads the mapping, and connects to and
// checks the source (connectAndCheck); s.client is built by dynamo. The
// caller closes s.src.
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

// dynamo builds s.client from the command's AWS options; writeRetries, if
// not nil, counts the SDK's retries of writes (load.ClientConfig.WriteRetries).
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
	// Slot and Publication name a follow's (as FollowOptions): verify
	// reads the table in step with a follow streaming into it.
	Slot, Publication string
	// PreviousMapping, with diff, is the mapping file the table was
	// written with: diff then prices applying Config.Mapping, its new
	// version (EvolveOptions), not a full run.
	PreviousMapping string
}

// Compare derives every item from the source, in one snapshot, and
// compares them with the table (verify.Compare), then writes the report
// to Config.Out in o.Format and to o.JSON and o.HTML. verify (o.Mode)
// also runs the access patterns and, while a follow streams into the
// table, counts what it changed after the snapshot as in flight; a failed
// verification is a KindMismatch error. A table migrate would refuse is
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

// watchFollow, when a follow's replication slot exists for the table
// (migrate with Follow streams into it), begins s's snapshot at a temporary
// slot's exported snapshot and sets s.inFlight to the follow.Watch of the
// changes the follow has not applied: an item they changed while the
// check ran, or that the follow has yet to put or delete, counts as in
// flight, not as wrong. It first waits (up to FollowWait) until the
// follow has applied every change the snapshot holds: its confirmed
// position reaches the snapshot's. A follow that does not get there (it
// lags, or is not running) has the changes committed before the snapshot
// that it has not applied watched too (follow.Watch.FromFollow). It
// returns nil, with s's snapshot not begun, when there is no such slot.
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
	w, err := follow.NewWatch(ctx, j.cfg.Source, g, pub)
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

// followLag waits (up to FollowWait) until the follow of slot has
// applied every change before w's snapshot, and says how far it got. A
// follow behind it then has w watch the changes it has not applied
// (follow.Watch.FromFollow), so that what it has not done yet counts as
// in flight, not as differences.
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

// waitForSlot waits, up to wait, until slot's confirmed position reaches
// at, and returns the last position read and whether a process streams
// from the slot. Only a follow that runs moves the slot: a stopped one (a
// slot no process streams from) is not waited for.
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

// reportFiles are the JSON and HTML files of a command, each
// nil when not asked for. They are opened before the command's work, so
// that a path that cannot be written fails it before the work, not after
// (a migration of hours), and published when written (see outputFile): a
// failed command leaves the files of the last run as they were.
type reportFiles struct{ json, html *outputFile }

// openReportFiles opens the report files the options ask for; the caller
// defers discard.
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

// discard removes what was not published.
func (rf *reportFiles) discard() {
	for _, f := range []*outputFile{rf.json, rf.html} {
		if f != nil {
			f.Discard()
		}
	}
}

// compareAndReport checks the table as migrate would (session.checkTable),
// runs verify.Compare in s's snapshot and writes the report in every
// requested form, the files to rf (openReportFiles). A failed verification
// returns exit code ExitMismatch.
func compareAndReport(j *job, s *session, mode string, price float64, out io.Writer, rf *reportFiles) error {
	if err := s.checkTable(j); err != nil {
		return err
	}
	fmt.Fprintf(j.log, "%s: deriving items from %s and reading table %s\n", mode, s.src.Name(), s.m.Table.Name)
	prog, closeProg := j.progress()
	run := s.runInfo(j, time.Now())
	res, err := verify.Compare(j.ctx, s.src, s.m, s.plans, s.client, verify.Options{
		Segments: j.rep.Segments, Sample: j.rep.Sample, SkipPatterns: mode == report.ModeDiff, IndexWait: j.rep.GSIWait,
		InFlight: s.inFlight, ExportBytes: exportBytes(mode), ChangeCost: mode == report.ModeDiff, Progress: prog,
	})
	closeProg()
	if err != nil {
		return err
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

// writeReport writes r to out in Format (text when the command has no
// Format) and to the report files rf holds, publishing each once
// written.
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

// exportBytes sizes items as an export writes them, for a diff's cost of
// the export + import path; nil for verify.
func exportBytes(mode string) func(map[string]types.AttributeValue) int64 {
	if mode != report.ModeDiff {
		return nil
	}
	return ddbjson.LineBytes
}

// staleHint, when stale items are the only difference (nothing missing,
// changed or derived twice, every count agreeing), says what they are and
// what removes them; "" otherwise.
func staleHint(j *job, res *verify.Result) string {
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

// runInfo describes the comparison beginning at start, for its report:
// the source without its password, the endpoint (its password, if any,
// redacted) and region, the table, the mapping file and its hash, and
// pg2dynamo's version.
func (s *session) runInfo(j *job, start time.Time) *report.Run {
	run := &report.Run{Time: report.RunTime(start), Source: s.src.Name(), Endpoint: report.Endpoint(j.cfg.AWS.EndpointURL),
		Table: s.m.Table.Name, Mapping: j.cfg.Mapping, MappingSHA256: s.mappingSHA256, Version: j.cfg.Version}
	if s.client != nil {
		run.Region = s.client.Options().Region
	}
	return run
}

// mappingSHA256 returns the hex SHA-256 of the mapping file at path,
// read again (fileSHA256); "" when it is not a regular file (a FIFO would
// block, or give other bytes) or cannot be read.
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

// Session is a mapping checked against its source: what plan and other
// readers of a design take from Open.
type Session = session

// Open loads cfg.Mapping, connects to cfg.Source and checks the mapping
// against it (every table and column it names, their types, the keys),
// compiling its plans. A mapping with problems is refused (KindRefused, or
// the mapping.Errors themselves) with every problem found, the source's
// included. No DynamoDB client is made. The caller calls Close.
func Open(ctx context.Context, cfg Config) (*Session, error) {
	return open(newJob(ctx, cfg, "open"))
}

// Mapping is the session's mapping (cfg.Table applied); Source its
// source, in no transaction until a caller begins one; Plans the
// compiled plan of each entity, in mapping order; MappingSHA256 the hex
// SHA-256 of the mapping file ("" when it is not a regular file).
func (s *Session) Mapping() *mapping.Mapping { return s.m }
func (s *Session) Source() *extract.Source   { return s.src }
func (s *Session) Plans() []*transform.Plan  { return s.plans }
func (s *Session) MappingSHA256() string     { return s.mappingSHA256 }
func (s *Session) Close(ctx context.Context) { s.src.Close(ctx) }

// Connect connects to cfg.Source; when it fails and cfg.Source is "", the
// error says which database and user libpq's rules chose, and why.
func Connect(ctx context.Context, cfg Config) (*extract.Source, error) {
	src, err := extract.Connect(ctx, cfg.Source)
	if err != nil {
		return nil, withSourceNote(newJob(ctx, cfg, "connect"), err, false)
	}
	return src, nil
}

// HoldSnapshot exports a snapshot of cfg.Source (a read-only REPEATABLE
// READ transaction, pg_export_snapshot()), tells its name to held, and
// keeps it open until ctx ends: the Snapshot NAME that every shard of a
// run reads, so that each row belongs to exactly one shard.
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
