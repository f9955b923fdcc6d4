package follow

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// awaitVisible waits until every transaction of txs is visible to a snapshot
// taken now on conn, so that the window's snapshot, taken after, reads them.
// A walsender may send a transaction once its commit record is flushed,
// before the backend has left the ProcArray: a snapshot taken in between
// sees it in progress, and the window would derive the old rows yet
// acknowledge it. Visibility only grows, so once one snapshot sees a
// transaction, every later one does.
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

// visibleQuery counts the transactions of $1 (32-bit IDs) that a snapshot taken
// now does not see committed. Each ID is widened to the xid8 of the snapshot's
// epoch: a streamed transaction is far less than 2^31 older than xmax.
const visibleQuery = `SELECT count(*) FROM (SELECT pg_current_snapshot() AS snap) s, unnest($1::bigint[]) AS x(id)
WHERE NOT pg_visible_in_snapshot(((pg_snapshot_xmax(snap)::text::bigint)
	- (((pg_snapshot_xmax(snap)::text::bigint) % 4294967296 - id + 4294967296) % 4294967296))::text::xid8, snap)`
