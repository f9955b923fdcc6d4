// Command pg2dynamo moves a normalized PostgreSQL database into a DynamoDB single-table design.
package main

import (
	"os"
	"runtime/debug"

	"github.com/pg2dynamo/pg2dynamo/app"
)

// GC pace unless GOGC or GOMEMLIMIT is set: a small live heap, much garbage (docs/performance.md).
const (
	gcPercent   = 400
	memoryLimit = 1 << 30
)

func main() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(gcPercent)
		debug.SetMemoryLimit(memoryLimit)
	}
	os.Exit(app.Run(os.Args[1:], os.Stdout, os.Stderr))
}
