package engine_test

import (
	"context"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/export"
	"github.com/pg2dynamo/pg2dynamo/metrics"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/tools/faultproxy"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// A migration with Config.Metrics, through a recording proxy: rows read
// (19 written + 1 rejected), items written (what the proxy saw put),
// rejects, writers, and the sink's requests and write units (what the
// summary gives) reach the metrics.
func TestMigrateFeedsMetrics(t *testing.T) {
	ctx := context.Background()
	f := notes(t)
	url, log, out := f.url, f.log, f.out
	rec := testenv.NewWriteRecorder(t, f.cfg.AWS.EndpointURL, "PK", "SK")
	r := metrics.New(metrics.Options{})
	cfg := f.cfg
	cfg.AWS.EndpointURL, cfg.Metrics = rec.URL, r
	o := f.options()
	o.Concurrency, o.NoVerify = 3, true
	err := engine.Migrate(ctx, cfg, o)
	if kind, _ := engine.KindOf(err); kind != engine.KindRejected {
		t.Fatalf("Migrate: %v, want KindRejected\n%s%s", err, log.String(), out.String())
	}
	st := f.summaries.last(t).Requests
	if st == nil {
		t.Fatalf("no requests in the summary of a load into DynamoDB:\n%s", out.String())
	}
	requests, units := float64(st.Requests), st.ConsumedWriteUnits
	fams, err := r.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, s := range f.Metric {
			got[f.GetName()] += s.GetCounter().GetValue() + s.GetGauge().GetValue()
		}
	}
	for name, want := range map[string]float64{
		"pg2dynamo_rows_read_total": 20, "pg2dynamo_items_written_total": float64(len(rec.Puts())),
		"pg2dynamo_items_deleted_total": 0, "pg2dynamo_rejects_total": 1, "pg2dynamo_writers": 3,
		"pg2dynamo_write_requests_total": requests, "pg2dynamo_write_units_total": units,
		"pg2dynamo_throttled_requests_total": 0, "pg2dynamo_retries_total": 0,
	} {
		if got[name] != want {
			t.Errorf("%s = %v, want %v", name, got[name], want)
		}
	}
	if len(rec.Puts()) != 19 || units < 19 {
		t.Errorf("the proxy saw %d puts and the summary %v write units; want 19 and at least 19", len(rec.Puts()), units)
	}

	// --changes-only: a row changed, one added, one deleted, and the
	// rejected row fixed: the puts and the conditional delete reach the
	// metrics, per entity, as the proxy saw them.
	testenv.Exec(t, url, `UPDATE notes SET body = 'changed' WHERE note_id = 1; INSERT INTO notes VALUES (21, 'o0', 'new');
		DELETE FROM notes WHERE note_id = 2; UPDATE notes SET owner = 'o1' WHERE note_id = 7`)
	rec.Reset()
	cfg.Metrics = metrics.New(metrics.Options{})
	o = f.options()
	o.Concurrency, o.CreateTable, o.ChangesOnly, o.NoVerify = 3, false, true, true
	if err := engine.Migrate(ctx, cfg, o); err != nil {
		t.Fatalf("Migrate --changes-only: %v\n%s%s", err, log.String(), out.String())
	}
	if puts, deletes := len(rec.Puts()), len(rec.Deletes()); puts != 3 || deletes != 1 {
		t.Errorf("--changes-only: the proxy saw %d puts and %d deletes, want 3 and 1", puts, deletes)
	}
	fams, err = cfg.Metrics.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	written, deleted := 0.0, 0.0
	for _, f := range fams {
		for _, s := range f.Metric {
			switch f.GetName() {
			case "pg2dynamo_items_written_total":
				written += s.GetCounter().GetValue()
				if v := s.GetCounter().GetValue(); v > 0 && s.Label[0].GetValue() != "Note" {
					t.Errorf("--changes-only: %v items written under entity %q, want Note", v, s.Label[0].GetValue())
				}
			case "pg2dynamo_items_deleted_total":
				deleted += s.GetCounter().GetValue()
			}
		}
	}
	if written != float64(len(rec.Puts())) || deleted != float64(len(rec.Deletes())) {
		t.Errorf("--changes-only: items written %v and deleted %v, the proxy saw %d and %d", written, deleted, len(rec.Puts()), len(rec.Deletes()))
	}
}

// An export with Config.Metrics: rows read (19 exported + 1 rejected),
// items written to its objects (what the summary says) and the reject.
func TestExportFeedsMetrics(t *testing.T) {
	ctx := context.Background()
	f := notes(t)
	log, out := f.log, f.out
	r := metrics.New(metrics.Options{})
	cfg := f.cfg
	cfg.Metrics = r
	err := engine.Export(ctx, cfg, engine.ExportOptions{
		LoadOptions: engine.LoadOptions{Readers: 1, Rejects: f.path("rejects.jsonl")},
		To:          export.Location{Dir: f.path("out")}, Compression: export.NONE, Objects: 2, ObjectSize: 1 << 20,
	})
	if kind, _ := engine.KindOf(err); kind != engine.KindRejected {
		t.Fatalf("Export: %v, want KindRejected\n%s%s", err, log.String(), out.String())
	}
	total := f.summaries.last(t).Total()
	fams, err := r.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, s := range f.Metric {
			got[f.GetName()] += s.GetCounter().GetValue() + s.GetGauge().GetValue()
		}
	}
	read, items := float64(total.Rows), float64(total.Items)
	for name, want := range map[string]float64{"pg2dynamo_rows_read_total": read, "pg2dynamo_items_written_total": items, "pg2dynamo_rejects_total": 1} {
		if got[name] != want {
			t.Errorf("%s = %v, want %v (the summary's)", name, got[name], want)
		}
	}
	if read != 20 || items != 19 {
		t.Errorf("the summary: %v rows read, %v items written; want 20 and 19", read, items)
	}
}

// A verify with Config.Metrics, without a cap on the reads and with one, and a
// migrate --changes-only, which reads its writes back, each through a proxy
// that sums the read units DynamoDB reports for each Scan, Query and
// BatchGetItem: pg2dynamo_read_units_total is that sum.
func TestCompareFeedsReadUnits(t *testing.T) {
	f := notes(t)
	o := f.options()
	o.NoVerify = true
	if kind, _ := engine.KindOf(engine.Migrate(context.Background(), f.cfg, o)); kind != engine.KindRejected {
		t.Fatalf("Migrate: want KindRejected (note 7)\n%s", f.log.String())
	}
	for _, run := range []struct {
		name string
		cap  int
		read string // the operation besides the Scan that reads
	}{{"verify", 0, ""}, {"verify", 1000, ""}, {"changes-only", 0, "BatchGetItem"}} {
		proxy, err := faultproxy.Start(f.cfg.AWS.EndpointURL, faultproxy.Rates{}, 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(proxy.Close)
		r := metrics.New(metrics.Options{})
		cfg := f.cfg
		cfg.AWS.EndpointURL, cfg.Metrics = proxy.URL, r
		ro := engine.ReportOptions{Segments: 2, Sample: 5, MaxReadUnits: run.cap}
		if run.name == "verify" {
			err = engine.Compare(context.Background(), cfg, engine.CompareOptions{Mode: report.ModeVerify, ReportOptions: ro})
		} else {
			f.exec(`UPDATE notes SET body = 'changed' WHERE note_id < 5`)
			co := f.options()
			co.ChangesOnly, co.ReportOptions = true, ro
			err = engine.Migrate(context.Background(), cfg, co)
		}
		if kind, _ := engine.KindOf(err); err != nil && kind != engine.KindRejected {
			t.Fatalf("%s: %v\n%s", run.name, err, f.log.String())
		}
		fams, err := r.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := 0.0
		for _, fam := range fams {
			if fam.GetName() == "pg2dynamo_read_units_total" {
				for _, m := range fam.Metric {
					got += m.GetCounter().GetValue()
				}
			}
		}
		units, reported := proxy.ReadUnits()
		counts := proxy.Counts()
		asked := reported["Scan"] == counts["op:Scan"] && reported["Query"] == counts["op:Query"] && reported["BatchGetItem"] == counts["op:BatchGetItem"]
		if !asked || units <= 0 || got != units || (run.read != "" && reported[run.read] == 0) {
			t.Errorf("%s, cap %d: pg2dynamo_read_units_total = %v; the proxy saw %v units reported by %v of the answers %v", run.name, run.cap, got, units, reported, counts)
		}
	}
}
