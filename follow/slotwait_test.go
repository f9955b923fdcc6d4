package follow_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// A slot's creation waits for the transactions that had written when it
// began: CreateSlot names the session holding one open, and returns once it
// ends.
func TestCreateSlotNamesTheTransactionItWaitsOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := logicalDatabase(t)
	conn := testenv.Connect(t, url)
	var db string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	// An open transaction that has an ID, as one that has written has.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT pg_current_xact_id()"); err != nil {
		t.Fatal(err)
	}
	open := int32(conn.PgConn().PID())

	s, err := follow.Dial(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	reports := make(chan follow.SlotWait, 16)
	created := make(chan error, 1)
	go func() {
		_, err := s.CreateSlot(ctx, "pg2d_slot_wait", func(w follow.SlotWait) { reports <- w })
		created <- err
	}()
	t.Cleanup(func() { follow.Drop(context.Background(), conn, "pg2d_slot_wait", "") })

	var report follow.SlotWait
	for report.Slot == "" {
		select {
		case w := <-reports:
			// Other tests' transactions, in other databases, can hold it too.
			if slices.ContainsFunc(w.Blockers, func(b follow.Blocker) bool { return b.PID == open }) {
				report = w
			}
		case err := <-created:
			t.Fatalf("CreateSlot returned (%v) while a transaction it waits on was open", err)
		case <-time.After(2 * time.Minute):
			t.Fatal("no report naming the open transaction's session")
		}
	}
	i := slices.IndexFunc(report.Blockers, func(b follow.Blocker) bool { return b.PID == open })
	b := report.Blockers[i]
	if report.Slot != "pg2d_slot_wait" || b.Database != db || b.State != "idle in transaction" ||
		!strings.Contains(b.Query, "pg_current_xact_id") || b.Since.IsZero() || report.Waited <= 0 {
		t.Fatalf("report %+v, blocker %+v; want slot pg2d_slot_wait, database %s, idle in transaction, its last statement and start", report, b, db)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-created:
		if err != nil {
			t.Fatalf("CreateSlot after the transaction ended: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("CreateSlot still waits after the transaction it waited on ended")
	}
}
