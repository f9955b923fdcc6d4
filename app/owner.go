package app

import (
	"github.com/urfave/cli/v2"
)

// ownerFlags are migrate's flags that let a run write into a table that
// looks like someone else's.
func ownerFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "allow-other-mapping", Usage: "write into a table tagged for another mapping (pg2dynamo:mapping): refused otherwise, before anything is written"},
		&cli.BoolFlag{Name: "allow-other-items", Usage: "write into an untagged table whose items are none of the mapping's types: refused otherwise, before anything is written"},
	}
}
