package follow

import (
	"context"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// A repair derives in a snapshot newer than its pass's. Of two items found
// changed, note 2's row is still there: its item goes to the follow's writers
// as the newer snapshot has it. Note 1's row was deleted after the pass's
// snapshot, and the follow had not applied the delete when the pass compared:
// the delete is the follow's to apply, so the repair writes nothing for it
// (a put would bring back the item of a deleted row), reports nothing, and
// counts it as left out.
func TestAuditRepairLeavesAKeyGoneToTheFollow(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE notes (note_id int PRIMARY KEY, owner text NOT NULL, body text);
		INSERT INTO notes SELECT i, 'o' || (i % 3), 'note ' || i FROM generate_series(1, 20) i;
		DELETE FROM notes WHERE note_id = 1; UPDATE notes SET body = 'newer' WHERE note_id = 2`)
	m, err := mapping.Load(testenv.RepoFile(t, "follow", "testdata", "notes-whole.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var reported []Drift
	// The follow's writers: each chunk handed over is written at once.
	a := &Applier{side: make(chan *repairReq)}
	var items []transform.Item
	writers := make(chan struct{})
	go func() {
		defer close(writers)
		for req := range a.side {
			items = append(items, req.items...)
			req.done <- nil
		}
	}()
	au := NewAuditor(url, m, nil, a, AuditOptions{Mode: AuditRepair, OnDrift: func(d Drift) error { reported = append(reported, d); return nil }})
	ctx := context.Background()
	src, err := extract.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close(ctx)
	gone, kept := [2]string{"OWNER#o1", "NOTE#0000000001"}, [2]string{"OWNER#o2", "NOTE#0000000002"}
	out := []drifted{{key: gone, kind: DriftChanged, typ: "Note"}, {key: kept, kind: DriftChanged, typ: "Note"}}
	err = au.settle(ctx, src, 1, out)
	close(a.side)
	<-writers
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || transform.ItemKey(items[0].Attrs, au.keyAttrs) != kept {
		t.Fatalf("the repair sent %d items, want note 2's alone: %v", len(items), items)
	}
	if got := testenv.CanonicalItem(items[0].Attrs); !strings.Contains(got, `"body":{"S":"newer"}`) {
		t.Errorf("note 2's item repaired as %s, want the newer snapshot's body", got)
	}
	st := au.Status()
	if st.Drifted != 1 || st.Repaired != 1 || st.Skipped != 1 || st.RepairRows != 19 {
		t.Errorf("status: %d drifted, %d repaired, %d left out, %d rows read again; want 1, 1, 1 and 19 (the notes left)", st.Drifted, st.Repaired, st.Skipped, st.RepairRows)
	}
	if len(reported) != 1 || reported[0].Key["SK"] != "NOTE#0000000002" || !reported[0].Repaired {
		t.Errorf("reported %+v, want note 2's item, repaired", reported)
	}
}
