package extract

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// MisOrder is a row whose digits sort as text right after a greater number of
// its group: Group's values, Before the greater, After its own.
type MisOrder struct {
	Group         []string
	Before, After string
}

// MisOrdered finds the rows of src whose number column col, ordered as text
// within each group (COLLATE "C", as DynamoDB orders key digits), comes right
// after a greater number: how many, and up to n of them. NULL col is skipped.
func (s *Source) MisOrdered(ctx context.Context, src mapping.Source, group []string, col string, n int) (int64, []MisOrder, error) {
	if s.tx == nil {
		return 0, nil, errors.New("source: MisOrdered before Begin")
	}
	q := func(c string) string { return "src." + pgx.Identifier{c}.Sanitize() }
	var sel, outer, by, order []string
	for i, g := range group {
		sel = append(sel, fmt.Sprintf("coalesce((%s)::text, 'NULL') AS g%d", q(g), i), fmt.Sprintf("%s AS r%d", q(g), i))
		outer = append(outer, fmt.Sprintf("g%d", i))
		order = append(order, fmt.Sprintf("r%d", i))
		by = append(by, q(g))
	}
	partition := ""
	if len(by) > 0 {
		partition = "PARTITION BY " + strings.Join(by, ", ") + " "
	}
	c := q(col)
	inner := fmt.Sprintf("SELECT %s %s AS c, lag(%s) OVER (%sORDER BY (%s)::text COLLATE \"C\") AS prev FROM %s WHERE %s IS NOT NULL",
		strings.Join(append(sel, ""), ", "), c, c, partition, c, from(src), c)
	sql := fmt.Sprintf("SELECT %s prev::text, c::text, count(*) OVER () FROM (%s) AS s WHERE prev > c ORDER BY %s LIMIT %d",
		strings.Join(append(outer, ""), ", "), inner, strings.Join(append(order, "c"), ", "), n)
	rows, err := s.tx.Query(ctx, sql)
	if err != nil {
		return 0, nil, fmt.Errorf("order of %s in %s: %w", col, src, err)
	}
	defer rows.Close()
	var total int64
	var out []MisOrder
	for rows.Next() {
		texts := make([]string, len(group)+2)
		if err := rows.Scan(append(textPtrs(nil, texts), &total)...); err != nil {
			return 0, nil, fmt.Errorf("order of %s in %s: %w", col, src, err)
		}
		out = append(out, MisOrder{Group: texts[:len(group)], Before: texts[len(group)], After: texts[len(group)+1]})
	}
	if err := rows.Err(); err != nil {
		return 0, nil, fmt.Errorf("order of %s in %s: %w", col, src, err)
	}
	return total, out, nil
}
