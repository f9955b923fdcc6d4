package app

import (
	"github.com/urfave/cli/v2"
)

// ExitUnbound is init --from-design's exit code when the draft is written
// but leaves parts of the design unbound (listed on stderr and in the
// draft): resolve them and run init again.
const ExitUnbound = 5

// fromDesignFlags are init's flags of --from-design.
func fromDesignFlags() []cli.Flag {
	return []cli.Flag{
		&cli.PathFlag{Name: "from-design", TakesFile: true, Usage: "bind the single-table design in `FILE`, a schema.json of the DynamoDB MCP server, to the source instead of drafting one from the schema"},
		&cli.StringFlag{Name: "design-table", Usage: "the design's table `NAME` to draft (one mapping per table; required when the design has several)"},
	}
}
