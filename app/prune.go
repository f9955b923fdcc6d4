package app

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/urfave/cli/v2"
	"golang.org/x/sync/errgroup"

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

// pruneStale compares the whole table with the source in s's snapshot
// (verify.Compare, every key listed) and deletes each stale item: one of a
// mapped type that no derived item has the key of. Items of other types
// (unmanaged) are left alone. Each DeleteItem is conditional on the item
// still having its type, so an item rewritten by another writer since the
// Scan is skipped, not deleted. When the derivation itself is in doubt (an
// entity's count disagrees with count(*), or a key is derived twice) it
// deletes nothing and says why.
func pruneStale(c *cli.Context, s *session) error {
	stderr := c.App.ErrWriter
	fmt.Fprintf(stderr, "prune: comparing table %s with %s to find stale items\n", s.m.Table.Name, s.src.Name())
	prog, closeProg, err := progressOf(c)
	if err != nil {
		return err
	}
	res, err := verify.Compare(c.Context, s.src, s.m, s.plans, s.client, verify.Options{
		Segments: c.Int("segments"), SkipPatterns: true, MaxListed: math.MaxInt, Progress: prog,
	})
	closeProg()
	if err != nil {
		return fmt.Errorf("prune: %w", err)
	}
	defer res.Close()
	for _, e := range res.Entities {
		if e.CountProblem != "" {
			fmt.Fprintf(stderr, "prune: deleting nothing: entity %s's items disagree with the source's count (%s)\n", e.Entity, e.CountProblem)
			return nil
		}
	}
	if res.Counts.Duplicates.Total > 0 {
		fmt.Fprintf(stderr, "prune: deleting nothing: %d keys are derived more than once\n", res.Counts.Duplicates.Total)
		return nil
	}
	if res.Stale == 0 {
		fmt.Fprintln(stderr, "prune: no stale items")
		return nil
	}
	deleted, skipped, byType, err := deleteStale(c, s, res)
	if err != nil {
		return fmt.Errorf("prune: %d stale items deleted before: %w", deleted, err)
	}
	fmt.Fprintf(stderr, "prune: deleted %d stale items (%s)", deleted, byType)
	if skipped > 0 {
		fmt.Fprintf(stderr, "; %d skipped: their type changed since the Scan", skipped)
	}
	if res.Unmanaged > 0 {
		fmt.Fprintf(stderr, "; %d items of other types left alone", res.Unmanaged)
	}
	fmt.Fprintln(stderr)
	return nil
}

// deleteStale deletes the stale items of res.Extra, --concurrency at a
// time, and returns how many were deleted, skipped (condition failed) and
// the deleted count per type.
func deleteStale(c *cli.Context, s *session, res *verify.Result) (deleted, skipped int64, byType string, err error) {
	mapped := map[string]bool{}
	for _, e := range s.m.Entities {
		mapped[e.Type] = true
	}
	var del, skip atomic.Int64
	perType := map[string]*atomic.Int64{}
	for t := range mapped {
		perType[t] = new(atomic.Int64)
	}
	g, ctx := errgroup.WithContext(c.Context)
	g.SetLimit(max(1, c.Int("concurrency")))
	for ref, err := range res.Extra.All() {
		if err != nil {
			return 0, 0, "", err
		}
		if !mapped[ref.Type] {
			continue
		}
		g.Go(func() error {
			_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
				TableName: aws.String(s.m.Table.Name),
				Key: map[string]types.AttributeValue{
					s.m.Table.PartitionKey: &types.AttributeValueMemberS{Value: ref.PK},
					s.m.Table.SortKey:      &types.AttributeValueMemberS{Value: ref.SK},
				},
				ConditionExpression:       aws.String("#type = :type"),
				ExpressionAttributeNames:  map[string]string{"#type": s.m.TypeAttribute},
				ExpressionAttributeValues: map[string]types.AttributeValue{":type": &types.AttributeValueMemberS{Value: ref.Type}},
			})
			var ccf *types.ConditionalCheckFailedException
			switch {
			case errors.As(err, &ccf):
				skip.Add(1)
				return nil
			case err != nil:
				return fmt.Errorf("delete %s / %s: %w", ref.PK, ref.SK, err)
			}
			del.Add(1)
			perType[ref.Type].Add(1)
			return nil
		})
	}
	err = g.Wait()
	var parts []string
	for t, n := range perType {
		if n.Load() > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", t, n.Load()))
		}
	}
	slices.Sort(parts)
	return del.Load(), skip.Load(), strings.Join(parts, ", "), err
}
