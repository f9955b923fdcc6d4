package app

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/verify"
)

// changesOnlyFlag is migrate's --changes-only.
func changesOnlyFlag() cli.Flag {
	return &cli.BoolFlag{Name: "changes-only", Usage: "write only what differs: derive every item from the source and compare it with the table, " +
		"as diff and verify do (in bounded memory), putting each new and changed item as the comparison finds it; then delete the stale items " +
		"(each conditional on its type, as --prune), read every write back and run the access patterns (--no-verify skips those). " +
		"Interrupted, run it again: its comparison finds what is left. Not with --follow, --shard, --prune or --resume"}
}

// checkChangesOnly refuses what --changes-only cannot be combined with,
// saying why (usage errors: nothing is written).
func checkChangesOnly(c *cli.Context) error {
	if !c.Bool("changes-only") {
		return nil
	}
	for _, f := range []struct{ flag, why string }{
		{"follow", "a follow keeps the table in step itself, from its replication slot; --changes-only brings a table no follow keeps in step back in line (run it before migrate --follow)"},
		{"shard", "a shard reads only part of the source, so it cannot tell an item no row derives (stale) from another shard's; run --changes-only once, unsharded"},
		{"prune", "--changes-only deletes the stale items itself, each conditional on its type as --prune does; leave out --prune"},
		{"resume", "--changes-only keeps no checkpoint: run it again, and its comparison finds what is left"},
	} {
		if c.IsSet(f.flag) {
			return usageError{fmt.Errorf("--changes-only with --%s: %s", f.flag, f.why)}
		}
	}
	if c.String("sink") != "dynamodb" {
		return usageError{fmt.Errorf("--changes-only needs --sink dynamodb")}
	}
	return nil
}

// changesOnly is migrate --changes-only: in one snapshot, one comparison of
// every derived item with the table (verify.Compare) hands each new and
// changed item to the run's DynamoDB sink as its bucket is compared, then,
// when the counts agree, the stale items to conditional deletes
// (tableApplier); then, unless --no-verify, every key written is read back
// and the access patterns run. The report (text on stdout, --report-json,
// --html) gives what was compared, written and deleted, the write units,
// and the check. Exit 4 when the check fails, 3 when rows or items were
// rejected (see the rejects file).
func changesOnly(c *cli.Context) error {
	ctx := c.Context
	if err := checkReportFlags(c); err != nil {
		return err
	}
	release, err := lockCheckpoint(c.Path("checkpoint")) // one run at a time per rejects file
	if err != nil {
		return err
	}
	defer release()
	rejects, err := createRejects(c.Path("rejects"), false)
	if err != nil {
		return err
	}
	defer rejects.Close()
	rf, err := openReportFiles(c)
	if err != nil {
		return err
	}
	defer rf.discard()
	s, err := open(c)
	if err != nil {
		return err
	}
	defer s.src.Close(ctx)
	out, err := openSink(c, s)
	if err != nil {
		return err
	}
	if err := s.src.Begin(ctx); err != nil {
		return err
	}
	r, res, err := applyChanges(c, s, out, rejects)
	if err != nil {
		fmt.Fprintln(c.App.ErrWriter, "pg2dynamo: what was written before the error stays written; run migrate --changes-only again to finish: its comparison finds what is left")
		return err
	}
	defer res.Close()
	if err := writeReport(c, r, c.App.Writer, rf); err != nil {
		return err
	}
	if err := rejects.Close(); err != nil {
		return err
	}
	if r.Applied.ReadBack && !r.OK {
		return withCode(ExitMismatch, fmt.Errorf("%s", r.Headline()))
	}
	if n := r.Totals.Rejected + r.Applied.Rejected; n > 0 {
		return withCode(ExitRejected, fmt.Errorf("%d rows or items rejected: see %s", n, rejects.path))
	}
	return nil
}

// applyChanges runs --changes-only's comparison, which writes as it goes,
// and returns its report; the caller closes the Result.
func applyChanges(c *cli.Context, s *session, out sinkOut, rejects *rejectFile) (*report.Report, *verify.Result, error) {
	check := !c.Bool("no-verify")
	fmt.Fprintf(c.App.ErrWriter, "changes-only: deriving items from %s and comparing them with table %s; the new and changed items are written as they are found, the stale ones deleted after\n",
		s.src.Name(), s.m.Table.Name)
	prog, closeProg, err := progressOf(c)
	if err != nil {
		return nil, nil, err
	}
	ap := newTableApplier(out.ds, s.m.TypeAttribute, [2]string{s.m.Table.PartitionKey, s.m.Table.SortKey}, fixedWriters(c), rejects.Write)
	opts := verify.Options{Segments: c.Int("segments"), Sample: c.Int("sample"), IndexWait: c.Duration("gsi-wait"), Progress: prog,
		SkipPatterns: !check, Apply: ap, OnReject: rejects.Write}
	if check {
		opts.ReadBack = s.client
	}
	run := s.runInfo(c, time.Now())
	res, err := verify.Compare(c.Context, s.src, s.m, s.plans, s.client, opts)
	closeProg()
	if err != nil {
		ap.abandon(c.Context)
		return nil, nil, err
	}
	r := report.New(report.ModeChanges, res, 0)
	r.Run = run
	r.Applied = ap.applied(report.CommandChangesOnly, res, out.stats)
	return r, res, nil
}
