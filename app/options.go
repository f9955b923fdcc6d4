package app

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/progress"
)

// The flags of a command, read into the engine's configuration and
// option structs: the one place each flag's value is read.

// config is the engine configuration of c's common flags: the mapping
// (required), the source, the table, AWS, the writers, the version and
// the progress display --progress asks for (checked here).
func config(c *cli.Context) (engine.Config, error) {
	if c.Args().Present() {
		return engine.Config{}, usageError{errUnexpectedArg(c)}
	}
	path, err := requireMapping(c)
	if err != nil {
		return engine.Config{}, err
	}
	cfg := connection(c)
	cfg.Mapping = path
	if hasFlag(c, "progress") {
		mode, w, every := c.String("progress"), c.App.ErrWriter, c.Duration("progress-interval")
		if err := progress.CheckMode(mode); err != nil {
			return cfg, usageError{err}
		}
		if opsOf(c).log.Load() != nil {
			mode = jsonProgress(mode)
		}
		cfg.Progress = func() (pipeline.Progress, func()) {
			p, closeP, _ := progress.New(mode, w, every)
			return p, closeP
		}
	}
	return cfg, nil
}

// connection is the engine configuration of c's source, table and AWS
// flags, with the writers and the version: what a command without a
// mapping (init, snapshot hold) needs too.
func connection(c *cli.Context) engine.Config {
	return engine.Config{Source: c.String("source"), Table: c.String("table"),
		AWS: engine.AWS{Region: c.String("region"), Profile: c.String("profile"), EndpointURL: c.String("endpoint-url"),
			S3EndpointURL: c.String("s3-endpoint-url"), MaxAttempts: c.Int("max-attempts"), MaxBackoff: c.Duration("max-backoff")},
		Log: c.App.ErrWriter, Out: c.App.Writer, Metrics: opsOf(c).metrics, Naming: flagName,
		Summary: func(s engine.Summary) { printSummary(c.App.Writer, s) }}
}

// hasFlag says whether c's command defines the flag name.
func hasFlag(c *cli.Context, name string) bool {
	for _, f := range c.Command.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

func reportOptions(c *cli.Context) engine.ReportOptions {
	return engine.ReportOptions{Segments: c.Int("segments"), MaxReadUnits: c.Int("max-read-units"), Sample: c.Int("sample"), GSIWait: c.Duration("gsi-wait"),
		Format: c.String("format"), Limit: c.Int("limit"), JSON: c.Path("report-json"), HTML: c.Path("html"),
		PricePerMillion: c.Float64("price-per-million"), ImportPricePerGB: c.Float64("import-price-per-gb"),
		FollowWait: c.Duration("follow-wait")}
}

func writeOptions(c *cli.Context) engine.WriteOptions {
	o := engine.WriteOptions{Sink: c.String("sink"), CreateTable: c.Bool("create-table"),
		MaxWriteUnits: c.Int("max-write-units"), RetryDeadline: c.Duration("retry-deadline"),
		AllowOtherMapping: c.Bool("allow-other-mapping"), AllowOtherItems: c.Bool("allow-other-items")}
	o.Concurrency, o.Auto = concurrency(c)
	return o
}

// concurrency is --concurrency auto|N (checked by the command's flag
// check) and --max-concurrency: a number of writers, or an Autoscale.
func concurrency(c *cli.Context) (int, *pipeline.Autoscale) {
	if auto, n, _ := pipeline.ParseConcurrency(c.String("concurrency"), MaxConcurrency); !auto {
		return n, nil
	}
	return 0, &pipeline.Autoscale{Max: c.Int("max-concurrency")}
}

// minRangeRowsFlag is --min-range-rows, of the commands with --readers.
func minRangeRowsFlag() cli.Flag {
	return &cli.Int64Flag{Name: "min-range-rows", Value: pipeline.MinRangeRows, Action: atLeast[int64]("min-range-rows", 1, "expected at least 1"),
		Usage: "split a table's read across --readers only into primary-key ranges of at least `N` rows each"}
}

func loadOptions(c *cli.Context, shard pipeline.Shard) engine.LoadOptions {
	return engine.LoadOptions{Readers: c.Int("readers"), MinRangeRows: c.Int64("min-range-rows"), NoDuplicateCheck: c.Bool("no-duplicate-check"), Shard: shard,
		Snapshot: c.String("snapshot"), Rejects: c.Path("rejects")}
}

func followOptions(c *cli.Context) engine.FollowOptions {
	return engine.FollowOptions{Slot: c.String("slot"), Publication: c.String("publication"),
		UntilCaughtUp: c.Bool("until-caught-up"), StatusInterval: c.Duration("progress-interval"), NoDDLCapture: c.Bool("no-ddl-capture"), CatalogInterval: c.Duration("catalog-interval"),
		Audit: c.String("audit"), AuditCycle: c.Duration("audit-cycle"), AuditFile: c.Path("audit-file"), AuditSliceItems: c.Int("audit-slice-items")}
}

// valid is a flag's Action (urfave/cli runs it when the flag is given):
// a value ok refuses is a usage error, "--name value: expects".
func valid[T any](name string, ok func(T) bool, expects string) func(*cli.Context, T) error {
	return func(_ *cli.Context, v T) error {
		if !ok(v) {
			return usageError{fmt.Errorf("--%s %v: %s", name, v, expects)}
		}
		return nil
	}
}

// between is valid for a whole number from lo to hi.
func between(name string, lo, hi int) func(*cli.Context, int) error {
	return valid(name, func(n int) bool { return n >= lo && n <= hi }, fmt.Sprintf("expected %d to %d", lo, hi))
}

// atLeast is valid for a number of lo or more.
func atLeast[T int | int64](name string, lo T, expects string) func(*cli.Context, T) error {
	return valid(name, func(n T) bool { return n >= lo }, expects)
}

// within is valid for a number of lo to hi.
func within[T int | int64](name string, lo, hi T, expects string) func(*cli.Context, T) error {
	return valid(name, func(n T) bool { return n >= lo && n <= hi }, expects)
}

// positive is valid for a duration above 0.
func positive(name string) func(*cli.Context, time.Duration) error {
	return valid(name, func(d time.Duration) bool { return d > 0 }, "expected a positive duration")
}

// progressFlags are the flags of the commands that show progress.
func progressFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "progress", Value: "auto", Usage: "progress display: auto (bars on a terminal, lines otherwise), bars, lines or none; bars and lines show rows done of the snapshot's count(*), items/s, elapsed and the ETA"},
		&cli.DurationFlag{Name: "progress-interval", Value: 10 * time.Second, Action: positive("progress-interval"), Usage: "how often --progress lines prints a line (and migrate --follow its status line)"},
	}
}
