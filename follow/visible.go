package follow

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// awaitVisible waits until every transaction of txs is visible to a
// snapshot taken now, on conn (outside a transaction), so that the
// window's snapshot, taken after, reads what they committed.
//
// A walsender may send a transaction as soon as its commit record is
// flushed, before the committing backend has left the ProcArray: a
// snapshot taken in between still sees the transaction in progress, and a
// window reading in it would derive the rows as they were before it, then
// acknowledge the transaction. awaitVisible waits as long as that takes
// (longer when commit waits for a synchronous standby), polling with a
// backoff. Visibility only grows: a transaction one snapshot sees
// committed, every later snapshot (the window's) sees too.
func awaitVisible(ctx context.Context, conn *pgx.Conn, txs []*Tx) error {
	var xids []int64
	for _, tx := range txs {
		if tx.Xid != 0 {
			xids = append(xids, int64(tx.Xid))
		}
	}
	if len(xids) == 0 {
		return nil
	}
	wait := time.Millisecond
	for {
		var pending int
		if err := conn.QueryRow(ctx, visibleQuery, xids).Scan(&pending); err != nil {
			return fmt.Errorf("window's transactions visible: %w", err)
		}
		if pending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(wait):
		}
		wait = min(2*wait, 10*time.Millisecond)
	}
}

// visibleQuery counts the transactions of $1 (32-bit IDs, as pgoutput
// sends them) that a snapshot taken now does not see committed. Each ID
// is widened to the xid8 of the snapshot's epoch: the most recent ID
// before the snapshot's xmax with those 32 bits (a transaction streamed is
// older than xmax by far less than 2^31).
const visibleQuery = `SELECT count(*) FROM (SELECT pg_current_snapshot() AS snap) s, unnest($1::bigint[]) AS x(id)
WHERE NOT pg_visible_in_snapshot(((pg_snapshot_xmax(snap)::text::bigint)
	- (((pg_snapshot_xmax(snap)::text::bigint) % 4294967296 - id + 4294967296) % 4294967296))::text::xid8, snap)`
