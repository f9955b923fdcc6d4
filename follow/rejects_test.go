package follow_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// refusing is a sink in front of a real one that refuses, as DynamoDB
// refuses an item it cannot store (a *load.BatchError), the items whose
// partition key is one of refused, and writes the others.
type refusing struct {
	load.Sink
	refused []string
}

func (s refusing) Write(ctx context.Context, batch []transform.Item) error {
	var pass []transform.Item
	be := &load.BatchError{}
	for i, it := range batch {
		if pk := transform.ItemKey(it.Attrs, [2]string{"PK", "SK"})[0]; slices.Contains(s.refused, pk) {
			be.Failed = append(be.Failed, load.ItemError{Index: i, Err: errors.New("ValidationException: refused by the test's sink")})
			continue
		}
		pass = append(pass, it)
	}
	if len(pass) > 0 {
		if err := s.Sink.Write(ctx, pass); err != nil {
			return err
		}
	}
	if len(be.Failed) > 0 {
		return be
	}
	return nil
}

// A row whose items the table refuses is one reject, the same JSON line,
// whether the full load or a follow writes it: both hand their rows to
// the same write stage. The row has a mirror and both its items are
// refused (a writer that rejects per item lists it twice).
func TestFollowAndMigrateRejectARefusedRowAlike(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := logicalDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE friends (a integer, b integer, note text, PRIMARY KEY (a, b));
		INSERT INTO friends VALUES (1, 2, 'x'), (3, 4, 'x')`)
	conn := testenv.Connect(t, url)
	endpoint := ownDynalite(t)
	m, src, plans := prepared(t, url, filepath.Join("testdata", "friends-mirror.yaml"), testenv.TableName("refused"))
	sl := startSlot(t, url, conn, endpoint, m, plans)
	sink := refusing{Sink: sl.sink, refused: []string{"U#0000000003", "U#0000000004"}}

	var mu sync.Mutex
	var lines []string
	record := func(r pipeline.Reject) error {
		b, err := json.Marshal(r)
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, string(b))
		return err
	}
	if err := src.BeginAt(ctx, sl.slot.Snapshot); err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.Run(ctx, pipeline.Postgres(src), m, plans, sink, pipeline.Options{OnReject: record}); err != nil {
		t.Fatal(err)
	}
	src.End(ctx)
	migrated := lines
	lines = nil
	if len(migrated) != 1 {
		t.Fatalf("the full load rejected %d rows, want (3,4) once:\n%s", len(migrated), strings.Join(migrated, "\n"))
	}

	testenv.Exec(t, url, "UPDATE friends SET note = 'changed' WHERE a = 3")
	a := follow.NewApplier(sl.graph, m, src, sink)
	defer a.Close()
	a.OnReject = record
	st, err := follow.Run(ctx, sl.stream, a, conn, follow.Options{Slot: sl.name, Publication: sl.name, From: sl.slot.Consistent, UntilCaughtUp: true})
	if err != nil || !st.CaughtUp {
		t.Fatalf("follow: %+v, %v", st, err)
	}
	if d := cmp.Diff(migrated, lines); d != "" {
		t.Errorf("rejects of the follow, against the full load's (-migrate +follow):\n%s", d)
	}
}
