package follow_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/app"
	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/report"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// verify while the follow has not applied changes committed before the
// check's snapshot, first stopped, then running but held behind: the
// items those changes explain are in flight, not differences. That
// includes the items the follow has yet to delete: the old key of a row
// whose key columns changed, and the key of a row deleted. An item no
// change explains still fails, alone.
func TestVerifyCountsWhatTheFollowHasNotAppliedInFlight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := logicalDatabase(t)
	endpoint := ownDynalite(t)
	mappingFile := filepath.Join("testdata", "tasks-by-owner.yaml")
	testenv.Exec(t, url, `CREATE TABLE tasks (task_id int PRIMARY KEY, owner text NOT NULL, title text);
		ALTER TABLE tasks REPLICA IDENTITY FULL;
		INSERT INTO tasks SELECT i, 'owner' || i % 5, 'task ' || i FROM generate_series(1, 50) i`)
	table := testenv.TableName("verify-lag")
	dir := t.TempDir()
	t.Cleanup(func() {
		run(context.Background(), "drop-slot", "--mapping", mappingFile, "--source", url, "--table", table)
	})
	if code, out := run(ctx, "migrate", "--mapping", mappingFile, "--source", url, "--endpoint-url", endpoint, "--table", table,
		"--create-table", "--follow", "--until-caught-up", "--progress", "none",
		"--rejects", filepath.Join(dir, "rejects.jsonl"), "--checkpoint", filepath.Join(dir, "checkpoint.json")); code != 0 {
		t.Fatalf("migrate --follow --until-caught-up: exit %d\n%s", code, out)
	}
	// The follow has stopped, caught up; then, not applied by it: a task
	// given to another owner (its item moves), one deleted, one added,
	// one retitled.
	testenv.Exec(t, url, `UPDATE tasks SET owner = 'owner9' WHERE task_id = 1;
		DELETE FROM tasks WHERE task_id = 2;
		INSERT INTO tasks VALUES (51, 'owner1', 'added');
		UPDATE tasks SET title = 'retitled' WHERE task_id = 3`)
	want := []outcome.ItemRef{
		{PK: "OWNER#owner1", SK: "TASK#0000000001", Type: "Task"}, // the old key, still in the table
		{PK: "OWNER#owner1", SK: "TASK#0000000051", Type: "Task"},
		{PK: "OWNER#owner2", SK: "TASK#0000000002", Type: "Task"}, // deleted, still in the table
		{PK: "OWNER#owner3", SK: "TASK#0000000003", Type: "Task"},
		{PK: "OWNER#owner9", SK: "TASK#0000000001", Type: "Task"},
	}
	check := func(name string, wantCode int, wantExtra []outcome.ItemRef, wantSaid string, flags ...string) {
		t.Helper()
		path := filepath.Join(dir, name+".json")
		code, out := run(ctx, append([]string{"verify", "--mapping", mappingFile, "--source", url, "--endpoint-url", endpoint,
			"--table", table, "--report-json", path}, flags...)...)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: exit %d, no report: %v\n%s", name, code, err, firstLines(out, 40))
		}
		var r report.Report
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		inFlight, extra := itemRefs(t, r.InFlight), itemRefs(t, r.Extra)
		if code != wantCode || !strings.Contains(out, wantSaid) {
			t.Errorf("%s: exit %d, want %d saying %q\n%s", name, code, wantCode, wantSaid, firstLines(out, 40))
		}
		if d := cmp.Diff(want, inFlight); d != "" {
			t.Errorf("%s: items in flight (-want +got):\n%s", name, firstLines(d, 40))
		}
		if d := cmp.Diff(wantExtra, extra); d != "" || r.Counts.Missing.Total+r.Counts.Changed.Total != 0 {
			t.Errorf("%s: %d new and %d changed items, stale items (-want +got):\n%s", name, r.Counts.Missing.Total, r.Counts.Changed.Total, firstLines(d, 40))
		}
		if r.Summary.InFlight != int64(len(want)) {
			t.Errorf("%s: summary counts %d in flight, want %d", name, r.Summary.InFlight, len(want))
		}
	}
	check("stopped", 0, nil, "is not running")

	// The follow runs but applies nothing: its slot is held by a stream
	// that acknowledges nothing, so verify waits for it in vain.
	slot := follow.DefaultName(table)
	held, err := follow.Dial(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close(context.Background()) })
	if err := held.Start(ctx, slot, slot, 0); err != nil {
		t.Fatal(err)
	}
	check("behind", 0, nil, "bytes behind this check's snapshot after", "--follow-wait", "100ms")

	// A stale item that no change explains is still a difference.
	client, err := load.NewClient(ctx, load.ClientConfig{EndpointURL: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	planted := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "OWNER#owner4"},
		"SK": &types.AttributeValueMemberS{Value: "TASK#planted"}, "type": &types.AttributeValueMemberS{Value: "Task"}}
	if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: planted}); err != nil {
		t.Fatal(err)
	}
	check("planted", app.ExitMismatch, []outcome.ItemRef{{PK: "OWNER#owner4", SK: "TASK#planted", Type: "Task"}},
		"bytes behind this check's snapshot after", "--follow-wait", "100ms")
}

// itemRefs returns a report list's keys, sorted.
func itemRefs(t *testing.T, l outcome.List[outcome.ItemRef]) []outcome.ItemRef {
	t.Helper()
	refs, err := l.Slice()
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(refs, func(a, b outcome.ItemRef) int { return strings.Compare(a.PK+"\x00"+a.SK, b.PK+"\x00"+b.SK) })
	if len(refs) == 0 {
		return nil
	}
	return refs
}
