package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/export"
	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/plan"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/tools/faultproxy"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// shopSQL and shopMapping are the source of most single-purpose engine
// tests: ten customers, each with a name and a tier.
const shopSQL = `CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, tier text NOT NULL);
INSERT INTO customers SELECT i, 'c' || i, CASE WHEN i % 2 = 0 THEN 'gold' ELSE 'blue' END FROM generate_series(1, 10) i;`

const shopMapping = `name: shop
table: {name: shop}
entities:
  Customer:
    source: {table: customers}
    pk: C#${id}
    sk: PROFILE
`

// shop is a fixture of shopSQL and shopMapping.
func shop(t *testing.T) *fixture { return newFixture(t, shopSQL, shopMapping) }

// loaded is shop, migrated (its check passed).
func loaded(t *testing.T) *fixture {
	t.Helper()
	f := shop(t)
	f.want("Migrate", f.migrate(f.options()), "ok", "")
	return f
}

func containsLine(text, part string) bool { return strings.Contains(text, part) }

// The null sink reads and converts every row and writes nothing: no
// table is created, and the summary counts the ten rows.
func TestMigrateNullSinkWritesNothing(t *testing.T) {
	t.Parallel()
	f := shop(t)
	o := f.options()
	o.Sink = "null"
	f.want("Migrate --sink null", f.migrate(o), "ok", "")
	if f.tableExists() {
		t.Error("the null sink created the table")
	}
	if sum := f.summaries.last(t); sum.Total().Rows != 10 || sum.Requests != nil || !strings.Contains(f.log.String(), "null sink") {
		t.Errorf("the null sink's run: summary %+v, want 10 rows and no DynamoDB requests\n%s", sum.Total(), f.log)
	}
}

// Without CreateTable, a table that does not exist is refused before a
// row is read, and none is created.
func TestMigrateWithoutTableRefused(t *testing.T) {
	t.Parallel()
	f := shop(t)
	o := f.options()
	o.CreateTable = false
	f.want("Migrate without the table", f.migrate(o), "refused", f.cfg.Table)
	if f.tableExists() {
		t.Error("the table was created")
	}
}

// A rejects file that cannot be created refuses the run before the table
// is created.
func TestMigrateUnwritableRejectsRefused(t *testing.T) {
	t.Parallel()
	f := shop(t)
	o := f.options()
	o.Rejects = filepath.Join(f.dir, "missing", "rejects.jsonl")
	f.want("Migrate", f.migrate(o), "refused", "rejects file")
	if f.tableExists() {
		t.Error("the table was created")
	}
}

// Resume without a checkpoint file is refused, nothing created.
func TestResumeWithoutCheckpointRefused(t *testing.T) {
	t.Parallel()
	f := shop(t)
	o := f.options()
	o.Resume = true
	f.want("Migrate --resume", f.migrate(o), "refused", "")
	if f.tableExists() {
		t.Error("the table was created")
	}
}

// A checkpoint is for one mapping file: resuming with another mapping is
// refused and writes nothing.
func TestResumeRefusesAnotherMapping(t *testing.T) {
	t.Parallel()
	f := loaded(t)
	testenv.WriteFile(t, f.cfg.Mapping, strings.Replace(shopMapping, "sk: PROFILE", "sk: P", 1), 0o600)
	before := f.items()
	o := f.options()
	o.Resume = true
	f.want("Migrate --resume with another mapping", f.migrate(o), "refused", "run without Resume to start over")
	if d := cmp.Diff(before, f.items()); d != "" {
		t.Errorf("the refused run wrote (-before +after):\n%s", d)
	}
}

// A resumed run must write into the table its checkpoint was written
// for: one deleted and created again lacks what the checkpoint records
// as loaded, and is refused.
func TestResumeRefusesTableCreatedAgain(t *testing.T) {
	t.Parallel()
	f := loaded(t)
	if _, err := f.client.DeleteTable(context.Background(), deleteTable(f.cfg.Table)); err != nil {
		t.Fatal(err)
	}
	o := f.options()
	o.Resume = true
	f.want("Migrate --resume into a new table", f.migrate(o), "refused", "is not the one checkpoint")
	if n := len(f.items()); n != 0 {
		t.Errorf("the refused run wrote %d items", n)
	}
}

// A finished run resumed reads nothing again: its checkpoint records
// every entity done, and the check still compares all ten items.
func TestResumeOfFinishedRunReadsNothing(t *testing.T) {
	t.Parallel()
	f := loaded(t)
	rec := testenv.NewWriteRecorder(t, f.cfg.AWS.EndpointURL, "PK", "SK")
	f.cfg.AWS.EndpointURL = rec.URL
	o := f.options()
	o.Resume = true
	f.out.Reset()
	f.want("Migrate --resume", f.migrate(o), "ok", "")
	if n := len(rec.Puts()); n != 0 {
		t.Errorf("the resumed run put %d items, want none", n)
	}
	if !strings.Contains(f.out.String(), "verify PASSED") {
		t.Errorf("no passed check:\n%s", f.out)
	}
}

// A dry run writes nothing and reports what a run would change, as diff.
func TestDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	f := loaded(t)
	f.exec(`UPDATE customers SET name = 'renamed' WHERE id = 1; INSERT INTO customers VALUES (11, 'c11', 'blue')`)
	before := f.items()
	rec := testenv.NewWriteRecorder(t, f.cfg.AWS.EndpointURL, "PK", "SK")
	f.cfg.AWS.EndpointURL = rec.URL
	o := f.options()
	o.DryRun = true
	o.JSON = f.path("dry-run.json")
	f.want("Migrate --dry-run", f.migrate(o), "ok", "")
	if ops := rec.Operations(); ops["BatchWriteItem"]+ops["PutItem"]+ops["DeleteItem"] != 0 {
		t.Errorf("the dry run wrote: %v", ops)
	}
	if d := cmp.Diff(before, f.items()); d != "" {
		t.Errorf("the table changed (-before +after):\n%s", d)
	}
	if s := readReport(t, o.JSON).Summary; s.New != 1 || s.Changed != 1 || s.Stale != 0 {
		t.Errorf("dry run's report: %+v, want 1 new and 1 changed", s)
	}
}

// --changes-only puts exactly the new and changed items and deletes the
// stale one; the table is then what a fresh load would write.
func TestChangesOnlyWritesTheDifferences(t *testing.T) {
	t.Parallel()
	f := loaded(t)
	f.exec(`UPDATE customers SET name = 'renamed' WHERE id = 1; INSERT INTO customers VALUES (11, 'c11', 'blue');
		DELETE FROM customers WHERE id = 2`)
	rec := testenv.NewWriteRecorder(t, f.cfg.AWS.EndpointURL, "PK", "SK")
	f.cfg.AWS.EndpointURL = rec.URL
	o := f.options()
	o.ChangesOnly = true
	f.want("Migrate --changes-only", f.migrate(o), "ok", "")
	want := []string{"C#0000000001 PROFILE", "C#0000000011 PROFILE"}
	if d := cmp.Diff(want, rec.Puts()); d != "" {
		t.Errorf("puts (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"C#0000000002 PROFILE"}, rec.Deletes()); d != "" {
		t.Errorf("deletes (-want +got):\n%s", d)
	}
	f.wantFreshLoad()
}

// wantFreshLoad fails the test unless the table holds exactly what a
// fresh load of the source writes into an empty table.
func (f *fixture) wantFreshLoad() {
	f.t.Helper()
	fresh := fixtureOn(f.t, f.url, testenv.ReadFile(f.t, f.cfg.Mapping))
	o := fresh.options()
	o.NoVerify = true
	fresh.want("a fresh load", fresh.migrate(o), "ok", "")
	if d := cmp.Diff(fresh.items(), f.items()); d != "" {
		f.t.Errorf("the table is not what a fresh load writes (-fresh +table):\n%s", d)
	}
}

// --prune deletes the items of the mapping's types that no row derives
// any more, and keeps the items of other types (another writer's).
func TestPruneDeletesOnlyStaleItems(t *testing.T) {
	t.Parallel()
	f := loaded(t)
	f.put("PK", "C#0000000099", "SK", "PROFILE", "type", "Customer")
	f.put("PK", "X#1", "SK", "X", "type", "Other")
	f.exec(`DELETE FROM customers WHERE id = 3`)
	o := f.options()
	o.Prune = true
	f.want("Migrate --prune", f.migrate(o), "ok", "")
	keys := f.keys()
	for _, gone := range []string{"C#0000000099 PROFILE", "C#0000000003 PROFILE"} {
		if slices.Contains(keys, gone) {
			t.Errorf("stale item %s not pruned", gone)
		}
	}
	if !slices.Contains(keys, "X#1 X") || len(keys) != 10 {
		t.Errorf("table after --prune: %v; want the 9 customers and the Other item", keys)
	}
}

// diff counts exactly what a run would change, new, changed and stale,
// and writes nothing; verify of the same table fails (KindMismatch).
func TestCompareCountsDifferences(t *testing.T) {
	t.Parallel()
	f := loaded(t)
	f.exec(`UPDATE customers SET tier = 'gold' WHERE id IN (1, 3); INSERT INTO customers VALUES (11, 'c11', 'blue');
		DELETE FROM customers WHERE id = 10`)
	before := f.items()
	out, r := f.compare(report.ModeDiff)
	f.want("Compare diff", out, "ok", "")
	want := report.Summary{New: 1, Changed: 2, Stale: 1, Unchanged: 7}
	if r == nil || r.OK || r.Summary != want {
		t.Fatalf("diff's report: %+v, want %+v and not OK", r, want)
	}
	if r.Cost == nil || r.Cost.Items != 10 {
		t.Errorf("diff's cost: %+v, want a full run of 10 items", r.Cost)
	}
	out, r = f.compare(report.ModeVerify)
	f.want("Compare verify", out, "mismatch", "")
	if r == nil || r.Summary != want {
		t.Errorf("verify's report: %+v, want %+v", r, want)
	}
	if d := cmp.Diff(before, f.items()); d != "" {
		t.Errorf("Compare wrote (-before +after):\n%s", d)
	}
}

// verify passes on a table that matches, and counts an item of no mapped
// type as other, which does not fail it.
func TestVerifyPassesAndCountsOthers(t *testing.T) {
	t.Parallel()
	f := loaded(t)
	f.put("PK", "X#1", "SK", "X", "type", "Other")
	out, r := f.compare(report.ModeVerify)
	f.want("Compare verify", out, "ok", "")
	if want := (report.Summary{Unchanged: 10, Other: 1}); r == nil || !r.OK || r.Summary != want {
		t.Errorf("verify's report: %+v, want %+v and OK", r, want)
	}
}

// verify runs the mapping's access patterns as real Queries, each
// answered with the items the source derives for its parameters.
func TestVerifyRunsAccessPatterns(t *testing.T) {
	t.Parallel()
	f := newFixture(t, shopSQL, shopMapping+`access_patterns:
  CustomerProfile: {key_condition: "PK = C#${id} AND SK = PROFILE"}
`)
	out, r := f.compare(report.ModeVerify)
	f.want("Compare before the load", out, "mismatch", "")
	if r == nil || r.Summary.New != 10 {
		t.Fatalf("verify of an empty table: %+v, want 10 new", r)
	}
	f.want("Migrate", f.migrate(f.options()), "ok", "")
	out, r = f.compare(report.ModeVerify)
	f.want("Compare", out, "ok", "")
	if r == nil || len(r.Patterns) == 0 {
		t.Fatalf("verify ran no access pattern: %+v", r)
	}
	for _, p := range r.Patterns {
		if !p.OK || p.NotRun || p.Got != 1 || p.Want != 1 {
			t.Errorf("pattern %s %v: got %d items, want %d (ok %v, not run %v)", p.Pattern, p.Params, p.Got, p.Want, p.OK, p.NotRun)
		}
	}
}

// A table whose key attributes are not the mapping's is refused by
// Compare, as a migration would refuse it.
func TestCompareRefusesTableOfOtherKeys(t *testing.T) {
	t.Parallel()
	f := loaded(t)
	other := fixtureOn(t, f.url, strings.Replace(shopMapping, "table: {name: shop}", "table: {name: shop, partition_key: pk, sort_key: sk}", 1))
	other.cfg.Table = f.cfg.Table
	out, _ := other.compare(report.ModeVerify)
	other.want("Compare", out, "refused", f.cfg.Table)
}

// AllowOtherMapping lets a run write into a table tagged for another
// mapping.
func TestAllowOtherMappingWrites(t *testing.T) {
	t.Parallel()
	f := loaded(t)
	other := fixtureOn(t, f.url, strings.NewReplacer("name: shop\n", "name: other\n", "Customer:", "Client:", "sk: PROFILE", "sk: CLIENT").Replace(shopMapping))
	other.cfg.Table = f.cfg.Table
	o := other.options()
	o.AllowOtherMapping, o.NoVerify = true, true
	other.want("Migrate with AllowOtherMapping", other.migrate(o), "ok", "")
	if n := len(f.keys()); n != 20 {
		t.Errorf("%d items, want the 10 of each mapping", n)
	}
}

// The JSON and HTML reports of the check after a load are written, the
// JSON one OK with every item compared.
func TestMigrateWritesReportFiles(t *testing.T) {
	t.Parallel()
	f := shop(t)
	o := f.options()
	o.JSON, o.HTML = f.path("r.json"), f.path("r.html")
	f.want("Migrate", f.migrate(o), "ok", "")
	if r := readReport(t, o.JSON); !r.OK || r.Summary.Unchanged != 10 {
		t.Errorf("report: OK %v, %+v; want OK and 10 unchanged", r.OK, r.Summary)
	}
	if html := testenv.ReadFile(t, o.HTML); !strings.Contains(html, "<html") {
		t.Errorf("the HTML report is not a page: %.200s", html)
	}
}

// --concurrency auto writes every item.
func TestMigrateAutoWriters(t *testing.T) {
	t.Parallel()
	f := shop(t)
	o := f.options()
	o.Auto = &pipeline.Autoscale{Max: 4}
	f.want("Migrate --concurrency auto", f.migrate(o), "ok", "")
	if n := len(f.keys()); n != 10 {
		t.Errorf("%d items, want 10", n)
	}
}

// Shards reading one held snapshot load every row exactly once between
// them, and a row inserted after the snapshot is in none.
func TestShardsShareHeldSnapshot(t *testing.T) {
	t.Parallel()
	f := shop(t)
	ctx, cancel := context.WithCancel(context.Background())
	names, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- engine.HoldSnapshot(ctx, f.cfg, func(name, _ string) { names <- name })
	}()
	var snapshot string
	select {
	case snapshot = <-names:
	case err := <-done:
		t.Fatalf("HoldSnapshot: %v", err)
	}
	f.exec(`INSERT INTO customers VALUES (11, 'late', 'blue')`)
	for i := 1; i <= 3; i++ {
		o := f.options()
		o.Shard, o.Snapshot = pipeline.Shard{Index: i, Count: 3}, snapshot
		o.Checkpoint, o.Rejects = f.path(fmt.Sprintf("cp%d.json", i)), f.path(fmt.Sprintf("rejects%d.jsonl", i))
		f.want(fmt.Sprintf("shard %d/3", i), f.migrate(o), "ok", "")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("HoldSnapshot ended with %v", err)
	}
	keys := f.keys()
	if len(keys) != 10 || slices.Contains(keys, "C#0000000011 PROFILE") {
		t.Errorf("the shards loaded %v, want the 10 rows of the snapshot", keys)
	}
}

// Export writes every item, as DynamoDB JSON lines, into objects and a
// manifest that counts them; a second export into the same destination
// is refused.
func TestExportWritesEveryItem(t *testing.T) {
	t.Parallel()
	f := shop(t)
	o := engine.ExportOptions{LoadOptions: engine.LoadOptions{Readers: 1, Rejects: f.path("rejects.jsonl")},
		To: export.Location{Dir: f.path("out")}, Compression: export.NONE, Objects: 2, ObjectSize: 1 << 20}
	f.want("Export", outcomeOf(engine.Export(context.Background(), f.cfg, o)), "ok", "")
	lines := exportedLines(t, o.To.Dir)
	if len(lines) != 10 || !strings.HasPrefix(lines[0], `{"Item":{`) {
		t.Errorf("export objects hold %d lines (first %.80q), want the 10 items as DynamoDB JSON", len(lines), first(lines))
	}
	var man export.Manifest
	if err := json.Unmarshal([]byte(testenv.ReadFile(t, filepath.Join(o.To.Dir, export.ManifestKey))), &man); err != nil {
		t.Fatal(err)
	}
	if man.Items != 10 || man.Rejected != 0 || len(man.Objects) == 0 {
		t.Errorf("manifest: %d items, %d rejected, %d objects; want 10, 0 and some", man.Items, man.Rejected, len(man.Objects))
	}
	f.want("Export again", outcomeOf(engine.Export(context.Background(), f.cfg, o)), "refused", "")
}

// exportedLines is every line of the data objects under dir (an
// uncompressed export), read as files, not through the export's manifest.
func exportedLines(t *testing.T, dir string) []string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") || strings.Contains(filepath.Base(path), "manifest") {
			return err
		}
		for _, line := range strings.Split(strings.TrimSpace(testenv.ReadFile(t, path)), "\n") {
			if line != "" {
				lines = append(lines, line)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

func first(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[0]
}

// An export split into shards that read one held snapshot: each shard
// writes its own manifest beside the others' objects, and between them
// they hold every row of the snapshot once; a row inserted after it is
// in none.
func TestExportShardsShareHeldSnapshot(t *testing.T) {
	t.Parallel()
	f := shop(t)
	ctx, cancel := context.WithCancel(context.Background())
	names, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- engine.HoldSnapshot(ctx, f.cfg, func(name, _ string) { names <- name })
	}()
	var snapshot string
	select {
	case snapshot = <-names:
	case err := <-done:
		t.Fatalf("HoldSnapshot: %v", err)
	}
	f.exec(`INSERT INTO customers VALUES (11, 'late', 'blue')`)
	dir := f.path("out")
	var items, objects int64
	for i := 1; i <= 2; i++ {
		o := engine.ExportOptions{LoadOptions: engine.LoadOptions{Readers: 1, Rejects: f.path(fmt.Sprintf("rejects%d.jsonl", i)),
			Shard: pipeline.Shard{Index: i, Count: 2}, Snapshot: snapshot},
			To: export.Location{Dir: dir}, Compression: export.NONE, Objects: 1, ObjectSize: 1 << 20}
		f.want(fmt.Sprintf("Export shard %d/2", i), outcomeOf(engine.Export(context.Background(), f.cfg, o)), "ok", "")
		var man export.Manifest
		path := filepath.Join(dir, "manifest-"+export.ShardTag(i, 2)+".json")
		if err := json.Unmarshal([]byte(testenv.ReadFile(t, path)), &man); err != nil {
			t.Fatal(err)
		}
		if man.Snapshot != snapshot || man.Shard == "" {
			t.Errorf("shard %d's manifest: snapshot %q, shard %q; want %q and its shard", i, man.Snapshot, man.Shard, snapshot)
		}
		items += man.Items
		objects += int64(len(man.Objects))
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("HoldSnapshot ended with %v", err)
	}
	if lines := exportedLines(t, dir); items != 10 || objects == 0 || len(lines) != 10 {
		t.Errorf("the shards' manifests count %d items in %d objects, and their objects hold %d lines; want the 10 rows of the snapshot", items, objects, len(lines))
	}
}

// Plan with the source reads every row through the transformation and
// estimates each entity's items; it creates no table.
func TestPlanWithSourceEstimates(t *testing.T) {
	t.Parallel()
	f := newFixture(t, shopSQL+"ALTER TABLE customers ALTER name DROP NOT NULL; UPDATE customers SET name = NULL WHERE id = 4;",
		strings.Replace(shopMapping, "pk: C#${id}", "pk: C#${name}", 1))
	err := engine.Plan(context.Background(), f.cfg, engine.PlanOptions{Format: plan.FormatJSON, WithSource: true})
	f.want("Plan", outcomeOf(err), "ok", "")
	var design struct{ Stats []plan.EntityStatsRow }
	if err := json.Unmarshal([]byte(f.out.String()), &design); err != nil {
		t.Fatalf("plan's JSON: %v\n%s", err, f.out)
	}
	if len(design.Stats) != 1 || design.Stats[0].Rows != 10 || design.Stats[0].Items != 9 || design.Stats[0].Rejected != 1 {
		t.Errorf("plan's estimates: %+v, want 10 rows, 9 items, 1 rejected (the NULL name)", design.Stats)
	}
	if f.tableExists() {
		t.Error("plan created the table")
	}
}

// A mapping that does not parse is refused by every operation that
// reads it, before the source is read.
func TestInvalidMappingRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, shopSQL, "name: shop\ntable: {name: shop}\nentities:\n  Customer: {source: {table: customers}, pk: 'C#${id'}\n")
	ctx := context.Background()
	for name, err := range map[string]error{
		"Migrate": engine.Migrate(ctx, f.cfg, f.options()),
		"Plan":    engine.Plan(ctx, f.cfg, engine.PlanOptions{}),
		"Compare": engine.Compare(ctx, f.cfg, engine.CompareOptions{Mode: report.ModeVerify, ReportOptions: engine.ReportOptions{Segments: 1, Sample: 1}}),
	} {
		f.want(name, outcomeOf(err), "refused", "entities.Customer")
	}
	if f.tableExists() {
		t.Error("the table was created")
	}
}

// A mapping naming a table the source lacks is refused by Open, which
// checks it against the source.
func TestOpenRefusesMissingSourceTable(t *testing.T) {
	t.Parallel()
	f := newFixture(t, shopSQL, strings.Replace(shopMapping, "{table: customers}", "{table: clients}", 1))
	_, err := engine.Open(context.Background(), f.cfg)
	f.want("Open", outcomeOf(err), "refused", "clients")
}

// A mapping file that cannot be read is refused, naming it.
func TestLoadMappingUnreadableRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "none.yaml")
	_, err := engine.LoadMapping(context.Background(), path)
	if k, _ := engine.KindOf(err); k != engine.KindRefused || !strings.Contains(fmt.Sprint(err), path) {
		t.Errorf("LoadMapping of a missing file: %v (kind %v), want refused naming it", err, k)
	}
}

// LoadMapping returns the context's cause as soon as it is done, even
// while the file blocks (a FIFO no one writes).
func TestLoadMappingReturnsWhenCancelled(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "mapping.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	t.Cleanup(func() { // unblock the reader left in the background
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	cause := errors.New("stopped by the test")
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := engine.LoadMapping(ctx, fifo)
		done <- err
	}()
	cancel(cause)
	select {
	case err := <-done:
		if !errors.Is(err, cause) {
			t.Errorf("LoadMapping: %v, want the context's cause", err)
		}
	case <-time.After(time.Minute): // a bound on a hang
		t.Fatal("LoadMapping did not return when its context was cancelled")
	}
}

// KindOf reads the kind through wrapping, a mapping's own error is
// KindRefused, and an error of no kind is KindFailed.
func TestKindOf(t *testing.T) {
	t.Parallel()
	wrapped := fmt.Errorf("context: %w", &engine.Error{Kind: engine.KindMismatch, Err: errors.New("differs")})
	if k, ok := engine.KindOf(wrapped); k != engine.KindMismatch || !ok {
		t.Errorf("KindOf(wrapped mismatch) = %v, %v", k, ok)
	}
	_, bad := mapping.Parse("m.yaml", []byte("table: {name: t}\nentities:\n  E: {source: {table: e}, pk: 'P#${id'}\n"))
	if bad == nil {
		t.Fatal("a mapping with an unclosed placeholder parsed")
	}
	if k, ok := engine.KindOf(fmt.Errorf("loading: %w", bad)); k != engine.KindRefused || !ok {
		t.Errorf("KindOf(a mapping error) = %v, %v; want KindRefused, true", k, ok)
	}
	if k, ok := engine.KindOf(errors.New("plain")); k != engine.KindFailed || ok {
		t.Errorf("KindOf(plain) = %v, %v; want KindFailed, false", k, ok)
	}
}

// Init drafts a mapping from the source's catalog that a migration then
// loads and verifies; it refuses to overwrite its output without Force.
func TestInitDraftMigrates(t *testing.T) {
	t.Parallel()
	f := newFixture(t, `CREATE TABLE authors (id int PRIMARY KEY, name text NOT NULL);
		CREATE TABLE books (id int PRIMARY KEY, author_id int NOT NULL REFERENCES authors, title text NOT NULL);
		INSERT INTO authors VALUES (1, 'a'), (2, 'b'); INSERT INTO books VALUES (1, 1, 'x'), (2, 1, 'y'), (3, 2, 'z')`, "")
	ctx := context.Background()
	o := engine.InitOptions{Schemas: []string{"public"}, Out: f.path("draft.yaml")}
	f.want("Init", outcomeOf(engine.Init(ctx, f.cfg, o)), "ok", "")
	f.want("Init again", outcomeOf(engine.Init(ctx, f.cfg, o)), "refused", "pass Force")
	o.Force = true
	f.want("Init --force", outcomeOf(engine.Init(ctx, f.cfg, o)), "ok", "")
	f.cfg.Mapping = o.Out
	f.want("Migrate the draft", f.migrate(f.options()), "ok", "")
	if n := len(f.keys()); n == 0 || !strings.Contains(f.out.String(), "verify PASSED") {
		t.Errorf("the draft's table holds %d items, and its check:\n%s", n, f.out)
	}
}

// DropSlot without a follow has nothing to drop and says so.
func TestDropSlotWithNothingToDrop(t *testing.T) {
	t.Parallel()
	f := shop(t)
	f.want("DropSlot", outcomeOf(engine.DropSlot(context.Background(), f.cfg, engine.FollowOptions{})), "ok", "")
	if !strings.Contains(f.log.String(), "nothing to drop") {
		t.Errorf("DropSlot said:\n%s", f.log)
	}
}

// Cutover without a follow is a no-go: its one report holds the slot
// check's NoGo, whose reason names the missing slot.
func TestCutoverWithoutFollowIsNoGo(t *testing.T) {
	t.Parallel()
	f := loaded(t)
	var reports []engine.CutoverReport
	err := engine.Cutover(context.Background(), f.cfg, engine.CutoverOptions{
		Report: func(r engine.CutoverReport) { reports = append(reports, r) }})
	f.want("Cutover", outcomeOf(err), "no-go", "")
	if len(reports) != 1 || reports[0].Go {
		t.Fatalf("Cutover reported %+v, want one no-go", reports)
	}
	i := slices.IndexFunc(reports[0].Checks, func(c engine.CheckResult) bool { return c.Name == "slot" })
	if i < 0 || reports[0].Checks[i].Verdict != engine.NoGo || !strings.Contains(reports[0].Checks[i].Reason, "no replication slot") {
		t.Errorf("the slot check: %+v, want a no-go naming the missing slot", reports[0].Checks)
	}
}

// A follow started with the load and stopped once caught up leaves its
// slot; resumed (with auto writers, which it reports at its end), it
// applies what changed meanwhile (an update, an insert, a delete), so that
// the table is what a fresh load writes; then DropSlot drops the slot and
// the publication.
func TestFollowResumesFromItsSlot(t *testing.T) {
	t.Parallel()
	f := shop(t)
	o := f.options()
	o.Follow, o.UntilCaughtUp, o.NoDDLCapture, o.Audit = true, true, true, "off"
	f.want("Migrate --follow", f.migrate(o), "ok", "")
	f.exec(`UPDATE customers SET name = 'renamed' WHERE id = 1; INSERT INTO customers VALUES (11, 'c11', 'blue');
		DELETE FROM customers WHERE id = 2`)
	o.Resume, o.Auto = true, &pipeline.Autoscale{Max: 4}
	f.want("Migrate --follow --resume", f.migrate(o), "ok", "")
	f.wantFreshLoad()
	if !regexp.MustCompile(`(?m)^follow: writers [1-4](–[1-4])? \(auto\): 0 halvings on throttling$`).MatchString(f.log.String()) {
		t.Errorf("the follow with auto writers did not report them:\n%s", f.log)
	}
	f.log.Reset()
	f.want("DropSlot", outcomeOf(engine.DropSlot(context.Background(), f.cfg, engine.FollowOptions{})), "ok", "")
	if !strings.Contains(f.log.String(), "dropped replication slot") {
		t.Errorf("DropSlot said:\n%s", f.log)
	}
}

// A follow's slot cannot be created while a transaction that has written is
// open: the run says which session holds it and how to end it, and goes on
// once it has ended.
func TestFollowNamesTheTransactionItsSlotWaitsOn(t *testing.T) {
	t.Parallel()
	f := shop(t)
	ctx := context.Background()
	conn := testenv.Connect(t, f.url)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "UPDATE customers SET name = 'held' WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	o := f.options()
	o.Follow, o.UntilCaughtUp, o.NoDDLCapture, o.Audit = true, true, true, "off"
	records := &recordLog{syncBuffer: f.log}
	f.cfg.Log = records
	ended := make(chan outcome, 1)
	go func() { ended <- f.migrate(o) }()
	said := regexp.MustCompile(fmt.Sprintf(`(?m)^creating replication slot \S+ has waited \S+ on \d+ transaction\(s\) to end: .*pid %d \(database \S+, user postgres, idle in transaction, begun \S+ ago, last statement "UPDATE customers SET name = 'held' WHERE id = 1"\).*; end them \(COMMIT or ROLLBACK`, conn.PgConn().PID()))
	if err := testenv.Poll("the line naming the open transaction", 2*time.Minute, ended, func() bool { return said.MatchString(f.log.String()) }); err != nil {
		t.Fatalf("%v; the run said:\n%s", err, f.log)
	}
	// A structured log gets the line's facts as fields too.
	pid := int64(conn.PgConn().PID())
	if !slices.ContainsFunc(records.all(), func(r logRecord) bool {
		slot, _ := r.attrs["slot"].(string)
		pids, _ := r.attrs["blocking_pids"].([]int64)
		waited, _ := r.attrs["waited_seconds"].(float64)
		return slot != "" && strings.HasPrefix(r.msg, "creating replication slot "+slot+" has waited") && waited > 0 && slices.Contains(pids, pid)
	}) {
		t.Errorf("no record of the wait with its slot, seconds and PID %d among %+v", pid, records.all())
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	f.want("Migrate --follow", <-ended, "ok", "")
	f.wantFreshLoad()
	f.want("DropSlot", outcomeOf(engine.DropSlot(ctx, f.cfg, engine.FollowOptions{})), "ok", "")
}

// recordLog is an engine.StructuredLog keeping each record's message and
// fields, its text in syncBuffer.
type recordLog struct {
	*syncBuffer
	mu      sync.Mutex
	records []logRecord
}

type logRecord struct {
	msg   string
	attrs map[string]any
}

func (l *recordLog) With(...slog.Attr) {}

func (l *recordLog) Log(msg string, attrs ...slog.Attr) {
	r := logRecord{msg: msg, attrs: map[string]any{}}
	for _, a := range attrs {
		r.attrs[a.Key] = a.Value.Any()
	}
	l.mu.Lock()
	l.records = append(l.records, r)
	l.mu.Unlock()
	l.syncBuffer.Write([]byte(msg + "\n"))
}

func (l *recordLog) all() []logRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.records)
}

// The follow's status line gives the position, totals, lag and rates.
func TestFollowStatusLine(t *testing.T) {
	t.Parallel()
	line := engine.FollowStatusLine(followStatus(), 12.4, 30)
	for _, part := range []string{"3 transactions, 7 changes, 5 items put, 2 deleted, 1 rejected", "lag 100 bytes", "12 changes/s, 30 items/s"} {
		if !strings.Contains(line, part) {
			t.Errorf("status line %q lacks %q", line, part)
		}
	}
}

func followStatus() follow.Status {
	return follow.Status{Transactions: 3, Changes: 7, Puts: 5, Deletes: 2, Rejected: 1, LagBytes: 100, Lag: time.Second}
}

func deleteTable(name string) *dynamodb.DeleteTableInput {
	return &dynamodb.DeleteTableInput{TableName: aws.String(name)}
}

// readReport reads a JSON report file.
func readReport(t *testing.T, path string) *report.Report {
	t.Helper()
	var r report.Report
	if err := json.Unmarshal([]byte(testenv.ReadFile(t, path)), &r); err != nil {
		t.Fatalf("report %s: %v", path, err)
	}
	return &r
}

// Items of other writers (a type the mapping does not have, or none) in a
// partition an access pattern reads are passed over, as the Scan's
// comparison passes over them: counted in the pattern's result, not a
// failure; with a filter too, whose ScannedCount includes them whether
// the filter keeps them or not. A stale item of the mapping's type there
// still fails the pattern.
func TestVerifyPatternsPassOverOtherWritersItems(t *testing.T) {
	t.Parallel()
	f := newFixture(t, shopSQL, shopMapping+`access_patterns:
  Customer: {key_condition: "PK = C#${id}"}
  OfTier: {key_condition: "PK = C#${id}", filter: "tier = ${tier}"}
`)
	f.want("Migrate", f.migrate(f.options()), "ok", "")
	for id := 1; id <= 10; id++ {
		pk := fmt.Sprintf("C#%010d", id) // as the mapping renders an int
		f.put("PK", pk, "SK", "NOTE", "type", "Note", "tier", "gold")
		f.put("PK", pk, "SK", "ZZ", "tier", "blue")
	}
	out, r := f.compare(report.ModeVerify)
	f.want("Compare verify", out, "ok", "")
	if r == nil || len(r.Patterns) == 0 {
		t.Fatalf("verify ran no access pattern: %+v", r)
	}
	for _, p := range r.Patterns {
		if !p.OK || p.NotRun || p.Others == 0 {
			t.Errorf("pattern %s %v: ok %v, %d items of other writers passed over; want ok, some passed over: %s", p.Pattern, p.Params, p.OK, p.Others, p.Problem)
		}
	}
	for id := 1; id <= 10; id++ {
		f.put("PK", fmt.Sprintf("C#%010d", id), "SK", "OLD", "type", "Customer", "tier", "gold")
	}
	_, r = f.compare(report.ModeVerify)
	for _, p := range r.Patterns {
		if p.OK {
			t.Errorf("pattern %s %v with a stale Customer item in its partition: ok, want a failure", p.Pattern, p.Params)
		}
	}
}

// A rejected row of an item collection's entity gives no item, so the
// collection's count leaves it out, as the entity's count does: verify
// passes, and so does the pattern reading the collections, each holding
// a rejected row.
func TestVerifyCollectionLeavesRejectedRowsOut(t *testing.T) {
	t.Parallel()
	f := ordersFixture(t, "UPDATE orders SET placed = NULL WHERE order_id <= 10")
	f.want("Migrate", f.migrate(f.options()), "rejected", "10 rows rejected")
	out, r := f.compare(report.ModeVerify)
	f.want("Compare verify", out, "ok", "")
	if r == nil || len(r.Patterns) == 0 {
		t.Fatalf("verify ran no access pattern: %+v", r)
	}
	for _, p := range r.Patterns {
		if !p.OK {
			t.Errorf("pattern %s %v: %s", p.Pattern, p.Params, p.Problem)
		}
	}
}

// migrate --changes-only whose puts the table refuses (ValidationException,
// as for an item DynamoDB finds too large) lists them as rejects and ends
// rejected (exit 3): the read-back and the access patterns pass over the
// refused keys, the older items there included, instead of finding them
// unapplied (exit 4).
func TestChangesOnlyRefusedPutsAreRejects(t *testing.T) {
	t.Parallel()
	f := newFixture(t, shopSQL, shopMapping+`access_patterns:
  Customer: {key_condition: "PK = C#${id}"}
`)
	f.want("Migrate", f.migrate(f.options()), "ok", "")
	f.exec(`UPDATE customers SET name = name || '!'; INSERT INTO customers VALUES (11, 'c11', 'gold'), (12, 'c12', 'blue')`)
	proxy, err := faultproxy.Start(f.cfg.AWS.EndpointURL, faultproxy.Rates{Permanent: "ValidationException", Only: []string{"BatchWriteItem", "PutItem"}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	cfg := f.cfg
	cfg.AWS.EndpointURL = proxy.URL
	o := f.options()
	o.ChangesOnly, o.JSON = true, f.path("changes.json")
	f.want("Migrate --changes-only", outcomeOf(engine.Migrate(context.Background(), cfg, o)), "rejected", "12 rows or items rejected")
	if want := "changes-only PASSED"; !strings.Contains(f.out.String(), want) || !strings.Contains(f.out.String(), "every write but the 12 rejected read back as applied") {
		t.Errorf("report, want %q and the rejected writes named:\n%s", want, f.out)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(testenv.ReadFile(t, o.JSON)), &r); err != nil {
		t.Fatal(err)
	}
	if a := r.Applied; a == nil || a.Refused != 12 || a.Counts.Unapplied.Total != 0 || !r.OK {
		t.Fatalf("applied %+v, ok %v: want 12 refused, none unapplied, ok", a, r.OK)
	}
	for _, p := range r.Patterns {
		if !p.OK || p.Refused == 0 {
			t.Errorf("pattern %s %v: ok %v, %d refused passed over: %s", p.Pattern, p.Params, p.OK, p.Refused, p.Problem)
		}
	}
	if got := f.rejects(o); len(got) != 12 {
		t.Errorf("%d rejects, want 12:\n%s", len(got), strings.Join(got, "\n"))
	}
}

// ordersFixture is shop with 30 orders in the customers' item collections,
// sorted by date, and the pattern reading a collection whole; more runs on
// the source first.
func ordersFixture(t *testing.T, more string) *fixture {
	t.Helper()
	return newFixture(t, shopSQL+`CREATE TABLE orders (order_id int PRIMARY KEY, customer_id int NOT NULL, placed date);
INSERT INTO orders SELECT i, 1 + i % 10, DATE '2026-01-01' + i FROM generate_series(1, 30) i;
`+more, shopMapping+`  Order:
    source: {table: orders}
    pk: C#${customer_id}
    sk: ORDER#${placed}#${order_id}
access_patterns:
  Collection: {key_condition: "PK = C#${id}"}
`)
}

// A row rejected now whose earlier item is in the table derives no item:
// --prune deletes that item as stale, as a full load would not write it,
// and the rejects file names the row.
func TestPruneDeletesARejectedRowsEarlierItem(t *testing.T) {
	t.Parallel()
	f := ordersFixture(t, "")
	f.want("Migrate", f.migrate(f.options()), "ok", "")
	f.exec(`UPDATE orders SET placed = NULL WHERE order_id = 7`)
	held := 0
	for _, it := range f.items() {
		if strings.Contains(it, `"order_id":{"N":"7"}`) {
			held++
		}
	}
	if held != 1 {
		t.Fatalf("%d items of order 7 before the prune, want 1", held)
	}
	o := f.options()
	o.Prune = true
	f.want("Migrate --prune", f.migrate(o), "rejected", "1 rows rejected")
	orders := 0
	for _, it := range f.items() {
		if strings.Contains(it, `"ORDER#`) {
			orders++
		}
		if strings.Contains(it, `"order_id":{"N":"7"}`) {
			t.Errorf("order 7's earlier item is still in the table: %s", it)
		}
	}
	if orders != 29 {
		t.Errorf("%d order items, want 29", orders)
	}
	if got := f.rejects(o); len(got) != 1 || !strings.Contains(got[0], "order_id=7") {
		t.Errorf("rejects %q, want order 7's", got)
	}
}
