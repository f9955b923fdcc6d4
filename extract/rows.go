package extract

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// RowsUpTo returns how many rows src holds, reading at most limit, read-only
// (under a savepoint of s's snapshot once Begin has run).
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

// textPtrs appends a pointer to each of texts to dst, for Scan.
func textPtrs(dst []any, texts []string) []any {
	for i := range texts {
		dst = append(dst, &texts[i])
	}
	return dst
}
