package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/fixtures"
)

func fixturesCommand() *cli.Command {
	return &cli.Command{
		Name:  "fixtures",
		Usage: "load the sample databases (customers, tickets, attendance) into PostgreSQL",
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usageError{fmt.Errorf("unknown command %q; see pg2dynamo fixtures --help", c.Args().First())}
			}
			return cli.ShowSubcommandHelp(c)
		},
		Subcommands: []*cli.Command{{
			Name:      "load",
			Usage:     "drop and re-create a sample domain's tables and fill them with deterministic rows (COPY)",
			UsageText: "pg2dynamo fixtures load --domain customers|tickets|attendance|all --source URL [--scale 1] [--seed 1]",
			Description: `--source and --domain are required.

Domains: customers (customers, addresses), tickets (orgs, users, tickets),
attendance (students, lectures, attendance), or all. Scale 1 is about 3.5k,
22k and 33k rows; row counts grow linearly with --scale. The same --seed gives
the same rows on every run. Mappings for them are in fixtures/mappings/.`,
			Flags: []cli.Flag{
				// No DATABASE_URL or PG* fallback here: this drops tables.
				&cli.StringFlag{Name: "source", Usage: "PostgreSQL connection `URL` of the database to fill (required: its tables of these names are dropped)"},
				&cli.StringFlag{Name: "domain", Usage: "domain to load (required): " + strings.Join(fixtures.Domains(), ", ") + " or all",
					Action: valid("domain", func(d string) bool { return d == "all" || slices.Contains(fixtures.Domains(), d) },
						"expected one of "+strings.Join(fixtures.Domains(), ", ")+" or all")},
				&cli.Float64Flag{Name: "scale", Value: 1, Usage: "scale factor (row counts grow linearly)",
					Action: valid("scale", func(s float64) bool { return s > 0 && s <= fixtures.MaxScale }, fmt.Sprintf("expected more than 0 and at most %d", fixtures.MaxScale))},
				&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random seed"},
			},
			Action: func(c *cli.Context) error {
				if c.String("source") == "" || c.String("domain") == "" {
					return usageError{errors.New("--source and --domain are required: fixtures load drops and re-creates the domain's tables; see pg2dynamo fixtures load --help")}
				}
				domains := fixtures.Domains()
				if d := c.String("domain"); d != "all" {
					domains = []string{d}
				}
				src, err := extract.Connect(c.Context, c.String("source"))
				if err != nil {
					return err
				}
				defer src.Close(c.Context)
				for _, d := range domains {
					counts, err := fixtures.Load(c.Context, src.Conn(), d, c.Float64("scale"), c.Uint64("seed"))
					if err != nil {
						return err
					}
					tables, _ := fixtures.Tables(d)
					for _, t := range tables {
						fmt.Fprintf(c.App.Writer, "%s.%s: %d rows\n", d, t, counts[t])
					}
				}
				return nil
			},
		}},
	}
}
