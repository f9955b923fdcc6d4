package app

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/plan"
)

func planCommand() *cli.Command {
	return &cli.Command{
		Name:      "plan",
		Usage:     "print the single-table design of a mapping: entity chart, access patterns, CreateTable, CloudFormation",
		UsageText: "pg2dynamo plan --mapping FILE [--format text|markdown|json|onetable] [--with-source] [--source URL]",
		Description: `plan prints the design the way the modeling guides draw it: the entity chart
(entity | PK | SK | GSI keys | attributes), the access-pattern table
(pattern | index | key condition | order), the CreateTable request as JSON
(aws dynamodb create-table --cli-input-json) and as a CloudFormation resource.

It touches no database unless asked: with --with-source it also checks the
mapping against the database and reads every row through the transformation
(writing nothing) to report per entity the row count, the average and maximum
item size and the write units a full load will consume.

--format onetable writes instead the dynamodb-onetable schema of a mapping
with library: onetable (JSON, for new Table({schema})): it checks the
mapping against the database, as --with-source does, for the column types
that decide the key templates' padding, and reads no row.`,
		Flags: append([]cli.Flag{
			mappingFlag(), sourceFlag(),
			&cli.StringFlag{Name: "format", Value: plan.FormatText, Usage: "output format: text, markdown, json, or onetable (the OneTable schema; reads the source's column types)"},
			&cli.BoolFlag{Name: "with-source", Usage: "read the source (--source, DATABASE_URL or PG*) for row counts, item sizes and write units"},
			previousMappingFlag("what changes from it to --mapping (per entity: attributes, key templates, GSI keys; the GSIs added and removed; the changes refused in place), then both designs, before and after (--format text or markdown only; not with --with-source)"),
		}, progressFlags()...),
		Action: runPlan,
	}
}

func runPlan(c *cli.Context) error {
	if c.Args().Present() {
		return usageError{errUnexpectedArg(c)}
	}
	format := c.String("format")
	switch format {
	case plan.FormatText, plan.FormatMarkdown, plan.FormatJSON:
	case plan.FormatOneTable:
		if c.Bool("with-source") {
			return usageError{fmt.Errorf("--format %s writes the schema only, without --with-source's estimates: drop --with-source", format)}
		}
	default:
		return usageError{fmt.Errorf("--format %q: expected text, markdown, json or onetable", format)}
	}
	cfg, err := config(c)
	if err != nil {
		return err
	}
	return engine.Plan(c.Context, cfg, engine.PlanOptions{Format: format, WithSource: c.Bool("with-source"), PreviousMapping: c.Path("previous-mapping")})
}
