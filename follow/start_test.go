package follow_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// A --follow start refused after it created the publication (a slot of
// its name exists already) leaves no publication behind; the full load of
// a follow that starts says it is not verified.
func TestFailedFollowStartDropsItsPublication(t *testing.T) {
	t.Parallel()
	endpoint, url := ownDynalite(t), logicalDatabase(t)
	testenv.Exec(t, url, notesSchema)
	table := testenv.TableName("notes")
	name := follow.DefaultName(table)
	mappingFile := filepath.Join("testdata", "notes-whole.yaml")
	dir := t.TempDir()
	args := []string{"migrate", "--mapping", mappingFile, "--source", url, "--endpoint-url", endpoint, "--table", table, "--create-table",
		"--follow", "--until-caught-up", "--progress", "none", "--checkpoint", filepath.Join(dir, "checkpoint.json"), "--rejects", filepath.Join(dir, "rejects.jsonl")}
	conn := testenv.Connect(t, url)
	if _, err := conn.Exec(context.Background(), "SELECT pg_create_logical_replication_slot($1, 'pgoutput')", name); err != nil {
		t.Fatal(err)
	}
	code, out := run(context.Background(), args...)
	if code != 2 || !strings.Contains(out, "replication slot "+name+" exists") || !strings.Contains(out, "dropped the publication "+name) {
		t.Fatalf("migrate --follow with the slot taken: exit %d, want 2, the slot named and the publication dropped\n%s", code, out)
	}
	var pubs int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_publication WHERE pubname = $1", name).Scan(&pubs); err != nil || pubs != 0 {
		t.Fatalf("publications named %s after the refused start: %d (%v)", name, pubs, err)
	}
	if _, err := conn.Exec(context.Background(), "SELECT pg_drop_replication_slot($1)", name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		run(context.Background(), "drop-slot", "--mapping", mappingFile, "--source", url, "--table", table)
	})
	code, out = run(context.Background(), args...)
	if code != 0 || !strings.Contains(out, "the full load is not verified before following") {
		t.Fatalf("migrate --follow: exit %d, want 0 and the note that the full load is not verified\n%s", code, out)
	}
}
