package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// A shard's checkpoint written by an earlier pg2dynamo records an entity's
// range only once a batch of it is written: B, stopped before its first, has
// none. --resume without --snapshot refuses it (exit 2), the checkpoint left
// as it was, rather than cut B again from a new snapshot's count(*), which
// rows inserted since have moved (shard 2 read (110, 220], rows 101 to 110 by
// no shard). With the snapshot the shards read, B is cut as they cut it.
func TestShardResumeOfUnplannedEntity(t *testing.T) {
	parallel(t)
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE a (id integer PRIMARY KEY); CREATE TABLE b (id integer PRIMARY KEY);
		INSERT INTO a SELECT generate_series(1, 300); INSERT INTO b SELECT generate_series(1, 300);`)
	mappingFile := writeMapping(t, "table: {name: shards}\nentities:\n  A:\n    source: {table: a}\n    pk: A#${id}\n    sk: A\n"+
		"  B:\n    source: {table: b}\n    pk: B#${id}\n    sk: B\n")
	snapshot := heldSnapshot(t, url)
	cpPath := filepath.Join(t.TempDir(), "cp.json")
	args := []string{"migrate", "--mapping", mappingFile, "--source", url, "--sink", "null", "--shard", "2/3", "--progress", "none",
		"--rejects", filepath.Join(t.TempDir(), "r.jsonl"), "--checkpoint", cpPath}
	if res := runCLI(t, append(args, "--snapshot", snapshot)...); res.code != ExitOK {
		t.Fatalf("shard 2/3: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	var cp map[string]any
	b, err := os.ReadFile(cpPath)
	if err == nil {
		err = json.Unmarshal(b, &cp)
	}
	if err != nil {
		t.Fatal(err)
	}
	cp["entities"].(map[string]any)["B"] = map[string]any{"done": false}
	if b, err = json.Marshal(cp); err == nil {
		err = os.WriteFile(cpPath, b, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
	testenv.Exec(t, url, `INSERT INTO b SELECT generate_series(301, 330)`)

	res := runCLI(t, append(args, "--resume")...)
	if res.code != ExitUsage || !strings.Contains(res.stderr, "records no ranges of B") || !strings.Contains(res.stderr, "--snapshot") {
		t.Errorf("--resume without --snapshot: exit %d, want %d naming B and --snapshot\n%s", res.code, ExitUsage, res.stderr)
	}
	if after, _ := os.ReadFile(cpPath); !bytes.Equal(after, b) {
		t.Errorf("the refused resume rewrote the checkpoint:\n%s", after)
	}
	res = runCLI(t, append(args, "--resume", "--snapshot", snapshot)...)
	if res.code != ExitOK {
		t.Fatalf("--resume --snapshot: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if rows := summaryRows(t, res.stdout); rows["B"] != 100 {
		t.Errorf("--resume --snapshot read %d rows of B, want shard 2's 100 of the snapshot's 300", rows["B"])
	}
}
