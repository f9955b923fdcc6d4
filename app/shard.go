package app

import (
	"fmt"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
)

// shardFlags are the flags of a run split across processes (migrate,
// export).
func shardFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "shard", Usage: "`i/N`: do shard i of N (at most " + strconv.Itoa(pipeline.MaxShards) + ") of the run (each entity's primary-key ranges cut N ways; an entity without a primary key goes whole to one shard), with no coordinator; each shard has its own checkpoint and rejects file (default names get -shard-i-of-N); not with --follow: one process follows, after the shards are done"},
		&cli.StringFlag{Name: "snapshot", Usage: "read the snapshot `NAME` that pg2dynamo snapshot hold (or pg_export_snapshot()) keeps open, so that every shard reads the same data; without it each shard reads a snapshot of its own, and rows inserted or deleted while the shards start can fall between their ranges"},
	}
}

// shardOf parses --shard (the whole run without it) and, for a shard,
// gives the checkpoint and rejects files default names of their own.
func shardOf(c *cli.Context) (pipeline.Shard, error) {
	text := c.String("shard")
	if text == "" {
		return pipeline.Shard{}, nil
	}
	sh, err := pipeline.ParseShard(text)
	if err != nil {
		return sh, usageError{fmt.Errorf("--shard: %w", err)}
	}
	for _, f := range []struct{ flag, base string }{{"checkpoint", "pg2dynamo-checkpoint"}, {"rejects", "pg2dynamo-rejects"}} {
		if c.IsSet(f.flag) || c.String(f.flag) == "" {
			continue
		}
		ext := map[string]string{"checkpoint": ".json", "rejects": ".jsonl"}[f.flag]
		_ = c.Set(f.flag, fmt.Sprintf("%s-shard-%d-of-%d%s", f.base, sh.Index, sh.Count, ext))
	}
	return sh, nil
}

func snapshotCommand() *cli.Command {
	return &cli.Command{
		Name:  "snapshot",
		Usage: "hold a snapshot of the source open for the shards of a run (--snapshot)",
		Subcommands: []*cli.Command{{
			Name:      "hold",
			Usage:     "export a snapshot, print its name, and keep it open until SIGINT or SIGTERM",
			UsageText: "pg2dynamo snapshot hold [--source URL]",
			Description: `hold begins a read-only REPEATABLE READ transaction, exports its snapshot
(pg_export_snapshot()) and prints its name on stdout, then waits: while it runs,
every shard started with --snapshot NAME reads exactly the same data, so every
row belongs to exactly one shard. Stop it (SIGINT, SIGTERM) once every shard
has begun reading. https://www.postgresql.org/docs/current/functions-admin.html#FUNCTIONS-SNAPSHOT-SYNCHRONIZATION`,
			Flags: []cli.Flag{sourceFlag()},
			Action: func(c *cli.Context) error {
				ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
				defer stop()
				return engine.HoldSnapshot(ctx, connection(c), func(name, source string) {
					fmt.Fprintln(c.App.Writer, name)
					fmt.Fprintf(c.App.ErrWriter, "holding snapshot %s of %s; stop with SIGINT or SIGTERM once every shard has begun\n", name, source)
				})
			},
		}},
	}
}
