package app

import (
	"fmt"

	"github.com/urfave/cli/v2"
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
