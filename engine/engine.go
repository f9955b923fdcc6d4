// Package engine is pg2dynamo as a library: every command's work behind one
// Config and a typed options struct per command, with no command-line types.
// The app package parses flags into these structs and maps errors to exit codes
// (Kind). Notes and status lines go to Config.Log (the CLI's stderr), summaries
// and reports to Config.Out (stdout).
package engine

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/pg2dynamo/pg2dynamo/export"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/metrics"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
)

// Config is what every command opens with.
type Config struct {
	// Mapping is the mapping file's path.
	Mapping string
	// Source is the PostgreSQL connection string ("": DATABASE_URL, or PG*).
	Source string
	// Table, when not "", replaces the mapping's table.name.
	Table string
	AWS   AWS
	// Log gets notes and status lines; Out, summaries and reports (nil:
	// io.Discard).
	Log, Out io.Writer
	// Progress, when set, makes one long phase's display and its closing; each
	// phase calls it once.
	Progress func() (pipeline.Progress, func())
	// Version is pg2dynamo's, as reports record it ("": Version()).
	Version string
	// Metrics, when set, is fed the run's counters (metrics.go).
	Metrics *metrics.Run
	// Naming words the options errors and notes name (nil: field names).
	Naming Naming
	// Summary, when set, gets each load's summary as it ends, before a follow.
	Summary func(Summary)
}

// AWS is how the DynamoDB (and S3) clients are made.
type AWS struct {
	// Region and Profile are the SDK's ("": its defaults).
	Region, Profile string
	// EndpointURL is DynamoDB's endpoint, S3EndpointURL S3's ("": the
	// region's).
	EndpointURL, S3EndpointURL string
	// MaxAttempts is the SDK's attempts per request (retries + 1), at least 1.
	MaxAttempts int
	// MaxBackoff, above 0, caps the wait between retries (the SDK's cap: 20 s).
	MaxBackoff time.Duration
}

// ReportOptions are what a comparison reads and how it reports.
type ReportOptions struct {
	// Segments is the Scan's segments (1 to 64); Sample, differences kept per
	// kind.
	Segments, Sample int
	// MaxReadUnits caps the read capacity units a second that the run's reads
	// of the table consume: Scans, Queries, read-backs (0: no cap).
	MaxReadUnits int
	// GSIWait bounds the wait for a GSI to catch up before its patterns run.
	GSIWait time.Duration
	// Format is report.FormatText, FormatMarkdown or FormatJSON ("": text);
	// Limit the keys a list shows (0: report.Render's default).
	Format string
	Limit  int
	// JSON and HTML, when not "", are files the report is written to too.
	JSON, HTML string
	// PricePerMillion (USD per million write units) and ImportPricePerGB are
	// diff's prices.
	PricePerMillion, ImportPricePerGB float64
	// FollowWait bounds verify's wait for a follow to reach its snapshot.
	FollowWait time.Duration
}

// WriteOptions are how a run writes into DynamoDB.
type WriteOptions struct {
	// Sink is "dynamodb" or "null" (nothing is written).
	Sink string
	// CreateTable creates the table when it does not exist.
	CreateTable bool
	// Concurrency is the number of writers, unless Auto sizes them.
	Concurrency int
	Auto        *pipeline.Autoscale
	// MaxWriteUnits caps write units a second (0: no cap).
	MaxWriteUnits int
	// RetryDeadline bounds the re-sends of one batch's UnprocessedItems.
	RetryDeadline time.Duration
	// AllowOtherMapping and AllowOtherItems relax checkOwner.
	AllowOtherMapping, AllowOtherItems bool
}

// LoadOptions are how a run reads the source.
type LoadOptions struct {
	// Readers is the number of source readers (at least 1).
	Readers int
	// MinRangeRows is the fewest rows of a split range.
	MinRangeRows int64
	// NoDuplicateCheck turns the run-wide duplicate-key check off.
	NoDuplicateCheck bool
	// Shard is the part of the run this process does.
	Shard pipeline.Shard
	// Snapshot, when not "", is the exported snapshot to read.
	Snapshot string
	// Rejects is the rejects file (JSON Lines).
	Rejects string
}

// FollowOptions are migrate with Follow's.
type FollowOptions struct {
	// Slot and Publication are the follow's ("": follow.DefaultName).
	Slot, Publication string
	// UntilCaughtUp stops the follow once it applied every change committed
	// before its check.
	UntilCaughtUp bool
	// StatusInterval is the least time between two status lines.
	StatusInterval time.Duration
	// NoDDLCapture leaves DDL capture out: the catalog checks alone remain.
	NoDDLCapture bool
	// CatalogInterval is the longest between catalog checks (0: at start only).
	CatalogInterval time.Duration
	// LeasePeriod is the time between lease heartbeats (0: DefaultLeasePeriod).
	LeasePeriod time.Duration
	// Audit is the audit's mode (off, report, repair; "": report), AuditCycle
	// the period to compare every item (0: follow.DefaultAuditCycle),
	// AuditFile its drift file ("": DefaultAuditFile), AuditSliceItems the
	// keys it compares in memory at a time (0: follow.AuditSliceItems).
	Audit           string
	AuditCycle      time.Duration
	AuditFile       string
	AuditSliceItems int
}

// MigrateOptions are migrate's.
type MigrateOptions struct {
	LoadOptions
	WriteOptions
	ReportOptions
	// Checkpoint is the checkpoint file, saved at most once a
	// CheckpointInterval.
	Checkpoint         string
	CheckpointInterval time.Duration
	// Resume goes on from Checkpoint (and, following, from the slot).
	Resume bool
	// NoVerify skips the check; Prune deletes stale items; ChangesOnly writes
	// only what differs; DryRun writes nothing.
	NoVerify, Prune, ChangesOnly, DryRun bool
	// Follow keeps the table in step after the load.
	Follow bool
	FollowOptions
	// EvolveOptions apply a new mapping, with ChangesOnly or Follow and Resume.
	EvolveOptions
}

// Kind classifies engine errors for exit codes: KindOf.
type Kind int

const (
	// KindFailed: the run stopped on an error; it may have written.
	KindFailed Kind = iota
	// KindRefused: refused before anything was written.
	KindRefused
	// KindRejected: the run finished, but rows or items were rejected.
	KindRejected
	// KindMismatch: the check found the table differs from the source.
	KindMismatch
	// KindUnbound: init with Design wrote a draft with unbound parts.
	KindUnbound
	// KindNoGo: cutover found a condition of the cutover not met.
	KindNoGo
	// KindTimeout: cutover with Wait's timeout passed first.
	KindTimeout
)

// Error is an engine error of a Kind other than the default.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// KindOf is the Kind of the outermost *Error in err, KindRefused for mapping
// errors, else KindFailed and false.
func KindOf(err error) (Kind, bool) {
	var e *Error
	var me mapping.Errors
	var mel *mapping.Error
	switch {
	case errors.As(err, &e):
		return e.Kind, true
	case errors.As(err, &me), errors.As(err, &mel):
		return KindRefused, true
	}
	return KindFailed, false
}

func refused(err error) error  { return &Error{KindRefused, err} }
func rejected(err error) error { return &Error{KindRejected, err} }
func mismatch(err error) error { return &Error{KindMismatch, err} }
func failed(err error) error   { return &Error{KindFailed, err} }
func unbound(err error) error  { return &Error{KindUnbound, err} }

// job is one command's run; option groups it lacks are zero.
type job struct {
	ctx      context.Context
	cfg      Config
	log, out io.Writer
	mig      MigrateOptions
	rep      *ReportOptions
	wr       *WriteOptions
	ld       *LoadOptions
	fol      *FollowOptions
	exp      ExportOptions
	imp      ImportOptions
	// command names the command in messages, as Config.Naming words it.
	command string
	// lease is the follow's lease on the table until the run ends (else nil).
	lease *leaseKeeper
	// evolved is the mapping change a resumed checkpoint records as done.
	evolved string
	// reads paces and counts the run's reads of the table (readLimit).
	reads     *load.ReadLimit
	readsOnce sync.Once
}

func newJob(ctx context.Context, cfg Config, command string) *job {
	j := &job{ctx: ctx, cfg: cfg, log: cfg.Log, out: cfg.Out, command: command}
	if j.log == nil {
		j.log = io.Discard
	}
	if j.out == nil {
		j.out = io.Discard
	}
	if j.cfg.Version == "" {
		j.cfg.Version = Version()
	}
	j.rep, j.wr, j.ld, j.fol = &j.mig.ReportOptions, &j.mig.WriteOptions, &j.mig.LoadOptions, &j.mig.FollowOptions
	return j
}

func (j *job) progress() (pipeline.Progress, func()) {
	if j.cfg.Progress == nil {
		return nil, func() {}
	}
	return j.cfg.Progress()
}

// ExportOptions are export's.
type ExportOptions struct {
	LoadOptions
	// To is where the objects go; Compression, export.GZIP, ZSTD or NONE.
	To          export.Location
	Compression string
	// Objects is the objects written at once (1 to 256), each cut at ObjectSize
	// bytes (at least 1 MiB).
	Objects    int
	ObjectSize int64
	// Concurrency is the encoding writers (0: pipeline.DefaultConcurrency), or
	// Auto's.
	Concurrency int
	Auto        *pipeline.Autoscale
}

// ImportOptions are import's.
type ImportOptions struct {
	ReportOptions
	// From is the export's s3:// location; ReportTo, StartBulkPutItems'
	// report's ("": From's reports/).
	From, ReportTo string
	// Tier is StartBulkPutItems' performance tier; MaxWriteUnits its cap (0:
	// none).
	Tier          string
	MaxWriteUnits int64
	// PollInterval is the wait between two Describe calls.
	PollInterval time.Duration
	// Rejects is the rejects file; NoVerify skips the check after.
	Rejects  string
	NoVerify bool
}

// opening is what a command opens before its work, in order: the checkpoint's
// lock, the rejects file, report files, the session and its DynamoDB client.
type opening struct {
	lock, rejects, appendRejects, reports, dynamo bool
}

// opened is what begin opened; close releases it, last first.
type opened struct {
	rejects *rejectFile
	rf      *reportFiles
	s       *session
	undo    []func()
}

// begin opens what o asks for, refusing before each next step; on error it
// releases what it opened.
func (j *job) begin(o opening) (*opened, error) {
	op := &opened{}
	err := op.steps(j, o)
	if err != nil {
		op.close()
		return nil, err
	}
	return op, nil
}

func (op *opened) steps(j *job, o opening) error {
	if o.lock {
		release, err := lockCheckpoint(j, j.mig.Checkpoint) // one run at a time per checkpoint and rejects file
		if err != nil {
			return err
		}
		op.undo = append(op.undo, release)
	}
	if o.rejects {
		// Published only when the run starts reading (rejectFile.Start), so a
		// run refused before that leaves the file as it was.
		r, err := createRejects(j.ld.Rejects, o.appendRejects)
		if err != nil {
			return err
		}
		r.onWrite = j.cfg.Metrics.Reject
		op.rejects = r
		op.undo = append(op.undo, r.abandon)
	}
	if o.reports {
		rf, err := openReportFiles(j)
		if err != nil {
			return err
		}
		op.rf = rf
		op.undo = append(op.undo, rf.discard)
	}
	s, err := open(j)
	if err != nil {
		return err
	}
	op.s = s
	op.undo = append(op.undo, func() { s.src.Close(context.WithoutCancel(j.ctx)) })
	j.startMetrics(s)
	if o.dynamo {
		return s.dynamo(j, nil)
	}
	return nil
}

func (op *opened) close() {
	for i := len(op.undo) - 1; i >= 0; i-- {
		op.undo[i]()
	}
}

// writes is the writers outside a full load (ChangesOnly, Prune, the follow),
// telling the metrics each number.
func (j *job) writes() pipeline.WritesOptions {
	return pipeline.WritesOptions{Concurrency: j.wr.Concurrency, Auto: j.wr.Auto, OnWriters: j.cfg.Metrics.Writers}
}
