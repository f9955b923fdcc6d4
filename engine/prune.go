package engine

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/verify"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// pruneStale compares the whole table with the source in s's snapshot and
// deletes each stale item (of a mapped type, no derived item's key),
// conditional on its type so an item retyped since the Scan is skipped; other
// types are left alone. When the derivation is in doubt (counts disagree, a key
// derived twice) it deletes nothing and says why. s.pruned keeps the result for
// the verify's report until the returned func is called.
func pruneStale(j *job, s *session, out sinkOut) (func(), error) {
	stderr := j.log
	fmt.Fprintf(stderr, "prune: comparing table %s with %s to find stale items\n", s.m.Table.Name, s.src.Name())
	prog, closeProg := j.progress()
	ap := newTableApplier(out.ds, s.m.TypeAttribute, s.m.Table.Keys(), s.m.Table.KeyTypes(), s.plans, j.writes(), nil)
	ap.metrics, ap.log, ap.what = j.cfg.Metrics, j.log, "prune"
	defer ap.close()
	res, err := verify.Compare(j.ctx, s.src, s.m, s.plans, s.client, verify.Options{
		Segments: j.rep.Segments, Reads: j.readLimit(), SkipPatterns: true, Progress: prog, Apply: ap, DeleteOnly: true,
	})
	closeProg()
	if err != nil {
		ap.abandon(j.ctx)
		return nil, fmt.Errorf("prune: %d stale items deleted before: %w", ap.stats.deleted.Load(), err)
	}
	s.pruned = ap.applied(report.CommandPrune, res, out.stats)
	describePrune(stderr, s.pruned, res)
	return func() { res.Close() }, nil
}

func describePrune(stderr io.Writer, a *report.Applied, res *outcome.Result) {
	switch {
	case a.Withheld != "":
		fmt.Fprintf(stderr, "prune: deleting nothing: %s\n", a.Withheld)
		return
	case res.Stale == 0:
		fmt.Fprintln(stderr, "prune: no stale items")
		return
	}
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(a.DeletedByType)) {
		parts = append(parts, fmt.Sprintf("%s %d", t, a.DeletedByType[t]))
	}
	fmt.Fprintf(stderr, "prune: deleted %d stale items (%s)", a.Deleted, strings.Join(parts, ", "))
	if a.Skipped > 0 {
		fmt.Fprintf(stderr, "; %d skipped: their type changed since the Scan", a.Skipped)
	}
	if res.Unmanaged > 0 {
		fmt.Fprintf(stderr, "; %d items of other types left alone", res.Unmanaged)
	}
	fmt.Fprintln(stderr)
}
