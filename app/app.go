// Package app is pg2dynamo's command line: it builds the urfave/cli
// application over the pipeline stages and maps outcomes to exit codes.
// main.go only calls Run, so tests run the real CLI in-process.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/internal/suggest"
)

// Exit codes, for scripts.
const (
	ExitOK          = 0   // every source row was written
	ExitFailed      = 1   // the run stopped: PostgreSQL, DynamoDB or I/O error
	ExitUsage       = 2   // nothing written: bad flags, an invalid mapping, a table that does not match it, a checkpoint in use
	ExitRejected    = 3   // the run finished but some rows were rejected (see the rejects file)
	ExitMismatch    = 4   // verify found the table differs from the source
	ExitUnbound     = 5   // init wrote the draft, but it would reject rows or leaves parts of the design unbound
	ExitNoGo        = 6   // cutover: a condition of the cutover is not met (or the follow stopped while waited for)
	ExitTimeout     = 7   // cutover --wait: --timeout passed first
	ExitInterrupted = 130 // stopped by SIGINT (143 for SIGTERM: 128 + the signal)
)

// Run runs the CLI with args (without the program name) and returns the
// exit code. SIGINT and SIGTERM cancel the run's context: the run stops
// reading, writes what it has read, prints its summary and exits with
// 128 + the signal's number (130, 143). A second signal ends the process
// at once (os.Exit with 128 + its number), whatever it is doing.
func Run(args []string, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	a := newApp(stdout, stderr)
	go watchSignals(sigs, cancel, func(sig syscall.Signal) {
		logLast(a, stderr, fmt.Sprintf("pg2dynamo: %s again: stopping at once, without finishing (a migrate's checkpoint holds the progress it last saved)", sig), 128+int(sig))
		os.Exit(128 + int(sig))
	})
	return runApp(ctx, a, args, stderr)
}

// watchSignals cancels the run with a signalError at the first signal
// from sigs, and calls exit with the second; it returns then, or when
// sigs is closed.
func watchSignals(sigs <-chan os.Signal, cancel context.CancelCauseFunc, exit func(syscall.Signal)) {
	sig, ok := <-sigs
	if !ok {
		return
	}
	cancel(signalError{toSyscall(sig)})
	if sig, ok = <-sigs; ok {
		exit(toSyscall(sig))
	}
}

// toSyscall returns sig's number (os.Interrupt is SIGINT on every system).
func toSyscall(sig os.Signal) syscall.Signal {
	if s, ok := sig.(syscall.Signal); ok {
		return s
	}
	return syscall.SIGINT
}

// signalError is the cancellation cause of a run stopped by a signal.
type signalError struct{ sig syscall.Signal }

func (e signalError) Error() string { return "stopped by " + e.sig.String() }

// RunContext is Run with a caller's context.
func RunContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runApp(ctx, newApp(stdout, stderr), args, stderr)
}

// runApp runs a, pg2dynamo's CLI, with args, and returns the exit code.
func runApp(ctx context.Context, a *cli.App, args []string, stderr io.Writer) int {
	err := a.RunContext(ctx, append([]string{"pg2dynamo"}, args...))
	if err == nil {
		return ExitOK
	}
	code := ExitFailed
	kind, hasKind := engine.KindOf(err)
	switch {
	case hasKind:
		code = map[engine.Kind]int{engine.KindFailed: ExitFailed, engine.KindRefused: ExitUsage,
			engine.KindRejected: ExitRejected, engine.KindMismatch: ExitMismatch, engine.KindUnbound: ExitUnbound,
			engine.KindNoGo: ExitNoGo, engine.KindTimeout: ExitTimeout}[kind]
	case isUsage(err):
		code = ExitUsage
	}
	if code == ExitFailed && ctx.Err() != nil {
		code = ExitInterrupted
	}
	if code == ExitInterrupted {
		var se signalError
		if errors.As(context.Cause(ctx), &se) {
			code = 128 + int(se.sig)
		}
		msg := "pg2dynamo: interrupted"
		if len(args) > 0 && args[0] == "migrate" {
			switch {
			case slices.Contains(args, "--dry-run"):
				msg += "; nothing was written"
			case slices.Contains(args, "--changes-only"):
				msg += "; what was written stays written, and migrate --changes-only run again finds what is left"
			default:
				msg += "; the summary shows what was written, and a new run (--resume) writes the rest"
			}
		}
		logLast(a, stderr, msg, code)
		return code
	}
	logLast(a, stderr, fmt.Sprintf("pg2dynamo: %v", err), code)
	return code
}

// logLast writes a run's last word to stderr: a line of text, or under
// --log-format json a record at level ERROR with the exit code.
func logLast(a *cli.App, stderr io.Writer, msg string, code int) {
	if st, ok := a.Metadata[opsKey].(*opsState); ok {
		if l := st.log.Load(); l != nil {
			l.Error(msg, code)
			return
		}
	}
	fmt.Fprintln(stderr, msg)
}

// requireMapping returns the --mapping path or a usage error. (urfave/cli's
// own Required check cannot be told apart from other errors.)
func requireMapping(c *cli.Context) (string, error) {
	p := c.Path("mapping")
	if p == "" {
		return "", usageError{fmt.Errorf("--mapping FILE is required; see pg2dynamo %s --help", c.Command.Name)}
	}
	return p, nil
}

func errUnexpectedArg(c *cli.Context) error {
	return fmt.Errorf("unexpected argument %q (flags after it are not read); see %s --help", c.Args().First(), c.Command.HelpName)
}

// usageError marks errors about how the command was called.
type usageError struct{ error }

func isUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

// New returns the pg2dynamo CLI, writing to stdout and stderr, without
// running it: for programs that read its commands and flags (the docs
// check, internal/docscheck). Run and RunContext run it.
func New(stdout, stderr io.Writer) *cli.App { return newApp(stdout, stderr) }

func newApp(stdout, stderr io.Writer) *cli.App {
	var stopProfile func() error
	return &cli.App{
		Name:  "pg2dynamo",
		Usage: "move a normalized PostgreSQL database into a DynamoDB single-table design",
		Description: `pg2dynamo reads PostgreSQL tables, turns each row into a DynamoDB item by the
rules of one declarative mapping file (keys as templates like USER#${user_id}),
and writes the items with BatchWriteItem in parallel.

Start with:
   pg2dynamo init --source URL --out mapping.yaml
   pg2dynamo plan --mapping mapping.yaml --with-source --source URL
   pg2dynamo migrate --mapping mapping.yaml --source URL --create-table
   pg2dynamo verify --mapping mapping.yaml --source URL

Exit codes: 0 every row written (and verified); 1 the run failed; 2 nothing
written: bad flags, an invalid mapping or query, a table that does not match
the mapping, a checkpoint in use; 3 finished, but some rows were rejected
(listed in the rejects file); 4 verification found the table differs from the
source; 5 init wrote the draft, but it would reject rows or (--from-design)
leaves parts of the design unbound; 6 cutover: no-go; 7 cutover --wait timed
out; 130 and 143 interrupted (SIGINT, SIGTERM) during a load, a check or a
comparison; a migrate --follow that was following when stopped by SIGINT or
SIGTERM ends cleanly, with 0 (or the code its load, rejects or audit give).`,
		Metadata:       map[string]any{opsKey: &opsState{}},
		Writer:         stdout,
		ErrWriter:      stderr,
		Version:        engine.Version(),
		ExitErrHandler: func(*cli.Context, error) {}, // Run maps errors to exit codes
		OnUsageError:   onUsageError,
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				var names []string
				for _, cmd := range c.App.Commands {
					names = append(names, cmd.Names()...)
				}
				return usageError{fmt.Errorf("unknown command %q%s; see pg2dynamo --help", c.Args().First(), suggest.Hint(c.Args().First(), names))}
			}
			return cli.ShowAppHelp(c)
		},
		Commands: commands(migrateCommand(), exportCommand(), importCommand(), snapshotCommand(), verifyCommand(), diffCommand(), planCommand(), initCommand(), schemaCommand(), dropSlotCommand(), cutoverCommand(), fixturesCommand()),
		Flags:    []cli.Flag{cpuProfileFlag(), logFormatFlag()},
		// The profile covers the whole command; After runs however the
		// command ends (success, error, usage error, interruption).
		Before: func(c *cli.Context) (err error) {
			if err := startLog(c); err != nil {
				return err
			}
			stopProfile, err = startCPUProfile(c.Path("cpuprofile"))
			return err
		},
		After: func(c *cli.Context) error {
			stopLog(c)
			if stopProfile == nil {
				return nil
			}
			stop := stopProfile
			stopProfile = nil
			return stop()
		},
	}
}

// cpuProfileFlag is a hidden global flag for measuring (make bench):
// pg2dynamo --cpuprofile FILE migrate ...
func cpuProfileFlag() cli.Flag {
	return &cli.PathFlag{
		Name: "cpuprofile", Hidden: true, TakesFile: true,
		Usage: "write a CPU profile (runtime/pprof) of the whole command to `FILE`",
	}
}

// startCPUProfile starts profiling into path, if not empty, and returns
// the function that stops it and publishes the file (an outputFile).
func startCPUProfile(path string) (func() error, error) {
	if path == "" {
		return nil, nil
	}
	f, err := engine.CreateOutput(path)
	if err != nil {
		return nil, usageError{fmt.Errorf("--cpuprofile: %w", err)}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Discard()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		return nil
	}, nil
}

// onUsageError turns urfave/cli's flag errors into exit code 2, with a
// pointer to --help instead of the whole help text.
func onUsageError(c *cli.Context, err error, _ bool) error {
	name := "pg2dynamo"
	if c.Command != nil && c.Command.HelpName != "" {
		name = c.Command.HelpName
	}
	return usageError{fmt.Errorf("%w%s; see %s --help", err, flagHint(c, err), name)}
}

// flagHint is a "did you mean" for an undefined flag among the flags of
// the command that refused it, or "".
func flagHint(c *cli.Context, err error) string {
	flags := c.App.Flags
	if c.Command != nil && c.Command.Name != "" {
		flags = c.Command.Flags
	}
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	return suggest.FlagHint(err.Error(), names)
}

// commands applies the app-wide settings to every command and subcommand.
func commands(cmds ...*cli.Command) []*cli.Command {
	for _, c := range cmds {
		c.OnUsageError = onUsageError
		c.HideHelpCommand = true
		addOpsFlags(c)
		commands(c.Subcommands...)
	}
	return cmds
}

// Flags shared by commands. Each is made anew for every app: urfave/cli
// writes a run's values into its flags, so one flag value shared by two
// runs in one process (tests run several CLIs) would race and carry a
// value (an environment variable's) from one run to the next.

func mappingFlag() cli.Flag {
	return &cli.PathFlag{
		Name: "mapping", Aliases: []string{"m"}, TakesFile: true,
		Usage: "the mapping `FILE` (YAML; required): target table, entities, key templates",
	}
}

func sourceFlag() cli.Flag {
	return &cli.StringFlag{
		Name: "source", EnvVars: []string{"DATABASE_URL"},
		Usage: "PostgreSQL connection `URL` (postgres://user@host:5432/db); when empty, the libpq variables PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD apply, as for psql",
	}
}

func endpointFlag() cli.Flag {
	return &cli.StringFlag{
		Name: "endpoint-url", EnvVars: []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL"},
		Usage: "DynamoDB endpoint `URL`, e.g. http://localhost:8000 for DynamoDB Local (default: the region's public endpoint)",
	}
}

// maxBackoffFlag caps the SDK's exponential backoff between retries.
func maxBackoffFlag() cli.Flag {
	return &cli.DurationFlag{Name: "max-backoff", EnvVars: []string{"PG2DYNAMO_MAX_BACKOFF"},
		Usage: "the longest wait between two retries of a DynamoDB request, and between two re-sends of a batch's UnprocessedItems (exponential backoff with jitter up to this)", DefaultText: "20s, the SDK's"}
}

func maxAttemptsFlag() cli.Flag {
	return &cli.IntFlag{Name: "max-attempts", Value: 10, Action: atLeast("max-attempts", 1, "expected at least 1"), Usage: "attempts per DynamoDB request on throttling, 5xx and network errors (exponential backoff with jitter)"}
}

func regionFlag() cli.Flag {
	return &cli.StringFlag{Name: "region", Usage: "AWS `REGION` (default: AWS_REGION or the profile's region)"}
}

func profileFlag() cli.Flag {
	return &cli.StringFlag{Name: "profile", Usage: "AWS shared config `PROFILE` (default: AWS_PROFILE or \"default\")"}
}
