package app

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/report"
)

// flags names each engine.Option by its flag: the one place the engine's
// option fields meet the command line's words (engine.Config.Naming).
var flags = map[engine.Option]string{
	engine.OptMapping: "mapping", engine.OptSource: "source", engine.OptTable: "table",
	engine.OptEndpointURL: "endpoint-url", engine.OptSink: "sink", engine.OptCreateTable: "create-table",
	engine.OptMaxWriteUnits: "max-write-units", engine.OptMaxReadUnits: "max-read-units",
	engine.OptAllowOtherMapping: "allow-other-mapping",
	engine.OptAllowOtherItems:   "allow-other-items", engine.OptShard: "shard", engine.OptSnapshot: "snapshot",
	engine.OptRejects: "rejects", engine.OptCheckpoint: "checkpoint", engine.OptResume: "resume",
	engine.OptDryRun: "dry-run", engine.OptNoVerify: "no-verify", engine.OptPrune: "prune",
	engine.OptChangesOnly: "changes-only", engine.OptFollow: "follow", engine.OptSlot: "slot",
	engine.OptNoDDLCapture: "no-ddl-capture", engine.OptCatalogInterval: "catalog-interval",
	engine.OptAudit: "audit", engine.OptAuditCycle: "audit-cycle", engine.OptAuditFile: "audit-file",
	engine.OptPreviousMapping: "previous-mapping", engine.OptDropGSIs: "drop-gsis",
	engine.OptReportJSON: "report-json", engine.OptHTML: "html", engine.OptWithSource: "with-source",
	engine.OptTo: "to", engine.OptFrom: "from", engine.OptReportTo: "report-to", engine.OptTier: "tier",
	engine.OptPollInterval: "poll-interval", engine.OptFromDesign: "from-design", engine.OptDesignTable: "design-table",
	engine.OptDuplicateNames: "duplicate-names", engine.OptExclude: "exclude", engine.OptSchemas: "schema",
	engine.OptOut: "out", engine.OptForce: "force",
}

// flagName is o's flag, "--resume": the engine.Naming of every command.
func flagName(o engine.Option) string {
	if f, ok := flags[o]; ok {
		return "--" + f
	}
	return string(o)
}

// printSummary prints a load's summary (engine.Config.Summary): the
// per-entity table: rows read = rows written + rows
// rejected (+ not written, a column shown only when the run stopped with
// rows read but not written); items written counts items (two per row for
// an entity with a mirror).
func printSummary(w io.Writer, s engine.Summary) {
	total := s.Total()
	stopped := total.NotWritten > 0
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "entity\trows read\trows written\trows rejected\t"
	if stopped {
		head += "not written\t"
	}
	fmt.Fprintln(tw, head+"items written\telapsed\t")
	for _, e := range append(s.Entities, total) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t", e.Name, e.Rows, e.Written, e.Rejected)
		if stopped {
			fmt.Fprintf(tw, "%d\t", e.NotWritten)
		}
		fmt.Fprintf(tw, "%d\t%s\t\n", e.Items, e.Elapsed.Round(time.Millisecond))
	}
	tw.Flush()
	if stopped {
		fmt.Fprintf(w, "the run stopped: %d rows were read but not written; run again to write them\n", total.NotWritten)
	}
	if a := s.Autoscale; a != nil {
		undone := ""
		if a.Undone > 0 {
			undone = fmt.Sprintf(" (%d undone: the throttling went on as much with fewer writers)", a.Undone)
		}
		fmt.Fprintf(w, "writers %s (auto): %s on throttling%s\n", a.Writers(), report.Count(a.Halvings, "halving", "halvings"), undone)
	}
	if st := s.Requests; st != nil {
		fmt.Fprintf(w, "%d BatchWriteItem/PutItem requests, %d retried by the SDK (throttling, 5xx, network), %d UnprocessedItems re-sends, %.0f write units consumed\n",
			st.Requests, st.Retries, st.UnprocessedRetries, st.ConsumedWriteUnits)
	}
}
