package extract

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// ColumnPair pairs column Home with Other, whose values share their text;
// SameType also compares them with = (indexable).
type ColumnPair struct {
	Home, Other string
	SameType    bool
}

// CountMatching returns how many rows of other match, by pairs, the home row
// whose homeCols equal values: its collection's items, counted apart from
// the key renderer. Rows of other equal, in each non-NULL column of one of
// exclude, to its value are not counted (rejected rows, which give no item).
// No such home row counts 0. Without homeCols and pairs, it counts the rows of
// other whose notNull columns are not NULL (a literal partition key's).
func (s *Source) CountMatching(ctx context.Context, home mapping.Source, homeCols []string, values []any, other mapping.Source,
	pairs []ColumnPair, notNull []string, exclude []map[string]any) (int64, error) {
	if s.tx == nil {
		return 0, errors.New("source: CountMatching before Begin")
	}
	if len(homeCols) != len(values) || (len(pairs) == 0) != (len(homeCols) == 0) {
		return 0, fmt.Errorf("count matching rows: %d columns, %d values, %d pairs", len(homeCols), len(values), len(pairs))
	}
	col := func(c string) string { return "src." + pgx.Identifier{c}.Sanitize() }
	var texts, eq, where []string
	for i, c := range homeCols {
		eq = append(eq, fmt.Sprintf("%s = $%d", col(c), i+1))
	}
	for i, p := range pairs {
		alias := fmt.Sprintf("h%d", i)
		texts = append(texts, fmt.Sprintf("(%s)::text AS %s", col(p.Home), alias))
		where = append(where, fmt.Sprintf("(%s)::text = home.%s", col(p.Other), alias))
		if p.SameType {
			texts = append(texts, fmt.Sprintf("%s AS v%d", col(p.Home), i))
			where = append(where, fmt.Sprintf("%s = home.v%d", col(p.Other), i))
		}
	}
	for _, c := range notNull {
		where = append(where, col(c)+" IS NOT NULL")
	}
	args := slices.Clone(values)
	where, args = excludeRows(where, args, exclude, col)
	sql := fmt.Sprintf("SELECT count(*) FROM (SELECT %s FROM %s WHERE %s LIMIT 1) AS home, %s WHERE %s",
		strings.Join(texts, ", "), from(home), strings.Join(eq, " AND "), from(other), strings.Join(where, " AND "))
	if len(pairs) == 0 {
		sql = fmt.Sprintf("SELECT count(*) FROM %s WHERE %s", from(other), strings.Join(append(where, "true"), " AND "))
	}
	var n int64
	if err := s.tx.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count the rows of %s matching %s: %w", other, strings.Join(homeCols, ", "), err)
	}
	return n, nil
}

// excludeRows appends to where a condition leaving out each row of exclude
// (its non-NULL columns' values, added to args).
func excludeRows(where []string, args []any, exclude []map[string]any, col func(string) string) ([]string, []any) {
	for _, row := range exclude {
		var same []string
		for _, c := range slices.Sorted(maps.Keys(row)) {
			if row[c] == nil {
				continue
			}
			args = append(args, row[c])
			same = append(same, fmt.Sprintf("%s = $%d", col(c), len(args)))
		}
		if len(same) > 0 {
			where = append(where, "NOT ("+strings.Join(same, " AND ")+")")
		}
	}
	return where, args
}

// CountJoined returns how many rows of child join, by join's (child, parent)
// column pairs and =, a row of parent not equal to one of exclude: a count
// aggregate's sum over the parent's items, counted apart from the transform.
func (s *Source) CountJoined(ctx context.Context, parent, child mapping.Source, join [][2]string, exclude []map[string]any) (int64, error) {
	if s.tx == nil {
		return 0, errors.New("source: CountJoined before Begin")
	}
	col := func(c string) string { return "src." + pgx.Identifier{c}.Sanitize() }
	var on []string
	for _, p := range join {
		on = append(on, fmt.Sprintf("child.%s = %s", pgx.Identifier{p[0]}.Sanitize(), col(p[1])))
	}
	where, args := excludeRows([]string{"true"}, nil, exclude, col)
	sql := fmt.Sprintf("SELECT count(*) FROM %s JOIN (SELECT * FROM %s) AS child ON %s WHERE %s",
		from(parent), from(child), strings.Join(on, " AND "), strings.Join(where, " AND "))
	var n int64
	if err := s.tx.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count the rows of %s joined to %s: %w", child, parent, err)
	}
	return n, nil
}
