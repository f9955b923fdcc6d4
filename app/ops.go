package app

import (
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/metrics"
)

// What an operations team runs a command with: --metrics-addr (the
// commands that run long), --max-lag (migrate --follow) and the global
// --log-format.

// metricsCommands are the commands that take --metrics-addr.
var metricsCommands = map[string]bool{"migrate": true, "verify": true, "diff": true, "export": true, "import": true}

// opsState is what a command's Before set up for its run and its After
// tears down: the metrics server, and stderr as JSON records.
type opsState struct {
	metrics *metrics.Run
	server  *metrics.Server
	// log is stderr under --log-format json (nil: text); atomic, as the
	// signal handler reads it from its goroutine.
	log atomic.Pointer[jsonLog]
}

// opsKey is the app's Metadata key of its *opsState.
const opsKey = "ops"

// opsOf returns c's app's opsState (a zero one for an app without).
func opsOf(c *cli.Context) *opsState {
	if st, ok := c.App.Metadata[opsKey].(*opsState); ok {
		return st
	}
	return &opsState{}
}

// logFormatFlag is the global --log-format: global, so that it acts
// before the command's own flags are read (their errors are records too).
func logFormatFlag() cli.Flag {
	return &cli.StringFlag{Name: "log-format", Value: "text", EnvVars: []string{"PG2DYNAMO_LOG_FORMAT"},
		Usage: "stderr's format: text, or json for one JSON object a line (log/slog: time, level, msg and the run's fields: command, table, and a follow's lsn, lag and counts); json turns progress bars off"}
}

// startLog acts on --log-format, before the command runs: json makes
// stderr a jsonLog whose records carry the command's name.
func startLog(c *cli.Context) error {
	switch f := c.String("log-format"); f {
	case "text":
		return nil
	case "json":
		l := newJSONLog(c.App.ErrWriter, slog.String("command", commandName(c.Args().Slice())))
		opsOf(c).log.Store(l)
		c.App.ErrWriter = l
		return nil
	default:
		return usageError{fmt.Errorf("--log-format %q: expected text or json", f)}
	}
}

// commandName is the command args run: its first word, and the second
// when it is not a flag (snapshot hold, fixtures load).
func commandName(args []string) string {
	if len(args) == 0 {
		return ""
	}
	if len(args) > 1 && !strings.HasPrefix(args[1], "-") && (args[0] == "snapshot" || args[0] == "fixtures") {
		return args[0] + " " + args[1]
	}
	return args[0]
}

// stopLog writes what stderr holds of a last line without its newline.
func stopLog(c *cli.Context) {
	if l := opsOf(c).log.Load(); l != nil {
		l.Flush()
	}
}

// addOpsFlags gives cmd, when it runs long, --metrics-addr (with
// --max-lag on migrate), with the Before and After that act on them.
func addOpsFlags(cmd *cli.Command) {
	if !metricsCommands[cmd.Name] {
		return
	}
	cmd.Flags = append(cmd.Flags, &cli.StringFlag{Name: "metrics-addr",
		Usage: "serve /metrics (Prometheus text format) and /healthz (200, or 503 with the reason) on `HOST:PORT` while the command runs (see docs/operations.md)"})
	if cmd.Name == "migrate" {
		cmd.Flags = append(cmd.Flags, &cli.DurationFlag{Name: "max-lag", Action: positive("max-lag"), DefaultText: "no limit",
			Usage: "with --follow and --metrics-addr: /healthz answers 503 while the follow's lag (commit to table) is over this `DURATION`"})
	}
	cmd.Before, cmd.After = startMetrics, stopMetrics
}

// startMetrics acts on --metrics-addr: --max-lag without what it needs,
// or an address that cannot be listened on (a port in use), is a usage
// error, before anything is written.
func startMetrics(c *cli.Context) error {
	if c.IsSet("max-lag") && (!c.Bool("follow") || c.String("metrics-addr") == "") {
		return usageError{fmt.Errorf("--max-lag needs --follow and --metrics-addr: it sets when /healthz answers 503")}
	}
	addr := c.String("metrics-addr")
	if addr == "" {
		return nil
	}
	st := opsOf(c)
	st.metrics = metrics.New(metrics.Options{MaxLag: c.Duration("max-lag")})
	srv, err := metrics.Listen(addr, st.metrics)
	if err != nil {
		return usageError{fmt.Errorf("--metrics-addr %s: %w", addr, err)}
	}
	st.server = srv
	// The address listened on: a port 0 is the free port chosen.
	fmt.Fprintf(c.App.ErrWriter, "metrics: serving /metrics and /healthz on http://%s\n", srv.Addr())
	return nil
}

// stopMetrics stops the metrics server.
func stopMetrics(c *cli.Context) error {
	st := opsOf(c)
	if st.server == nil {
		return nil
	}
	err := st.server.Close()
	st.server = nil
	return err
}

// jsonProgress is the --progress mode under --log-format json: no bars
// (auto and bars draw none), lines as JSON records.
func jsonProgress(mode string) string {
	if mode == "lines" {
		return mode
	}
	return "none"
}
