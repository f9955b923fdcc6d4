package app

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/engine"
)

// cutoverCommand is pg2dynamo cutover.
func cutoverCommand() *cli.Command {
	return &cli.Command{
		Name:      "cutover",
		Usage:     "say whether a running follow is ready for the application to switch to DynamoDB; --wait waits until it has applied every write",
		UsageText: "pg2dynamo cutover --mapping FILE [--source URL] [--table NAME] [--slot NAME] [--rejects FILE] [--wait [--timeout DURATION]]",
		Description: `cutover reads the state of the follow (migrate --follow) of the mapping's table and
prints a go or no-go, each check with its reason: the replication slot (a follow
streams from it), its lag in WAL bytes, the table and its GSIs (ACTIVE), the
rejects file (no row rejected), the table's lease (held, fresh, by this follow's
slot) and its audit (a cycle completed, no drifted item left: no-go until the
first cycle, --audit-cycle, 1 hour by default). Exit 0 on go, 6 on no-go.

With --wait, once the application has stopped writing: it waits until go, takes
the source's WAL position (the moment the writes stopped), and exits 0 once the
follow has applied it, printing the position and the time it took. --timeout
bounds the wait (exit 7 past it). Then switch the application, stop the follow
and run pg2dynamo drop-slot.`,
		Flags: []cli.Flag{mappingFlag(), sourceFlag(), endpointFlag(), regionFlag(), profileFlag(), tableFlag(),
			&cli.StringFlag{Name: "slot", Usage: "the `NAME` of the follow's replication slot (default pg2dynamo_ and the table's name, as migrate --follow names it)"},
			&cli.PathFlag{Name: "rejects", TakesFile: true, Usage: "the follow's rejects `FILE`: a row listed in it is a no-go (default: not checked)"},
			&cli.BoolFlag{Name: "wait", Usage: "wait until go, then until the follow has applied the source's WAL position at that moment (stop the application's writes first)"},
			&cli.DurationFlag{Name: "timeout", Action: positive("timeout"), Usage: "with --wait: give up after this `DURATION` (exit 7)", DefaultText: "no limit"},
		},
		Action: runCutover,
	}
}

func runCutover(c *cli.Context) error {
	if c.IsSet("timeout") && !c.Bool("wait") {
		return usageError{errTimeoutWithoutWait}
	}
	cfg, err := config(c)
	if err != nil {
		return err
	}
	return engine.Cutover(c.Context, cfg, engine.CutoverOptions{FollowOptions: engine.FollowOptions{Slot: c.String("slot")},
		Rejects: c.Path("rejects"), Wait: c.Bool("wait"), Timeout: c.Duration("timeout"),
		Report: func(r engine.CutoverReport) { printCutoverReport(c.App.Writer, r) }})
}

// printCutoverReport prints the go or no-go, then one line per check: its
// name, verdict and reason.
func printCutoverReport(w io.Writer, r engine.CutoverReport) {
	head := "cutover: GO\n"
	if !r.Go {
		head = "cutover: NO-GO\n"
	}
	var b strings.Builder
	b.WriteString(head)
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "  %-8s %-12s %s\n", c.Name, c.Verdict, c.Reason)
	}
	io.WriteString(w, b.String())
}

var errTimeoutWithoutWait = errors.New("--timeout without --wait: it bounds --wait's wait")
