package pipeline

import (
	"context"
	"fmt"
	"slices"

	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Positions. A read in primary-key order records where it stands, in a
// Range's After and Until, as a position: one text per primary key
// column, in key order, each the text PostgreSQL's output function gives
// for the column's value under extract.SessionSettings (bytea \xdead, inet
// 10.1.2.3, timestamptz 2024-01-02 03:04:05+00). There is one encoding for
// every position, and PostgreSQL, not Go, renders it: a row's position is
// read in the statement that reads the row (extract.Query.Position,
// through transform.Plan.Position), a split boundary by the same
// expression (extract.Source.Positions), and a position is bound back through
// the type's input function ($1::text::bytea). So a position always stands
// for the very value it was read from, for every type; it cannot drift
// from PostgreSQL as a Go rendering of pgx's values could (bytea was
// rendered [222 173], which reads back as other bytes, and a resumed run
// skipped rows).

// trustedRanges returns rs, the ranges of p's read as a checkpoint
// recorded them, with the After of each range not done replaced by the
// range's start (the previous range's Until; nil, the first row, for the
// first) when it is not a position in this encoding: when PostgreSQL,
// reading it with the input functions and printing it again, does not give
// back the same text, or refuses it. Such a position was written by an
// earlier pg2dynamo, whose positions could read back as another value and
// skip rows; the range is read again from its start instead, which is safe
// (items are put by key) and costs only time. Until is kept: boundaries
// were always PostgreSQL's text of the value.
func trustedRanges(ctx context.Context, src RowSource, p *transform.Plan, rs []Range) ([]Range, error) {
	q := p.Query()
	if !p.Ordered() {
		return rs, nil
	}
	out := slices.Clone(rs)
	for i, r := range out {
		if r.Done || len(r.After) == 0 {
			continue
		}
		canon, ok, err := src.CanonicalPosition(ctx, q, r.After)
		if err != nil {
			return nil, fmt.Errorf("resume %s: %w", p.Entity().Name, err)
		}
		if ok && slices.Equal(canon, r.After) {
			continue
		}
		out[i].After = nil
		if i > 0 {
			out[i].After = out[i-1].Until
		}
	}
	return out, nil
}

// trustedResume applies trustedRanges to every entity res has ranges for.
func trustedResume(ctx context.Context, src RowSource, plans []*transform.Plan, res resume) (resume, error) {
	for i, rs := range res.ranges {
		if len(rs) == 0 {
			continue
		}
		var err error
		if res.ranges[i], err = trustedRanges(ctx, src, plans[i], rs); err != nil {
			return resume{}, err
		}
	}
	return res, nil
}
