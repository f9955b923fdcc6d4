package plan

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Formats Render writes.
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
)

// Render writes d as text, markdown or json; it fails on an unknown format or a
// write error.
func Render(w io.Writer, d *Design, format string) error {
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(d)
	case FormatText, FormatMarkdown:
		return renderTables(w, d, format == FormatMarkdown)
	}
	return fmt.Errorf("unknown format %q: expected text, markdown or json", format)
}

// table is a titled grid of cells.
type table struct {
	head []string
	rows [][]string
}

// rejectsTable lists per entity its rows' rejection reasons.
func rejectsTable(stats []EntityStatsRow) table {
	rt := table{head: []string{"entity", "rows rejected", "reason", "first such row"}}
	for _, s := range stats {
		var listed int64
		for _, r := range s.Rejects {
			ex, _ := json.Marshal(r.Example)
			rt.rows = append(rt.rows, []string{s.Entity, fmt.Sprint(r.Rows), r.Reason, string(ex)})
			listed += r.Rows
		}
		if n := s.Rejected - listed; n > 0 {
			rt.rows = append(rt.rows, []string{s.Entity, fmt.Sprint(n), fmt.Sprintf("(other reasons, past the first %d)", MaxRejectReasons), ""})
		}
	}
	return rt
}

func renderTables(w io.Writer, d *Design, md bool) error {
	var b strings.Builder
	heading := func(s string) {
		if md {
			fmt.Fprintf(&b, "\n## %s\n\n", s)
		} else {
			title, note, _ := strings.Cut(s, " (")
			if note != "" {
				note = " (" + note
			}
			fmt.Fprintf(&b, "\n%s%s\n", strings.ToUpper(title), note)
		}
	}
	if md {
		fmt.Fprintf(&b, "# Table %s\n\n", d.Table)
	} else {
		fmt.Fprintf(&b, "TABLE %s\n", d.Table)
	}
	if d.SortKey == "" {
		fmt.Fprintf(&b, "%s, partition key %s (%s), no sort key\n", d.BillingMode, d.PartitionKey, d.PartitionKeyType)
	} else {
		fmt.Fprintf(&b, "%s, partition key %s (%s), sort key %s (%s)\n", d.BillingMode, d.PartitionKey, d.PartitionKeyType, d.SortKey, d.SortKeyType)
	}
	for _, n := range settingsNotes(d.Settings) {
		if md {
			fmt.Fprintf(&b, "- %s\n", n)
		} else {
			fmt.Fprintf(&b, "%s\n", n)
		}
	}
	if len(d.Indexes) > 0 {
		heading("Global secondary indexes")
		writeTable(&b, indexTable(d.Indexes), md)
	}

	heading("Entity chart")
	keys := d.KeyAttributes
	t := table{head: append(append([]string{"entity"}, keys...), "attributes")}
	for _, e := range d.Entities {
		row := []string{e.Entity}
		for _, k := range keys {
			row = append(row, e.Keys[k])
		}
		t.rows = append(t.rows, append(row, strings.Join(e.Attributes, "; ")))
	}
	writeTable(&b, t, md)

	if len(d.AccessPatterns) > 0 {
		heading("Access patterns")
		t := table{head: []string{"pattern", "index", "key condition", "order"}}
		for _, p := range d.AccessPatterns {
			kc := p.KeyCondition
			if p.Filter != "" {
				kc += " FILTER " + p.Filter
			}
			t.rows = append(t.rows, []string{p.Pattern, p.Index, kc, p.Order})
		}
		writeTable(&b, t, md)
	}

	if len(d.Stats) > 0 {
		heading("Full load from the source")
		t := table{head: []string{"entity", "rows", "items", "rejected", "avg item bytes", "max item bytes", "write units", "example key"}}
		var items, wcu int64
		for _, s := range d.Stats {
			t.rows = append(t.rows, []string{s.Entity, fmt.Sprint(s.Rows), fmt.Sprint(s.Items), fmt.Sprint(s.Rejected),
				fmt.Sprint(s.AvgItemBytes), fmt.Sprint(s.MaxItemBytes), fmt.Sprint(s.WriteUnits), strings.Join(s.ExampleKey, " | ")})
			items += s.Items
			wcu += s.WriteUnits
		}
		t.rows = append(t.rows, []string{"total", "", fmt.Sprint(items), "", "", "", fmt.Sprint(wcu), ""})
		writeTable(&b, t, md)
		if rt := rejectsTable(d.Stats); len(rt.rows) > 0 {
			heading("Rows a full load would reject")
			writeTable(&b, rt, md)
		}
		var exp int64
		for _, s := range d.Stats {
			exp += s.ExportBytes
		}
		fmt.Fprintf(&b, "\nThe full load's cost, us-east-1 prices (https://aws.amazon.com/dynamodb/pricing/on-demand/; diff takes others as flags):\n"+
			"- migrate (BatchWriteItem, on demand): %d write units at $%.3f per million: $%.4f\n"+
			"- export + import (ImportTable, a new table): %.3f GB of DynamoDB JSON at $%.2f per GB: $%.4f, no write units\n",
			wcu, transform.PricePerMillionWrites, float64(wcu)*transform.PricePerMillionWrites/1e6, float64(exp)/1e9, transform.ImportPricePerGB, float64(exp)/1e9*transform.ImportPricePerGB)
	}

	orderSection(&b, d, md, heading)
	heading("CreateTable request (aws dynamodb create-table --cli-input-json)")
	writeJSON(&b, d.CreateTable, md)
	if d.UpdateContinuousBackups != nil {
		heading("UpdateContinuousBackups request, once the table is ACTIVE (aws dynamodb update-continuous-backups --cli-input-json)")
		writeJSON(&b, d.UpdateContinuousBackups, md)
	}
	heading("CloudFormation resource")
	writeJSON(&b, d.CloudFormation, md)
	_, err := io.WriteString(w, strings.TrimPrefix(b.String(), "\n"))
	return err
}

// indexTable is the GSI table: name, keys (multi-attribute ones typed),
// projection, and throughput when any index has some.
func indexTable(ixs []IndexRow) table {
	t := table{head: []string{"index", "partition key", "sort key", "projection"}}
	withSettings := false
	for _, ix := range ixs {
		withSettings = withSettings || len(throughputNotes(ix.Throughput)) > 0
	}
	if withSettings {
		t.head = append(t.head, "settings")
	}
	for _, ix := range ixs {
		row := []string{ix.Name, keysText(typedKey(ix.PartitionKey, ix.PartitionKeyType), ix.PartitionKeys), keysText(typedKey(ix.SortKey, ix.SortKeyType), ix.SortKeys), ix.Projection}
		if withSettings {
			row = append(row, strings.Join(throughputNotes(ix.Throughput), "; "))
		}
		t.rows = append(t.rows, row)
	}
	return t
}

// typedKey names a GSI key attribute as the index table does: alone for a
// string, "score (N)" otherwise.
func typedKey(attr, typ string) string {
	if attr == "" || typ == "" || typ == mapping.TypeString {
		return attr
	}
	return attr + " (" + typ + ")"
}

func writeTable(b *strings.Builder, t table, md bool) {
	if md {
		esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
		fmt.Fprintf(b, "| %s |\n", strings.Join(t.head, " | "))
		fmt.Fprintf(b, "|%s\n", strings.Repeat("---|", len(t.head)))
		for _, r := range t.rows {
			cells := make([]string, len(r))
			for i, c := range r {
				cells[i] = esc(c)
			}
			fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
		}
		return
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.head, "\t"))
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

func writeJSON(b *strings.Builder, v any, md bool) {
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err) // maps of JSON values always marshal
	}
	if md {
		fmt.Fprintf(b, "```json\n%s\n```\n", out)
	} else {
		fmt.Fprintf(b, "%s\n", out)
	}
}

// orderSection writes d's OrderWarnings, with the source's findings when d has
// statistics.
func orderSection(b *strings.Builder, d *Design, md bool, heading func(string)) {
	if len(d.OrderWarnings) == 0 {
		return
	}
	heading("Key order (numbers written as plain digits)")
	for _, l := range orderLines(d.OrderWarnings, d.Stats != nil) {
		if md && !strings.HasPrefix(l, "  ") {
			l = "- " + l
		}
		fmt.Fprintln(b, l)
	}
}
