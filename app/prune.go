package app

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"
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
