package app

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
)

// Every option the engine names has its flag in flags, a flag some
// command defines; and flags words no option the engine does not name.
func TestEveryOptionHasItsFlag(t *testing.T) {
	defined := map[string]bool{}
	var walk func([]*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			for _, f := range c.Flags {
				for _, n := range f.Names() {
					defined[n] = true
				}
			}
			walk(c.Subcommands)
		}
	}
	walk(newApp(io.Discard, io.Discard).Commands)
	named := map[engine.Option]bool{}
	for _, o := range engine.Options {
		named[o] = true
		f, ok := flags[o]
		switch {
		case !ok:
			t.Errorf("engine.%s: no flag in flags", o)
		case !defined[f]:
			t.Errorf("engine.%s: flag --%s, which no command defines", o, f)
		}
	}
	for o := range flags {
		if !named[o] {
			t.Errorf("flags words %s, which engine.Options does not list", o)
		}
	}
}

// printSummary prints engine's summary of a load as the table users
// read: a row per entity and the total, the not-written column and its
// note only when the run stopped with rows unwritten, and the writers and
// requests lines when the summary has them.
func TestPrintSummary(t *testing.T) {
	sum := &pipeline.Summary{Entities: []pipeline.EntityStats{
		{Name: "Customer", Rows: 10, Written: 9, Items: 9, Rejected: 1, Elapsed: 1500 * time.Millisecond},
		{Name: "Order", Rows: 5, Written: 3, Items: 6, NotWritten: 2, Elapsed: 2 * time.Second},
	}, Elapsed: 2 * time.Second, Autoscale: &pipeline.AutoscaleSummary{Min: 2, Max: 24, Halvings: 1}}
	var b strings.Builder
	printSummary(&b, engine.Summary{Summary: sum, Requests: &load.Stats{Requests: 3, ConsumedWriteUnits: 15}})
	want := `    entity  rows read  rows written  rows rejected  not written  items written  elapsed
  Customer         10             9              1            0              9     1.5s
     Order          5             3              0            2              6       2s
     total         15            12              1            2             15       2s
the run stopped: 2 rows were read but not written; run again to write them
writers 2–24 (auto): 1 halving on throttling
3 BatchWriteItem/PutItem requests, 0 retried by the SDK (throttling, 5xx, network), 0 UnprocessedItems re-sends, 15 write units consumed
`
	if got := b.String(); got != want {
		t.Errorf("printSummary:\n%q\nwant:\n%q", got, want)
	}
}
