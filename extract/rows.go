package extract

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// RowsUpTo returns how many rows src holds, reading no further than limit
// rows, in a read-only transaction (s's snapshot under a savepoint once
// Begin has run). Errors are returned wrapped (*pgconn.PgError for
// PostgreSQL's).
func (s *Source) RowsUpTo(ctx context.Context, src mapping.Source, limit int) (int, error) {
	var n int
	err := s.readOnly(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM (SELECT FROM %s LIMIT %d) AS probe", from(src), limit)).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("count the rows of %s: %w", src, err)
	}
	return n, nil
}
