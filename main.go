// Command pg2dynamo moves a normalized PostgreSQL database into a DynamoDB
// single-table design. See README.md and `pg2dynamo --help`.
package main

import (
	"os"

	"github.com/pg2dynamo/pg2dynamo/app"
)

func main() {
	os.Exit(app.Run(os.Args[1:], os.Stdout, os.Stderr))
}
