package app

import (
	"fmt"
	"log/slog"

	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/metrics"
)

// What an operations team runs a command with: --metrics-addr (the
// commands that run long), --max-lag (migrate --follow) and --log-format
// (every command).

// metricsCommands are the commands that take --metrics-addr.
var metricsCommands = map[string]bool{"migrate": true, "verify": true, "diff": true, "export": true, "import": true}

// opsState is what a command's Before set up for its run and its After
// tears down: the metrics server, and stderr as JSON records.
type opsState struct {
	metrics *metrics.Run
	server  *metrics.Server
	log     *jsonLog
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

// addOpsFlags gives cmd, a command that runs something, --log-format,
// and --metrics-addr (with --max-lag on migrate) when it runs long, with
// the Before and After that act on them.
func addOpsFlags(cmd *cli.Command) {
	cmd.Flags = append(cmd.Flags, &cli.StringFlag{Name: "log-format", Value: "text",
		Usage: "stderr's format: text, or json for one JSON object a line (log/slog: time, level, msg and the run's fields: command, table, and a follow's lsn, lag, counts); json turns progress bars off"})
	if metricsCommands[cmd.Name] {
		cmd.Flags = append(cmd.Flags, &cli.StringFlag{Name: "metrics-addr",
			Usage: "serve /metrics (Prometheus text format) and /healthz (200, or 503 with the reason) on `HOST:PORT` while the command runs (see docs/operations.md)"})
	}
	if cmd.Name == "migrate" {
		cmd.Flags = append(cmd.Flags, &cli.DurationFlag{Name: "max-lag", Action: positive("max-lag"),
			Usage: "with --follow and --metrics-addr: /healthz answers 503 while the follow's lag (commit to table) is over this `DURATION`"})
	}
	cmd.Before, cmd.After = startOps, stopOps
}

// startOps acts on the command's --log-format and --metrics-addr: a
// format not known, --max-lag without what it needs, or an address that
// cannot be listened on (a port in use) is a usage error, before anything
// is written.
func startOps(c *cli.Context) error {
	st := opsOf(c)
	switch f := c.String("log-format"); f {
	case "text":
	case "json":
		st.log = newJSONLog(c.App.ErrWriter, slog.String("command", c.Command.FullName()))
		c.App.ErrWriter = st.log
	default:
		return usageError{fmt.Errorf("--log-format %q: expected text or json", f)}
	}
	if c.IsSet("max-lag") && (!c.Bool("follow") || c.String("metrics-addr") == "") {
		return usageError{fmt.Errorf("--max-lag needs --follow and --metrics-addr: it sets when /healthz answers 503")}
	}
	addr := c.String("metrics-addr")
	if addr == "" {
		return nil
	}
	st.metrics = metrics.New(metrics.Options{MaxLag: c.Duration("max-lag")})
	srv, err := metrics.Listen(addr, st.metrics)
	if err != nil {
		return usageError{fmt.Errorf("--metrics-addr %s: %w", addr, err)}
	}
	st.server = srv
	return nil
}

// stopOps stops the metrics server and writes what stderr holds of a
// last line.
func stopOps(c *cli.Context) error {
	st := opsOf(c)
	var err error
	if st.server != nil {
		err = st.server.Close()
		st.server = nil
	}
	if st.log != nil {
		st.log.Flush()
	}
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

// metricsAddr is the address a --metrics-addr server listens on, "" when
// none (tests read it from the app's state).
func (st *opsState) metricsAddr() string {
	if st.server == nil {
		return ""
	}
	return st.server.Addr()
}
