package app

import (
	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/urfave/cli/v2"
)

// followFlags are migrate's flags for following changes after the load.
func followFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "follow", Usage: "after the full load, keep the table in step with PostgreSQL through logical replication until interrupted (SIGINT, SIGTERM: a clean stop) or, with --until-caught-up, until every change committed is applied; needs wal_level=logical and the REPLICATION attribute (see docs/follow.md)"},
		&cli.BoolFlag{Name: "until-caught-up", Usage: "with --follow: stop once every change committed before the check is applied"},
		&cli.BoolFlag{Name: "no-ddl-capture", Usage: "with --follow: do not install the event triggers that record DDL commands where the follow meets them in the stream (it installs them when the role is a superuser or rds_superuser); the follow then finds catalog changes by comparing the catalog every 2s and at every start"},
		&cli.StringFlag{Name: "slot", Usage: "with --follow: the `NAME` of the logical replication slot to create and stream (default pg2dynamo_ and the table's name)"},
		&cli.StringFlag{Name: "publication", Usage: "with --follow: the publication `NAME` of the mapping's tables, created if absent (default as --slot)"},
	}
}

// dropSlotCommand is pg2dynamo drop-slot.
func dropSlotCommand() *cli.Command {
	return &cli.Command{
		Name:      "drop-slot",
		Usage:     "drop the replication slot and the publication of migrate --follow",
		UsageText: "pg2dynamo drop-slot --mapping FILE [--source URL] [--slot NAME] [--publication NAME]",
		Description: `A replication slot keeps every WAL segment from its position on while
nothing streams from it: a follow stopped for long fills the server's disk.
Go on following with pg2dynamo migrate --follow --resume, or drop the slot and
the publication with drop-slot (refused after 5 s while a follow streams from
it); the server then keeps no more WAL, and a later --follow loads the table again.`,
		Flags: []cli.Flag{mappingFlag(), sourceFlag(), tableFlag(),
			&cli.StringFlag{Name: "slot", Usage: "the `NAME` of the replication slot to drop (default pg2dynamo_ and the table's name, as migrate --follow names it)"},
			&cli.StringFlag{Name: "publication", Usage: "the `NAME` of the publication to drop (default as --slot)"},
		},
		Action: runDropSlot,
	}
}

func runDropSlot(c *cli.Context) error {
	cfg, err := config(c)
	if err != nil {
		return err
	}
	return engine.DropSlot(c.Context, cfg, followOptions(c))
}
