// Command pg2dynamo moves a normalized PostgreSQL database into a DynamoDB
// single-table design. See README.md and `pg2dynamo --help`.
package main

import (
	"os"
	"runtime/debug"

	"github.com/pg2dynamo/pg2dynamo/app"
)

// GC defaults, unless GOGC or GOMEMLIMIT is set. pg2dynamo's live heap is
// small and steady (the batches in flight, ~10 MB) while rows stream
// through as garbage, so Go's default GOGC=100 collects every few
// megabytes: a quarter of a null-sink run's CPU. GOGC=400 collects a
// quarter as often for about 40 MB more RSS; the 1 GiB soft limit keeps a
// large live heap (a duplicate-check key set of tens of millions of items)
// from growing its garbage fivefold. See BENCHMARKS.md.
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
