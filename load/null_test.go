package load_test

import (
	"testing"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/tools/sinktest"
)

// The null sink passes the sink conformance suite: it keeps nothing to
// read back, refuses nothing and has no destination to fail.
func TestNullConformance(t *testing.T) {
	sinktest.Test(t, sinktest.Harness{
		Name:         "load.Null",
		PartitionKey: "PK", SortKey: "SK",
		New: func(*testing.T) sinktest.Target { return sinktest.Target{Sink: load.Null{}} },
	})
}
