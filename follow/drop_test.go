package follow_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// Drop waits for a slot whose follow has just ended (its walsender lets
// the slot go once the server notices the connection is gone) and drops
// it; a slot a follow still streams from is refused after
// follow.SlotReleaseWait, with what to do.
func TestDropWaitsForAnEndedFollow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := logicalDatabase(t)
	conn := testenv.Connect(t, url)
	held := func(name string) *follow.Stream {
		s, err := follow.Dial(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateSlot(ctx, name, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx, name, "p", 0); err != nil {
			t.Fatal(err)
		}
		return s
	}
	testenv.Exec(t, url, "CREATE PUBLICATION p FOR ALL TABLES")

	running := held("pg2d_drop_running")
	t.Cleanup(func() {
		running.Close(context.Background())
		follow.Drop(context.Background(), conn, "pg2d_drop_running", "")
	})
	if _, err := follow.Drop(ctx, conn, "pg2d_drop_running", ""); err == nil || !strings.Contains(err.Error(), "a follow is streaming from it; stop it first") {
		t.Fatalf("Drop of a slot a follow streams from: %v; want a refusal saying to stop the follow", err)
	}

	// The follow ends, and Drop comes at once: before the server has let
	// the walsender go, or after.
	ended := held("pg2d_drop_ended")
	ended.Close(ctx)
	if dropped, err := follow.Drop(ctx, conn, "pg2d_drop_ended", ""); err != nil || len(dropped) != 1 {
		t.Fatalf("Drop right after the follow ended: %v, %v; want the slot dropped", dropped, err)
	}
}
