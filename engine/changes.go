package engine

import (
	"fmt"
	"time"

	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/verify"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// changesOnly is migrate with ChangesOnly: one comparison in one snapshot hands
// new and changed items to the sink as each bucket is compared, then, when the
// counts agree, the stale items to conditional deletes; then, unless NoVerify,
// every key written is read back and the access patterns run. Exit 4 when the
// check fails, 3 on rejects.
func changesOnly(j *job) error {
	op, err := j.begin(opening{lock: true, rejects: true, reports: true})
	if err != nil {
		return err
	}
	defer op.close()
	s := op.s
	if j.mig.PreviousMapping != "" {
		return evolveChanges(j, op)
	}
	out, err := openSink(j, s)
	if err != nil {
		return err
	}
	return writeChanges(j, s, op, out, nil, nil)
}

// writeChanges runs applyChanges and reports; done, if set, runs once every
// difference is applied and read back.
func writeChanges(j *job, s *session, op *opened, out sinkOut, narrow func(*verify.Options), done func() error) error {
	rejects, rf := op.rejects, op.rf
	if err := s.src.Begin(j.ctx); err != nil {
		return err
	}
	if err := rejects.Start(); err != nil {
		return err
	}
	r, res, err := applyChanges(j, s, out, rejects, narrow)
	if err != nil {
		fmt.Fprintf(j.log, "pg2dynamo: what was written before the error stays written; run migrate %s again to finish: its comparison finds what is left\n", j.opt(OptChangesOnly))
		return err
	}
	defer res.Close()
	if err := writeReport(j, r, j.out, rf); err != nil {
		return err
	}
	if err := rejects.Close(); err != nil {
		return err
	}
	if r.Applied.ReadBack && !r.OK {
		return mismatch(fmt.Errorf("%s", r.Headline()))
	}
	if done != nil && res.Applied.Withheld == "" {
		if err := done(); err != nil {
			return err
		}
	}
	if n := r.Totals.Rejected + r.Applied.Rejected; n > 0 {
		return rejected(fmt.Errorf("%d rows or items rejected: see %s", n, rejects.path))
	}
	return nil
}

// applyChanges runs ChangesOnly's writing comparison, narrowed by narrow if
// set; the caller closes the Result.
func applyChanges(j *job, s *session, out sinkOut, rejects *rejectFile, narrow func(*verify.Options)) (*report.Report, *outcome.Result, error) {
	check := !j.mig.NoVerify
	fmt.Fprintf(j.log, "changes-only: deriving items from %s and comparing them with table %s; the new and changed items are written as they are found, the stale ones deleted after\n",
		s.src.Name(), s.m.Table.Name)
	prog, closeProg := j.progress()
	ap := newTableApplier(out.ds, s.m.TypeAttribute, s.m.Table.Keys(), s.m.Table.KeyTypes(), s.plans, j.writes(), rejects.Write)
	ap.metrics, ap.log, ap.what = j.cfg.Metrics, j.log, "changes-only"
	defer ap.close()
	opts := verify.Options{Segments: j.rep.Segments, Reads: j.readLimit(), Sample: j.rep.Sample, IndexWait: j.rep.GSIWait, Progress: prog, Readers: j.ld.Readers, MinRangeRows: j.ld.MinRangeRows,
		SkipPatterns: !check, Apply: ap, OnReject: rejects.Write}
	if check {
		opts.ReadBack = s.client
	}
	if narrow != nil {
		narrow(&opts)
		ap.guard = opts.Types
	}
	run := s.runInfo(j, time.Now())
	res, err := verify.Compare(j.ctx, s.src, s.m, s.plans, s.client, opts)
	closeProg()
	if err != nil {
		ap.abandon(j.ctx)
		return nil, nil, err
	}
	r := report.New(report.ModeChanges, res, 0)
	r.Run = run
	r.Applied = ap.applied(report.CommandChangesOnly, res, out.stats)
	return r, res, nil
}
