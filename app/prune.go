package app

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/verify"
)

// pruneFlag is migrate's --prune.
func pruneFlag() cli.Flag {
	return &cli.BoolFlag{Name: "prune", Usage: "after the load, compare the whole table with the source and delete the stale items: " +
		"of the mapping's types, no longer produced by the source (a deleted row, a changed key). Items of other types are never touched; " +
		"each delete is conditional on the item's type. The verify that follows checks the result (pg2dynamo diff lists what would go). " +
		"With --follow, before following; with --follow --resume, every item is loaded again first: the way to go on after a follow stopped on a TRUNCATE, a lowered replica identity or a lost table"}
}

// checkPrune refuses --prune where there is no full comparison to prune
// after: it needs the verify that ends a full, unsharded load.
func checkPrune(c *cli.Context) error {
	if !c.Bool("prune") {
		return nil
	}
	for _, f := range []string{"no-verify", "dry-run", "shard"} {
		if c.IsSet(f) {
			return usageError{fmt.Errorf("--prune with --%s: prune deletes what a full comparison after the load found stale, and --%s has none", f, f)}
		}
	}
	if c.String("sink") != "dynamodb" {
		return usageError{errors.New("--prune needs --sink dynamodb")}
	}
	return nil
}

// pruneStale compares the whole table with the source in s's snapshot and
// deletes each stale item: one of a mapped type that no derived item has
// the key of (verify.Compare with Options.Apply, DeleteOnly), through
// out's DynamoDB sink (tableApplier: a DeleteItem conditional on the
// item's type, --concurrency at a time, under --max-write-units). Items of
// other types (unmanaged) are left alone, and an item another writer
// retyped since the Scan is skipped, not deleted. When the derivation
// itself is in doubt (an entity's count disagrees with count(*), or a key
// is derived twice) it deletes nothing and says why. What it deleted is
// kept in s.pruned for the report of the verify that follows; the
// comparison's lists it points into stay until the returned func is
// called.
func pruneStale(c *cli.Context, s *session, out sinkOut) (func(), error) {
	stderr := c.App.ErrWriter
	fmt.Fprintf(stderr, "prune: comparing table %s with %s to find stale items\n", s.m.Table.Name, s.src.Name())
	prog, closeProg, err := progressOf(c)
	if err != nil {
		return nil, err
	}
	ap := newTableApplier(out.ds, s.m.TypeAttribute, [2]string{s.m.Table.PartitionKey, s.m.Table.SortKey}, fixedWriters(c), nil)
	res, err := verify.Compare(c.Context, s.src, s.m, s.plans, s.client, verify.Options{
		Segments: c.Int("segments"), SkipPatterns: true, Progress: prog, Apply: ap, DeleteOnly: true,
	})
	closeProg()
	if err != nil {
		ap.abandon(c.Context)
		return nil, fmt.Errorf("prune: %d stale items deleted before: %w", ap.stats.deleted.Load(), err)
	}
	s.pruned = ap.applied(report.CommandPrune, res, out.stats)
	describePrune(stderr, s.pruned, res)
	return func() { res.Close() }, nil
}

// describePrune says on stderr what --prune deleted, or why nothing.
func describePrune(stderr io.Writer, a *report.Applied, res *verify.Result) {
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
