package app

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
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
	ctx := c.Context
	var m *mapping.Mapping
	if !c.Bool("with-source") {
		if m, err = engine.LoadMapping(ctx, cfg.Mapping); err != nil {
			return err
		}
		if format == plan.FormatOneTable {
			return planOneTable(c, cfg, m)
		}
	}
	var s *engine.Session
	if c.Bool("with-source") {
		// Checked before the design is built: the file's problems are
		// reported with the source's.
		if s, err = engine.Open(ctx, cfg); err != nil {
			return err
		}
		defer s.Close(ctx)
		m = s.Mapping()
	}
	d := plan.Build(m)
	if sum := engine.MappingSHA256(cfg.Mapping); sum != "" {
		d.Tag(engine.MappingOwner(cfg.Mapping, sum).Tags())
	}
	if s != nil {
		if err := s.Source().Begin(ctx); err != nil {
			return err
		}
		var prog pipeline.Progress
		closeProg := func() {}
		if cfg.Progress != nil {
			prog, closeProg = cfg.Progress()
		}
		d.Stats, err = plan.Stats(ctx, s.Source(), m, s.Plans(), prog)
		closeProg()
		if err != nil {
			return err
		}
	}
	return plan.Render(c.App.Writer, d, format)
}

// planOneTable writes the OneTable schema of m: a mapping with library
// onetable, checked against the source (whose column types decide the key
// templates' padding), of which no row is read.
func planOneTable(c *cli.Context, cfg engine.Config, m *mapping.Mapping) error {
	if _, err := plan.OneTableSchema(m, nil); err != nil {
		return err // not library onetable: say so before connecting
	}
	s, err := engine.Open(c.Context, cfg)
	if err != nil {
		return err
	}
	defer s.Close(c.Context)
	return plan.WriteOneTable(c.App.Writer, s.Mapping(), s.Plans())
}
