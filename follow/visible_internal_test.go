package follow

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// awaitVisible does not return while a window's transaction is not yet
// visible to new snapshots (here: still open), and returns once it is;
// an ID of an earlier epoch's numbering (its 32 bits) is widened right.
func TestAwaitVisibleWaitsForTheCommit(t *testing.T) {
	ctx := context.Background()
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE t (id int)`)
	writer, follower, after := testenv.Connect(t, url), testenv.Connect(t, url), testenv.Connect(t, url)
	tx, err := writer.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var xid int64
	if err := tx.QueryRow(ctx, `INSERT INTO t VALUES (1) RETURNING pg_current_xact_id()::text::bigint`).Scan(&xid); err != nil {
		t.Fatal(err)
	}
	txs := []*Tx{{Xid: uint32(xid)}, {Xid: 0}}

	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := awaitVisible(short, follower, txs); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("awaitVisible with transaction %d open: %v, want it waiting until the deadline", xid, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// A deadline that ends a query in flight closes its connection
	// (pgx), as it would end a stopping follow's: the second wait has its own.
	if err := awaitVisible(ctx, after, txs); err != nil {
		t.Fatalf("awaitVisible once transaction %d committed: %v", xid, err)
	}
}
