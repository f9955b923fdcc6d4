package app

import (
	"context"
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
	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/export"
	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify"
)

// ExitMismatch is verify's exit code when the table does not match.
const ExitMismatch = 4

func tableFlag() cli.Flag {
	return &cli.StringFlag{Name: "table", Usage: "DynamoDB table `NAME`, overriding table.name in the mapping (one mapping, several environments)"}
}

// reportFlags are the flags of verify and diff (and migrate's verification).
func reportFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "format", Value: report.FormatText, Usage: "report format on stdout: text, markdown or json"},
		&cli.PathFlag{Name: "report-json", TakesFile: true, Usage: "also write the full report (every key) as JSON to `FILE`"},
		&cli.PathFlag{Name: "html", TakesFile: true, Usage: "also write a self-contained HTML report to `FILE`"},
		&cli.IntFlag{Name: "limit", Value: 10, Usage: fmt.Sprintf("keys listed per list in text and markdown (--format json and --report-json list up to %d of each, sorted by key)", verify.MaxListed)},
		&cli.IntFlag{Name: "sample", Value: 20, Usage: "parameter tuples tried per access pattern, sampled from the source (all when fewer)"},
		&cli.IntFlag{Name: "segments", Value: 4, Usage: "parallel Scan segments"},
		&cli.DurationFlag{Name: "gsi-wait", Value: 10 * time.Second, Usage: "how long, in all, access-pattern checks on a GSI that do not match yet are queried again: a GSI is eventually consistent and can lag a load by a moment (0: query once)"},
	}
}

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "prove the table holds exactly what the source says: every item, by content, and every access pattern",
		UsageText: "pg2dynamo verify --mapping FILE [--source URL] [--endpoint-url URL] [--report-json FILE] [--html FILE] [options]",
		Description: `verify derives every item from the source again (one snapshot), reads the whole
table with a parallel segmented Scan, and compares them by canonical content:
counts per entity, and the keys of new items (derived from the source, not in
the table), changed items and stale items (in the table, of a mapped type, no
longer derived from the source). The items derived per entity must match
PostgreSQL's own count(*) of its source, less the rows rejected, with no key
derived twice. Then it runs each access
pattern of the mapping as a real Query (table or GSI) for parameters sampled
from the source, and compares the items, in order, with those the source says
must answer it; the items of one entity must come back in the order PostgreSQL
gives their sort key columns (text COLLATE "C"). A pattern whose every Query
finds nothing, or that has no parameters to run with, fails. It writes nothing.
When a follow (migrate --follow) streams into the table, verify first waits
until it has applied every change the check's snapshot holds (--follow-wait);
an item that changes committed after the snapshot changed while the check
ran is counted in flight (lag), not as a mismatch, and an access pattern's
answer skips it: the changes are read from a temporary replication slot
created with the check's snapshot and found through the mapping as the
follow finds them. A follow that has not applied every change before the
snapshot (it lags, or is not running: then it is not waited for) has its
slot copied, and the changes it has not applied count in flight too.

Exit code 0 when everything matches, 4 on any mismatch, 2 when nothing was
compared (bad flags, an invalid mapping, a table migrate would refuse), 1 on
any other failure, 130 or 143 when interrupted (SIGINT, SIGTERM).`,
		Flags: append(append(append([]cli.Flag{mappingFlag(), sourceFlag(), endpointFlag(), regionFlag(), profileFlag(), tableFlag()}, reportFlags()...), progressFlags()...),
			&cli.StringFlag{Name: "slot", Usage: "the replication slot `NAME` of a follow streaming into the table (migrate --follow; default pg2dynamo_ and the table's name)"},
			&cli.DurationFlag{Name: "follow-wait", Value: time.Minute, Usage: "when a follow (migrate --follow) streams into the table: how long to wait for it to apply every change this check's snapshot holds before comparing"}),
		Action: func(c *cli.Context) error {
			return runCompare(c, report.ModeVerify, 0)
		},
	}
}

func diffCommand() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "dry run: what a migration would change in the table, and what it would cost",
		UsageText: "pg2dynamo diff --mapping FILE [--source URL] [--endpoint-url URL] [--html FILE] [options]",
		Description: `diff computes every item a migration would write and compares it with the table
as it is: new, changed (attribute by attribute, before and after), unchanged,
and stale (items of the mapping's types the source no longer produces). It only
reads (DescribeTable, Scan, Query) and writes nothing. It estimates the cost of
the run: write units (each item rounded up per 1 KB, plus each GSI it lands in)
priced on demand. Against a table that does not exist, every item is new; a
table migrate would refuse (other keys, key types or GSIs) is refused, exit 2.

Exit code 0 when the comparison ran, whatever it found (diff reports
differences, it does not fail on them); 2 when nothing was compared (bad
flags, an invalid mapping, a table migrate would refuse); 1 on any other
failure; 130 or 143 when interrupted (SIGINT, SIGTERM).`,
		Flags: append([]cli.Flag{mappingFlag(), sourceFlag(), endpointFlag(), regionFlag(), profileFlag(), tableFlag(),
			&cli.Float64Flag{Name: "price-per-million", Value: report.DefaultPricePerMillion, Usage: "on-demand price in US dollars per million write request units (https://aws.amazon.com/dynamodb/pricing/on-demand/)"},
			&cli.Float64Flag{Name: "import-price-per-gb", Value: report.DefaultImportPricePerGB, Usage: "ImportTable's price in US dollars per GB of source data, uncompressed (https://aws.amazon.com/dynamodb/pricing/on-demand/, Import from S3)"},
		}, append(reportFlags(), progressFlags()...)...),
		Action: func(c *cli.Context) error {
			return runCompare(c, report.ModeDiff, c.Float64("price-per-million"))
		},
	}
}

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
	// pruned is what migrate --prune deleted before the verify, for its
	// report (pruneStale); nil otherwise.
	pruned *report.Applied
}

// open checks --endpoint-url, loads the mapping, and connects to and
// checks the source (connectAndCheck); s.client is built by dynamo. The
// caller closes s.src.
func open(c *cli.Context) (*session, error) {
	if c.Args().Present() {
		return nil, usageError{errUnexpectedArg(c)}
	}
	path, err := requireMapping(c)
	if err != nil {
		return nil, err
	}
	if err := checkEndpoint(c.String("endpoint-url")); err != nil {
		return nil, err
	}
	m, err := loadForCheck(c.Context, path)
	if err != nil {
		return nil, err
	}
	if t := c.String("table"); t != "" {
		if !mapping.ValidTableName(t) {
			return nil, usageError{fmt.Errorf("--table %q: expected 3-255 characters of a-z, A-Z, 0-9, '_', '-', '.'", t)}
		}
		m.Table.Name = t
	}
	s := &session{m: m, mappingSHA256: mappingSHA256(path)}
	if s.src, s.plans, err = connectAndCheck(c, m); err != nil {
		return nil, err
	}
	return s, nil
}

// dynamo builds s.client from the command's AWS flags; writeRetries, if
// not nil, counts the SDK's retries of writes (load.ClientConfig.WriteRetries).
func (s *session) dynamo(c *cli.Context, writeRetries *atomic.Int64) error {
	var err error
	s.client, err = load.NewClient(c.Context, load.ClientConfig{Region: c.String("region"), Profile: c.String("profile"),
		EndpointURL: c.String("endpoint-url"), MaxAttempts: c.Int("max-attempts"), WriteRetries: writeRetries})
	if err == nil && testRetryBackoff > 0 {
		s.client = dynamodb.New(s.client.Options(), func(o *dynamodb.Options) {
			o.Retryer = retry.AddWithMaxBackoffDelay(o.Retryer, testRetryBackoff)
		})
	}
	return err
}

// testRetryBackoff, when above 0, is the wait between retries of the
// DynamoDB client and between UnprocessedItems re-sends of the sink,
// instead of the SDK's exponential backoff of up to 20 s. Only this
// package's tests set it (TestMain), so that the tests of retries retry
// as often but do not sleep through real backoff; 0 in pg2dynamo.
var testRetryBackoff time.Duration

// checkReportFlags refuses report flags out of range.
func checkReportFlags(c *cli.Context) error {
	if n := c.Int("segments"); n < 1 || n > 64 {
		return usageError{fmt.Errorf("--segments %d: expected 1 to 64", n)}
	}
	if n := c.Int("sample"); n < 1 {
		return usageError{fmt.Errorf("--sample %d: expected at least 1", n)}
	}
	return nil
}

func runCompare(c *cli.Context, mode string, price float64) error {
	format := c.String("format")
	if format != report.FormatText && format != report.FormatMarkdown && format != report.FormatJSON {
		return usageError{errFormat(format)}
	}
	if err := checkReportFlags(c); err != nil {
		return err
	}
	rf, err := openReportFiles(c)
	if err != nil {
		return err
	}
	defer rf.discard()
	s, err := open(c)
	if err != nil {
		return err
	}
	defer s.src.Close(c.Context)
	if err := s.dynamo(c, nil); err != nil {
		return err
	}
	var watch *follow.Watch
	if mode == report.ModeVerify {
		if watch, err = watchFollow(c, s); err != nil {
			return err
		}
	}
	if watch != nil {
		defer watch.Close(context.WithoutCancel(c.Context))
	} else {
		if err := s.src.Begin(c.Context); err != nil {
			return err
		}
	}
	return compareAndReport(c, s, mode, price, c.App.Writer, rf)
}

// watchFollow, when a follow's replication slot exists for the table
// (migrate --follow streams into it), begins s's snapshot at a temporary
// slot's exported snapshot and sets s.inFlight to the follow.Watch of the
// changes the follow has not applied: an item they changed while the
// check ran, or that the follow has yet to put or delete, counts as in
// flight, not as wrong. It first waits (up to --follow-wait) until the
// follow has applied every change the snapshot holds: its confirmed
// position reaches the snapshot's. A follow that does not get there (it
// lags, or is not running) has the changes committed before the snapshot
// that it has not applied watched too (follow.Watch.FromFollow). It
// returns nil, with s's snapshot not begun, when there is no such slot.
func watchFollow(c *cli.Context, s *session) (*follow.Watch, error) {
	ctx := c.Context
	slot, pub, err := followNames(c, s.m)
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
	w, err := follow.NewWatch(ctx, c.String("source"), g, pub)
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
	if err := followLag(c, conn, w, slot); err != nil {
		w.Close(ctx)
		return nil, err
	}
	return w, nil
}

// followLag waits (up to --follow-wait) until the follow of slot has
// applied every change before w's snapshot, and says how far it got. A
// follow behind it then has w watch the changes it has not applied
// (follow.Watch.FromFollow), so that what it has not done yet counts as
// in flight, not as differences.
func followLag(c *cli.Context, conn *pgx.Conn, w *follow.Watch, slot string) error {
	ctx := c.Context
	at := w.Consistent()
	start, wait := time.Now(), c.Duration("follow-wait")
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
		fmt.Fprintf(c.App.ErrWriter, "verify: the follow (slot %s) has applied every change this check's snapshot holds (%s, waited %s); items changed after it while the check runs count as in flight\n",
			slot, at, time.Since(start).Round(time.Millisecond))
	case !active:
		fmt.Fprintf(c.App.ErrWriter, "verify: the follow of slot %s is not running, %d bytes behind this check's snapshot: the items the changes it has not applied explain count as in flight (resume it: migrate --follow --resume)\n",
			slot, uint64(at)-uint64(confirmed))
	default:
		fmt.Fprintf(c.App.ErrWriter, "verify: the follow (slot %s) is %d bytes behind this check's snapshot after %s: the items the changes it has not applied explain count as in flight\n",
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

// reportFiles are the --report-json and --html files of a command, each
// nil when not asked for. They are opened before the command's work, so
// that a path that cannot be written fails it before the work, not after
// (a migration of hours), and published when written (see outputFile): a
// failed command leaves the files of the last run as they were.
type reportFiles struct{ json, html *outputFile }

// openReportFiles opens the report files c's flags ask for; the caller
// defers discard.
func openReportFiles(c *cli.Context) (*reportFiles, error) {
	rf := &reportFiles{}
	for _, f := range []struct {
		flag string
		dst  **outputFile
	}{{"report-json", &rf.json}, {"html", &rf.html}} {
		if p := c.Path(f.flag); p != "" {
			file, err := createOutput(p, false)
			if err != nil {
				rf.discard()
				return nil, usageError{fmt.Errorf("--%s: %w", f.flag, err)}
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
func compareAndReport(c *cli.Context, s *session, mode string, price float64, out io.Writer, rf *reportFiles) error {
	if err := s.checkTable(c); err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "%s: deriving items from %s and reading table %s\n", mode, s.src.Name(), s.m.Table.Name)
	prog, closeProg, err := progressOf(c)
	if err != nil {
		return err
	}
	run := s.runInfo(c, time.Now())
	res, err := verify.Compare(c.Context, s.src, s.m, s.plans, s.client, verify.Options{
		Segments: c.Int("segments"), Sample: c.Int("sample"), SkipPatterns: mode == report.ModeDiff, IndexWait: c.Duration("gsi-wait"),
		InFlight: s.inFlight, ExportBytes: exportBytes(mode), ChangeCost: mode == report.ModeDiff, Progress: prog,
	})
	closeProg()
	if err != nil {
		return err
	}
	defer res.Close() // its lists' temporary files
	r := report.New(mode, res, price)
	r.Run = run
	r.Applied = s.pruned // what migrate --prune deleted before this check, if anything
	if mode == report.ModeDiff {
		r.PriceImport(c.Float64("import-price-per-gb"))
	}
	if err := writeReport(c, r, out, rf); err != nil {
		return err
	}
	if mode == report.ModeVerify && !r.OK {
		return withCode(ExitMismatch, fmt.Errorf("%s%s", r.Headline(), staleHint(res)))
	}
	return nil
}

// writeReport writes r to out in --format (text when the command has no
// --format) and to the report files rf holds, publishing each once
// written.
func writeReport(c *cli.Context, r *report.Report, out io.Writer, rf *reportFiles) error {
	format := c.String("format")
	if format == "" { // migrate has no --format: its report is text
		format = report.FormatText
	}
	if err := report.Render(out, r, format, c.Int("limit")); err != nil {
		return err
	}
	if f := rf.json; f != nil {
		if err := report.Render(f, r, report.FormatJSON, 0); err != nil {
			return fmt.Errorf("--report-json: %w", err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("--report-json: %w", err)
		}
	}
	if f := rf.html; f != nil {
		if err := report.HTML(f, r); err != nil {
			return fmt.Errorf("--html: %w", err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("--html: %w", err)
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
	return export.LineBytes
}

// staleHint, when stale items are the only difference (nothing missing,
// changed or derived twice, every count agreeing), says what they are and
// what removes them; "" otherwise.
func staleHint(res *verify.Result) string {
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
		"pg2dynamo migrate --prune deletes them (migrate --changes-only too, writing only what differs), pg2dynamo diff lists them", res.Stale)
}

// runInfo describes the comparison beginning at start, for its report:
// the source without its password, the endpoint (its password, if any,
// redacted) and region, the table, the mapping file and its hash, and
// pg2dynamo's version.
func (s *session) runInfo(c *cli.Context, start time.Time) *report.Run {
	run := &report.Run{Time: report.RunTime(start), Source: s.src.Name(), Endpoint: report.Endpoint(c.String("endpoint-url")),
		Table: s.m.Table.Name, Mapping: c.Path("mapping"), MappingSHA256: s.mappingSHA256, Version: Version()}
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
