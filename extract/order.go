package extract

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// SortColumn is a column to order values by, as PostgreSQL orders them.
type SortColumn struct {
	// Name is the column's name in its source.
	Name string
	// Type is the format_type name, with modifier, schema-qualified when not
	// visible: "character(3)", "shop.ticket_status".
	Type string
	// Collatable is true for a type with a collation: it is compared with
	// COLLATE "C", the byte order of DynamoDB's string keys.
	Collatable bool
	// AsText is true when the values are the text form, cast back to Type.
	AsText bool
}

// SortColumns describes cols of src for Rank (types, collatability) from
// pg_type, reading no row.
func (s *Source) SortColumns(ctx context.Context, src mapping.Source, cols []Column) ([]SortColumn, error) {
	if len(cols) == 0 {
		return nil, nil
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = "src." + pgx.Identifier{c.Name}.Sanitize()
	}
	sd, err := s.conn.Prepare(ctx, "", "SELECT "+strings.Join(names, ", ")+" FROM "+from(src))
	if err != nil {
		return nil, fmt.Errorf("describe %s for ordering: %w", strings.Join(names, ", "), err)
	}
	out := make([]SortColumn, len(cols))
	for i, f := range sd.Fields {
		out[i] = SortColumn{Name: cols[i].Name, AsText: cols[i].AsText}
		var err error
		if out[i].Type, out[i].Collatable, err = s.Catalog().sortType(ctx, f.DataTypeOID, f.TypeModifier); err != nil {
			return nil, fmt.Errorf("type of column %s: %w", cols[i].Name, err)
		}
	}
	return out, nil
}

// OrderBy renders Rank's ORDER BY list for messages: `name COLLATE "C" DESC`.
func OrderBy(cols []SortColumn, desc bool) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		name := c.Name
		if !plainIdent.MatchString(name) {
			name = pgx.Identifier{name}.Sanitize()
		}
		parts[i] = orderTerm(name, c, desc)
	}
	return strings.Join(parts, ", ")
}

var plainIdent = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

func orderTerm(expr string, c SortColumn, desc bool) string {
	if c.Collatable {
		expr += ` COLLATE "C"`
	}
	if desc {
		expr += " DESC"
	}
	return expr
}

// ErrUnordered is returned (wrapped) by Rank for a type without ordering.
var ErrUnordered = errors.New("a column's type has no ordering")

// Rank asks PostgreSQL how it orders tuples (one value per column of cols,
// none NULL) with dense_rank() over unnest of typed arrays. It returns each
// tuple's dense rank (1 first; equal tuples share one) and each value's text
// form, reading no table. A type without ordering wraps ErrUnordered.
func (s *Source) Rank(ctx context.Context, cols []SortColumn, tuples [][]any, desc bool) (ranks []int64, texts [][]string, err error) {
	if len(cols) == 0 {
		return nil, nil, errors.New("rank: no column to order by")
	}
	args := make([]any, len(cols))
	arrays := make([]string, len(cols))
	aliases := make([]string, len(cols))
	terms := make([]string, len(cols))
	outs := make([]string, len(cols))
	for i, c := range cols {
		vals := make([]any, len(tuples))
		for j, t := range tuples {
			vals[j] = t[i]
		}
		args[i] = vals
		alias := fmt.Sprintf("c%d", i+1)
		aliases[i] = alias
		expr := "t." + alias
		if c.AsText {
			arrays[i] = fmt.Sprintf("$%d::text[]", i+1)
			expr = "(" + expr + ")::" + c.Type
		} else {
			arrays[i] = fmt.Sprintf("$%d::%s[]", i+1, c.Type)
		}
		terms[i] = orderTerm(expr, c, desc)
		outs[i] = expr + "::text"
	}
	sql := fmt.Sprintf("SELECT t.ord, dense_rank() OVER (ORDER BY %s), %s FROM unnest(%s) WITH ORDINALITY AS t(%s, ord) ORDER BY t.ord",
		strings.Join(terms, ", "), strings.Join(outs, ", "), strings.Join(arrays, ", "), strings.Join(aliases, ", "))
	var q interface {
		Query(context.Context, string, ...any) (pgx.Rows, error)
	} = s.conn
	if s.tx != nil {
		q = s.tx
	}
	fail := func(err error) ([]int64, [][]string, error) {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42883" { // undefined_function: no ordering operator
			return nil, nil, fmt.Errorf("rank by %s: %w: %w", OrderBy(cols, desc), ErrUnordered, err)
		}
		return nil, nil, fmt.Errorf("rank by %s: %w", OrderBy(cols, desc), err)
	}
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	ranks = make([]int64, 0, len(tuples))
	texts = make([][]string, 0, len(tuples))
	for rows.Next() {
		var ord, rank int64
		text := make([]string, len(cols))
		if err := rows.Scan(textPtrs([]any{&ord, &rank}, text)...); err != nil {
			return fail(err)
		}
		ranks = append(ranks, rank)
		texts = append(texts, text)
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	if len(ranks) != len(tuples) {
		return nil, nil, fmt.Errorf("rank by %s: %d tuples sent, %d ranked", OrderBy(cols, desc), len(tuples), len(ranks))
	}
	return ranks, texts, nil
}
