package app

import (
	"slices"
	"time"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/urfave/cli/v2"
)

// followFlags are migrate's flags for following changes after the load.
func followFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "follow", Usage: "after the full load, keep the table in step with PostgreSQL through logical replication until interrupted (SIGINT, SIGTERM: a clean stop) or, with --until-caught-up, until every change committed is applied; needs wal_level=logical, the REPLICATION attribute (rds_replication on RDS), CREATE on the database and ownership of the tables (see docs/follow.md#prerequisites)"},
		&cli.BoolFlag{Name: "until-caught-up", Usage: "with --follow: stop once every change committed before the check is applied"},
		&cli.DurationFlag{Name: "catalog-interval", Value: engine.DefaultCatalogInterval, Usage: "with --follow: the longest the follow goes without comparing the source's catalog (column types, enum labels, partitions, storage, the publication) with what its items agree with; 0 turns those periodic checks off, leaving DDL capture's and the start's (for tests of the audit; never in production)"},
		&cli.BoolFlag{Name: "no-ddl-capture", Usage: "with --follow: do not install the event triggers that record DDL commands where the follow meets them in the stream (it installs them when the role is a superuser or rds_superuser); the follow then finds catalog changes by comparing the catalog every 2s and at every start"},
		&cli.StringFlag{Name: "slot", Usage: "with --follow: the `NAME` of the logical replication slot to create and stream (default pg2dynamo_ and the table's name)"},
		&cli.StringFlag{Name: "publication", Usage: "with --follow: the publication `NAME` of the mapping's tables, created if absent (default as --slot)"},
		&cli.StringFlag{Name: "audit", Value: "report", Action: valid("audit", func(s string) bool { return slices.Contains(auditModes, s) }, "expected off, report or repair"),
			Usage: "with --follow: the rolling audit, which compares the table with the source while the follow streams, every item at least once per --audit-cycle, " +
				"leaving out the keys the follow writes meanwhile (lag is not drift): it finds items changed or deleted in DynamoDB behind the follow's back, and changes the stream does not carry " +
				"(an enum label renamed). off; report: each drifted item (missing, changed or stale) is listed on stderr and in --audit-file, counted on the status line, and the follow exits 4 when stopped while the last cycle's drift remains; " +
				"repair: the same, and the follow rewrites each from the source (puts the missing and changed items, deletes the stale ones). Not with --until-caught-up"},
		&cli.DurationFlag{Name: "audit-cycle", Value: time.Hour, Action: positive("audit-cycle"), Usage: "with --follow: the period within which the audit compares every item at least once, " +
			"in one pass at its start (the first pass a cycle divided by its slices after the follow starts): the pass reads the whole source once (one REPEATABLE READ snapshot) and Scans the whole table once, spilling keys and content hashes to temporary files ($TMPDIR), then compares them about 100,000 keys at a time in memory"},
		// For tests of an audit in several slices on a small table.
		&cli.IntFlag{Name: "audit-slice-items", Hidden: true, Usage: "with --follow: the keys the audit compares in memory at a time"},
		&cli.PathFlag{Name: "audit-file", Value: engine.DefaultAuditFile, TakesFile: true, Usage: "with --follow: JSON Lines `FILE` listing every drifted item the audit finds {time, cycle, kind, entity, type, key, repaired} (created at the first; a --resume adds to it)"},
	}
}

// auditModes are --audit's words.
var auditModes = []string{"off", "report", "repair"}

// dropSlotCommand is pg2dynamo drop-slot.
func dropSlotCommand() *cli.Command {
	return &cli.Command{
		Name:      "drop-slot",
		Usage:     "drop the replication slot and the publication of migrate --follow",
		UsageText: "pg2dynamo drop-slot --mapping FILE [--source URL] [--table NAME] [--slot NAME] [--publication NAME]",
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
