package app

import (
	"fmt"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify"
)

func tableFlag() cli.Flag {
	return &cli.StringFlag{Name: "table", Usage: "DynamoDB table `NAME`, overriding table.name in the mapping (one mapping, several environments)"}
}

// reportFlags are the flags of verify and diff (and migrate's verification).
func reportFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "format", Value: report.FormatText, Usage: "report format on stdout: text, markdown or json",
			Action: valid("format", func(f string) bool {
				return slices.Contains([]string{report.FormatText, report.FormatMarkdown, report.FormatJSON}, f)
			},
				"expected text, markdown or json")},
		&cli.PathFlag{Name: "report-json", TakesFile: true, Usage: "also write the full report (every key) as JSON to `FILE`"},
		&cli.PathFlag{Name: "html", TakesFile: true, Usage: "also write a self-contained HTML report to `FILE`"},
		&cli.IntFlag{Name: "limit", Value: 10, Usage: fmt.Sprintf("keys listed per list in the text and markdown reports (JSON reports list up to %d of each, sorted by key)", verify.MaxListed)},
		&cli.IntFlag{Name: "sample", Value: 20, Action: atLeast("sample", 1, "expected at least 1"), Usage: "parameter tuples tried per access pattern, sampled from the source (all when fewer)"},
		&cli.IntFlag{Name: "segments", Value: 4, Action: between("segments", 1, 64), Usage: "parallel Scan segments"},
		&cli.IntFlag{Name: "max-read-units", Action: atLeast("max-read-units", 0, "expected a positive number (0: no cap)"), DefaultText: "no cap",
			Usage: "cap at `N` the read capacity units a second consumed reading the table (as DynamoDB reports them), leaving the rest of the table's reads to the application: the Scans of verify, diff, migrate's verification, --changes-only, --prune and a follow's audit passes, the access patterns' Queries and the read-backs"},
		&cli.DurationFlag{Name: "gsi-wait", Value: 10 * time.Second, Usage: "how long, in all, access-pattern checks on a GSI that do not match yet are queried again: a GSI is eventually consistent and can lag a load by a moment (0: query once)"},
	}
}

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "prove the table holds exactly what the source says: every item, by content, and every access pattern",
		UsageText: "pg2dynamo verify --mapping FILE [--source URL] [--endpoint-url URL] [--report-json FILE] [--html FILE] [options]",
		Description: `verify derives every item from the source again (one snapshot), reads the whole
table with a parallel segmented Scan, and compares them by canonical content:
counts per entity, and the keys of new items (derived from the source, not in
the table), changed items and stale items (in the table, of a mapped type, no
longer derived from the source). The items derived per entity must match
PostgreSQL's own count(*) of its source, less the rows rejected, with no key
derived twice. Then it runs each access
pattern of the mapping as a real Query (table or GSI) for parameters sampled
from the source, and compares the items, in order, with those the source says
must answer it; the items of one entity must come back in the order PostgreSQL
gives their sort key columns (text COLLATE "C"). A pattern whose every Query
finds nothing, or that has no parameters to run with, fails. It writes nothing.
When a follow (migrate --follow) streams into the table, verify first waits
until it has applied every change the check's snapshot holds (--follow-wait);
an item that changes committed after the snapshot changed while the check
ran is counted in flight (lag), not as a mismatch, and an access pattern's
answer skips it: the changes are read from a temporary replication slot
created with the check's snapshot and found through the mapping as the
follow finds them. A follow that has not applied every change before the
snapshot (it lags, or is not running: then it is not waited for) has its
slot copied, and the changes it has not applied count in flight too.

Exit code 0 when everything matches, 4 on any mismatch (a missing table: every
item is missing), 2 when nothing was compared (bad flags, an invalid mapping, a
table whose keys or GSIs are not the mapping's), 1 on any other failure, 130 or
143 when interrupted (SIGINT, SIGTERM).`,
		Flags: append(append(append([]cli.Flag{mappingFlag(), sourceFlag(), endpointFlag(), regionFlag(), profileFlag(), maxBackoffFlag(), maxAttemptsFlag(), tableFlag()}, reportFlags()...), progressFlags()...),
			&cli.StringFlag{Name: "slot", Usage: "the replication slot `NAME` of a follow streaming into the table (migrate --follow; default pg2dynamo_ and the table's name)"},
			&cli.StringFlag{Name: "publication", Usage: "that follow's publication `NAME` (migrate --follow --publication; default the slot's name)"},
			&cli.DurationFlag{Name: "follow-wait", Value: time.Minute, Usage: "when a follow (migrate --follow) streams into the table: how long to wait for it to apply every change this check's snapshot holds before comparing"}),
		Action: func(c *cli.Context) error {
			return runCompare(c, report.ModeVerify, 0)
		},
	}
}

func diffCommand() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "dry run: what a migration would change in the table, and what it would cost",
		UsageText: "pg2dynamo diff --mapping FILE [--source URL] [--endpoint-url URL] [--html FILE] [options]",
		Description: `diff computes every item a migration would write and compares it with the table
as it is: new, changed (attribute by attribute, before and after), unchanged,
and stale (items of the mapping's types the source no longer produces). It only
reads (DescribeTable, Scan, Query; BatchGetItem with --previous-mapping) and
writes nothing. It estimates the cost of
the run: write units (each item rounded up per 1 KB, plus each GSI it lands in)
priced on demand. Against a table that does not exist, every item is new; a
table migrate would refuse (other keys, key types or GSIs) is refused, exit 2.

Exit code 0 when the comparison ran, whatever it found (diff reports
differences, it does not fail on them); 2 when nothing was compared (bad
flags, an invalid mapping, a table migrate would refuse); 1 on any other
failure; 130 or 143 when interrupted (SIGINT, SIGTERM).`,
		Flags: append([]cli.Flag{mappingFlag(), sourceFlag(), endpointFlag(), regionFlag(), profileFlag(), maxBackoffFlag(), maxAttemptsFlag(), tableFlag(),
			&cli.Float64Flag{Name: "price-per-million", Value: transform.PricePerMillionWrites, Usage: "on-demand price in US dollars per million write request units (https://aws.amazon.com/dynamodb/pricing/on-demand/)"},
			&cli.Float64Flag{Name: "import-price-per-gb", Value: transform.ImportPricePerGB, Usage: "ImportTable's price in US dollars per GB of source data, uncompressed (https://aws.amazon.com/dynamodb/pricing/on-demand/, Import from S3)"},
			previousMappingFlag("what applying --mapping, a new version of the table's own mapping, would do and cost (migrate --changes-only --previous-mapping, or --follow --resume --previous-mapping): what changes per entity, the GSIs created and removed, and only the entities whose items change compared with the table, their items rewritten and deleted priced in write units; the table must exist (else exit 2)"),
		}, append(reportFlags(), progressFlags()...)...),
		Action: func(c *cli.Context) error {
			return runCompare(c, report.ModeDiff, c.Float64("price-per-million"))
		},
	}
}

func runCompare(c *cli.Context, mode string, price float64) error {
	cfg, err := config(c)
	if err != nil {
		return err
	}
	o := engine.CompareOptions{ReportOptions: reportOptions(c), Mode: mode, Slot: c.String("slot"), Publication: c.String("publication")}
	if mode == report.ModeDiff {
		o.PreviousMapping = c.Path("previous-mapping")
	}
	o.PricePerMillion = price
	return engine.Compare(c.Context, cfg, o)
}
