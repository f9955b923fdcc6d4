package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/engine"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// summaryRows returns the rows read of each entity in a migrate summary,
// by entity ("total" too).
func summaryRows(t *testing.T, stdout string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] == "entity" {
			continue
		}
		if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			out[f[0]] = n
		}
	}
	if _, ok := out["total"]; !ok {
		t.Fatalf("no summary in:\n%s", stdout)
	}
	return out
}

// Three shards of migrate, run at once on one exported snapshot, write
// the table one unsharded run writes, item for item; between them they
// read every source row once (their rows add up to count(*), each shard
// reading some).
func TestShardsEqualOneRun(t *testing.T) {
	parallel(t)
	ctx := context.Background()
	url, counts := fixtureSource(t, "tickets", 0.25)
	mappingFile := testenv.RepoFile(t, "fixtures", "mappings", "strategies", "tickets.yaml")
	whole, sharded := testenv.TableName("whole"), testenv.TableName("sharded")
	if res := runCLI(t, migrateArgs(t, mappingFile, url, whole, "--create-table", "--no-verify")...); res.code != 0 {
		t.Fatalf("unsharded migrate: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	m, err := engine.LoadMapping(ctx, mappingFile)
	if err != nil {
		t.Fatal(err)
	}
	m.Table.Name = sharded
	dyn := dynamoClient(t)
	if _, err := load.EnsureTable(ctx, dyn, m, true); err != nil {
		t.Fatal(err)
	}
	// The snapshot every shard reads, held open as snapshot hold does.
	snapshot := heldSnapshot(t, url)
	results := make([]cliResult, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runCLI(t, migrateArgs(t, mappingFile, url, sharded, "--shard", fmt.Sprintf("%d/3", i+1), "--snapshot", snapshot)...)
		}()
	}
	wg.Wait()
	read := map[string]int64{}
	for i, res := range results {
		if res.code != 0 || !strings.Contains(res.stderr, fmt.Sprintf("shard %d/3 done", i+1)) {
			t.Fatalf("shard %d/3: exit %d\n%s\n%s", i+1, res.code, res.stdout, res.stderr)
		}
		rows := summaryRows(t, res.stdout)
		if rows["Ticket"] == 0 || rows["User"] == 0 {
			t.Errorf("shard %d/3 read %v: every shard should read some tickets and users", i+1, rows)
		}
		for e, n := range rows {
			read[e] += n
		}
	}
	want := map[string]int64{"Org": counts["orgs"], "User": counts["users"], "Ticket": counts["tickets"]}
	want["total"] = want["Org"] + want["User"] + want["Ticket"]
	if diff := cmp.Diff(want, read); diff != "" {
		t.Errorf("rows the shards read, by entity (-count(*) +shards):\n%s", diff)
	}
	w, s := testenv.CanonicalItems(scanAll(t, dyn, whole)), testenv.CanonicalItems(scanAll(t, dyn, sharded))
	if len(w) != int(want["total"]) {
		t.Fatalf("the unsharded table holds %d items, want %d", len(w), want["total"])
	}
	if diff := cmp.Diff(w, s); diff != "" {
		t.Errorf("the shards' table differs from one run's (-one run +shards):\n%s", diff)
	}
	v := runCLI(t, "verify", "--mapping", mappingFile, "--source", url, "--endpoint-url", dynalite(t).Endpoint, "--table", sharded)
	if v.code != 0 {
		t.Errorf("verify of the shards' table: exit %d\n%s", v.code, v.stdout)
	}
}

// A shard reads its range's two boundaries in one statement, whatever the
// number of shards: a shard of 1,000 runs no more statements than a shard
// of 2 (it ran one OFFSET scan per boundary of the split, all N−1 of
// them: 9.4 s for --shard 1/1000 of 22k rows). Counted at the protocol,
// not timed.
func TestShardBoundariesInOneStatement(t *testing.T) {
	parallel(t)
	url, _ := fixtureSource(t, "tickets", 0.25)
	mappingFile := testenv.RepoFile(t, "fixtures", "mappings", "strategies", "tickets.yaml")
	counter := testenv.NewStatementCounter(t, url)
	statements := func(shard string) int64 {
		t.Helper()
		before := counter.Statements()
		res := runCLI(t, "migrate", "--mapping", mappingFile, "--source", counter.URL, "--sink", "null", "--shard", shard,
			"--readers", "2", "--progress", "none", "--rejects", filepath.Join(t.TempDir(), "r.jsonl"),
			"--checkpoint", filepath.Join(t.TempDir(), "cp.json"))
		if res.code != 0 {
			t.Fatalf("--shard %s: exit %d\n%s\n%s", shard, res.code, res.stdout, res.stderr)
		}
		if rows := summaryRows(t, res.stdout); rows["Ticket"] == 0 {
			t.Fatalf("--shard %s read no ticket: %v", shard, rows)
		}
		return counter.Statements() - before
	}
	two, thousand := statements("2/2"), statements("2/1000")
	t.Logf("statements: %d for --shard 2/2, %d for --shard 2/1000", two, thousand)
	if thousand > two {
		t.Errorf("--shard 2/1000 ran %d statements, --shard 2/2 %d: the boundaries should cost one statement per entity, whatever N", thousand, two)
	}
}

// --shard takes at most pipeline.MaxShards shards, and says why.
func TestShardCountBounded(t *testing.T) {
	parallel(t)
	url, _ := fixtureSource(t, "tickets", 0.05)
	mappingFile := testenv.RepoFile(t, "fixtures", "mappings", "strategies", "tickets.yaml")
	for _, cmd := range [][]string{
		{"migrate", "--sink", "null", "--checkpoint", filepath.Join(t.TempDir(), "cp.json")},
		{"export", "--to", "file://" + t.TempDir() + "/"},
	} {
		args := append(cmd, "--mapping", mappingFile, "--source", url, "--shard", "1/5000", "--progress", "none",
			"--rejects", filepath.Join(t.TempDir(), "r.jsonl"))
		res := runCLI(t, args...)
		if res.code != ExitUsage || !strings.Contains(res.stderr, "at most 1024 shards") || !strings.Contains(res.stderr, "max_connections") {
			t.Errorf("%s --shard 1/5000: exit %d, want %d saying the bound and why\n%s", cmd[0], res.code, ExitUsage, res.stderr)
		}
	}
}

// heldSnapshot exports a snapshot of url from a transaction held open until
// the test ends, as pg2dynamo snapshot hold does, and returns its name.
func heldSnapshot(t *testing.T, url string) string {
	t.Helper()
	ctx := context.Background()
	tx, err := testenv.Connect(t, url).BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(ctx) })
	var snapshot string
	if err := tx.QueryRow(ctx, "SELECT pg_export_snapshot()").Scan(&snapshot); err != nil {
		t.Fatal(err)
	}
	return snapshot
}
