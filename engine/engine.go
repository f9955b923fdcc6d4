// Package engine is pg2dynamo as a library: every command's work (migrate
// with its follow, prune and ChangesOnly; verify and diff; export and
// import; drop-slot) behind one configuration and a typed options struct
// per command, with no command-line types. The app package parses flags
// into these structs, calls the engine, and maps its errors to exit
// codes (see Kind); tests and the bench can call it directly.
//
// What a run has to say to a person goes to Config.Log (notes, warnings,
// status lines: the CLI's stderr) and Config.Out (summaries and reports:
// its stdout).
package engine

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/pg2dynamo/pg2dynamo/export"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/metrics"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
)

// Config is what every command opens with: the mapping file, the source,
// the table and DynamoDB, and where it writes.
type Config struct {
	// Mapping is the mapping file's path.
	Mapping string
	// Source is the PostgreSQL connection string; "" takes DATABASE_URL,
	// else libpq's PG* variables and defaults (extract.Connect).
	Source string
	// Table, when not "", replaces the mapping's table.name.
	Table string
	AWS   AWS
	// Log receives notes, warnings and status lines; Out summaries and
	// reports. Both default to io.Discard.
	Log, Out io.Writer
	// Progress, when not nil, makes the progress display of one long
	// phase (a load, a comparison): the display and its closing. Each
	// phase calls it once.
	Progress func() (pipeline.Progress, func())
	// Version is pg2dynamo's, as the reports record it (empty:
	// Version()).
	Version string
	// Metrics, when not nil, is fed the run's counters as it goes (see
	// metrics.go); a nil Run counts nothing.
	Metrics *metrics.Run
	// Naming words the options the errors and notes name (nil: by their
	// fields' names).
	Naming Naming
	// Summary, when not nil, is given the summary of each load (migrate's,
	// export's) as it ends, before a follow goes on.
	Summary func(Summary)
}

// AWS is how the DynamoDB (and S3) clients are made.
type AWS struct {
	// Region and Profile are the SDK's; "" leaves them to its defaults
	// (AWS_REGION, the shared config).
	Region, Profile string
	// EndpointURL is DynamoDB's endpoint ("" the region's); S3EndpointURL
	// S3's, for export and import.
	EndpointURL, S3EndpointURL string
	// MaxAttempts is the SDK's attempts per request (retries + 1), at
	// least 1.
	MaxAttempts int
	// MaxBackoff, when above 0, caps the wait between retries of the
	// DynamoDB client and between UnprocessedItems re-sends (the SDK's
	// default cap is 20 s).
	MaxBackoff time.Duration
}

// ReportOptions are what a comparison reads and how it reports: verify,
// diff, migrate's check after the load.
type ReportOptions struct {
	// Segments is the Scan's parallel segments (1 to 64); Sample the
	// differences kept per kind for the report (at least 1).
	Segments, Sample int
	// GSIWait bounds the wait for a GSI to catch up before its access
	// patterns run.
	GSIWait time.Duration
	// Format is report.FormatText, FormatMarkdown or FormatJSON ("" text);
	// Limit the keys a list shows (0: report.Render's default).
	Format string
	Limit  int
	// JSON and HTML, when not "", are files the report is written to too.
	JSON, HTML string
	// PricePerMillion is the on-demand price in US dollars per million
	// write request units, ImportPricePerGB ImportTable's per GB: diff's
	// cost estimates.
	PricePerMillion, ImportPricePerGB float64
	// FollowWait bounds how long verify waits for a running follow to
	// apply the changes its snapshot holds.
	FollowWait time.Duration
}

// WriteOptions are how a run writes into DynamoDB.
type WriteOptions struct {
	// Sink is "dynamodb" or "null" (nothing is written).
	Sink string
	// CreateTable creates the table when it does not exist.
	CreateTable bool
	// Concurrency is the number of BatchWriteItem writers (at least 1),
	// unless Auto sizes them (pipeline.Options.Auto).
	Concurrency int
	Auto        *pipeline.Autoscale
	// MaxWriteUnits caps write units a second (0: no cap).
	MaxWriteUnits int
	// RetryDeadline bounds the re-sends of one batch's UnprocessedItems.
	RetryDeadline time.Duration
	// AllowOtherMapping and AllowOtherItems let a run write into a table
	// tagged for another mapping, or an untagged one holding none of the
	// mapping's types (see checkOwner).
	AllowOtherMapping, AllowOtherItems bool
}

// LoadOptions are how a run reads the source.
type LoadOptions struct {
	// Readers is the number of source readers (at least 1).
	Readers int
	// MinRangeRows is the fewest rows of a primary-key range when a
	// table's read is split across the readers (0:
	// pipeline.MinRangeRows).
	MinRangeRows int64
	// NoDuplicateCheck turns the run-wide duplicate-key check off.
	NoDuplicateCheck bool
	// Shard is the part of the run this process does (the whole run when
	// Shard.On() is false).
	Shard pipeline.Shard
	// Snapshot, when not "", is the exported snapshot to read
	// (pg2dynamo snapshot hold).
	Snapshot string
	// Rejects is the rejects file (JSON Lines).
	Rejects string
}

// FollowOptions are migrate with Follow's.
type FollowOptions struct {
	// Slot and Publication name the replication slot and publication ("":
	// follow.DefaultName of the table, and the slot's name).
	Slot, Publication string
	// UntilCaughtUp stops the follow once every change committed before
	// its check is applied.
	UntilCaughtUp bool
	// StatusInterval is the least time between two status lines.
	StatusInterval time.Duration
	// NoDDLCapture leaves DDL capture (follow.InstallDDLCapture) out: the
	// follow relies on its catalog checks alone.
	NoDDLCapture bool
	// CatalogInterval is the longest the follow goes without comparing
	// the source's catalog with what its items agree with; 0 turns those
	// periodic checks off (DDL capture's and the start's remain).
	CatalogInterval time.Duration
	// LeasePeriod is the time between two heartbeats of the follow's
	// lease on the table (0: DefaultLeasePeriod).
	LeasePeriod time.Duration
	// Audit is the rolling audit's mode, off, report or repair ("":
	// report); AuditCycle the period within which it compares every item
	// (0: follow.DefaultAuditCycle); AuditFile the JSON Lines file of
	// the drifted items it finds ("": DefaultAuditFile).
	Audit      string
	AuditCycle time.Duration
	AuditFile  string
}

// MigrateOptions are migrate's.
type MigrateOptions struct {
	LoadOptions
	WriteOptions
	ReportOptions
	// Checkpoint is the checkpoint file, saved at most once a
	// CheckpointInterval while an entity is not done.
	Checkpoint         string
	CheckpointInterval time.Duration
	// Resume goes on from Checkpoint (and, following, from the slot).
	Resume bool
	// NoVerify skips the check after the load; Prune deletes the stale
	// items after it; ChangesOnly writes only what differs (see
	// changesOnly); DryRun writes nothing and reports as diff.
	NoVerify, Prune, ChangesOnly, DryRun bool
	// Follow keeps the table in step after the load, with FollowOptions.
	Follow bool
	FollowOptions
	// EvolveOptions apply a new version of the table's mapping, with
	// ChangesOnly or with Follow and Resume.
	EvolveOptions
}

// Kind classifies the errors the engine returns, for a caller's exit
// codes: KindOf.
type Kind int

const (
	// KindFailed: the run stopped on an error (PostgreSQL, DynamoDB, I/O);
	// it may have written.
	KindFailed Kind = iota
	// KindRefused: refused before anything was written (an invalid
	// mapping or option, a table that does not fit, a checkpoint in use).
	KindRefused
	// KindRejected: the run finished, but rows or items were rejected
	// (listed in the rejects file).
	KindRejected
	// KindMismatch: the check found the table differs from the source.
	KindMismatch
	// KindUnbound: init with Design wrote the draft, but parts of the
	// design are unbound (listed in it).
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

// KindOf is the Kind of err: that of the outermost *Error it wraps;
// KindRefused for the mapping's own errors (mapping.Errors,
// *mapping.Error: a mapping that does not load, or that the source cannot
// serve, refused before anything is written); else KindFailed, and false.
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

// job is one command's run: its context, configuration and options (the
// groups the command has; the others are zero).
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
	// command names the command in messages ("verify", migrate with
	// DryRun as Config.Naming words it).
	command string
	// lease is the follow's lease on the table, kept until the run ends
	// (takeLease, releaseLease); nil otherwise.
	lease *leaseKeeper
	// evolved is the change of mapping a resumed checkpoint records as
	// done (pipeline.Checkpoint.Evolved); "" otherwise.
	evolved string
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

// progress is the display of one long phase, from Config.Progress.
func (j *job) progress() (pipeline.Progress, func()) {
	if j.cfg.Progress == nil {
		return nil, func() {}
	}
	return j.cfg.Progress()
}

// ExportOptions are export's.
type ExportOptions struct {
	LoadOptions
	// To is where the objects go; Compression export.GZIP, ZSTD or NONE.
	To          export.Location
	Compression string
	// Objects is the number of objects written at once (1 to 256), each
	// cut at ObjectSize bytes (at least 1 MiB).
	Objects    int
	ObjectSize int64
	// Concurrency is the number of writers encoding and compressing
	// items into the objects (0: pipeline.DefaultConcurrency); with Auto,
	// an Autoscaler decides it as the run goes (pipeline.Options.Auto).
	Concurrency int
	Auto        *pipeline.Autoscale
}

// ImportOptions are import's.
type ImportOptions struct {
	ReportOptions
	// From is the export's s3:// location; ReportTo where
	// StartBulkPutItems writes its report ("": From's reports/).
	From, ReportTo string
	// Tier is StartBulkPutItems' performance tier (STANDARD, ACCELERATED);
	// MaxWriteUnits its cap (0: none).
	Tier          string
	MaxWriteUnits int64
	// PollInterval is the wait between two Describe calls.
	PollInterval time.Duration
	// Rejects is the rejects file; NoVerify skips the check after.
	Rejects  string
	NoVerify bool
}

// opening says what a command opens before its work, in this order: the
// checkpoint's lock, the rejects file (appended to when resuming), the
// report files, the session (the mapping checked against the source) and
// its DynamoDB client.
type opening struct {
	lock, rejects, appendRejects, reports, dynamo bool
}

// opened is what begin opened; close releases it, last opened first.
type opened struct {
	rejects *rejectFile
	rf      *reportFiles
	s       *session
	undo    []func()
}

// begin opens what o asks for, each step refusing before the next is
// taken; on an error what was opened is released.
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
		// Created first, published when the run starts reading
		// (rejectFile.Start), so that it then describes this run however
		// it ends, and a run refused before that leaves it as it was; a
		// resumed run adds to it.
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

// close releases what was opened, last first.
func (op *opened) close() {
	for i := len(op.undo) - 1; i >= 0; i-- {
		op.undo[i]()
	}
}

// writes is the writers of the parts of a run outside a full load
// (ChangesOnly, Prune, the follow; pipeline.Writes): Concurrency, or
// autoscaled with Auto, each number told to the metrics' writers gauge.
func (j *job) writes() pipeline.WritesOptions {
	return pipeline.WritesOptions{Concurrency: j.wr.Concurrency, Auto: j.wr.Auto, OnWriters: j.cfg.Metrics.Writers}
}
