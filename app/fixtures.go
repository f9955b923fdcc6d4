package app

import (
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
		Subcommands: []*cli.Command{{
			Name:      "load",
			Usage:     "drop and re-create a sample domain's tables and fill them with deterministic rows (COPY)",
			UsageText: "pg2dynamo fixtures load --domain tickets [--scale 1] [--seed 1] [--source URL]",
			Description: `Domains: customers (customers, addresses), tickets (orgs, users, tickets),
attendance (students, lectures, attendance), or all. Scale 1 is about 3.5k,
22k and 33k rows; row counts grow linearly with --scale. The same --seed gives
the same rows on every run. Mappings for them are in fixtures/mappings/.`,
			Flags: []cli.Flag{
				sourceFlag,
				&cli.StringFlag{Name: "domain", Value: "all", Usage: "domain to load: " + strings.Join(fixtures.Domains(), ", ") + " or all"},
				&cli.Float64Flag{Name: "scale", Value: 1, Usage: "scale factor (row counts grow linearly)"},
				&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random seed"},
			},
			Action: func(c *cli.Context) error {
				domains := fixtures.Domains()
				if d := c.String("domain"); d != "all" {
					if !slices.Contains(domains, d) {
						return usageError{fmt.Errorf("--domain %q: expected one of %s or all", d, strings.Join(domains, ", "))}
					}
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
