package pipeline

import (
	"context"
	"fmt"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// RowSource is what Run reads: the rows of one consistent snapshot of the
// source database. Postgres adapts an *extract.Source, the real one; tests
// of the pipeline's logic use fakes. A RowSource is used by one goroutine
// at a time; parallel readers each use their own Fork.
type RowSource interface {
	// Count returns the number of rows of e's source in the snapshot
	// (PostgreSQL's count(*)).
	Count(ctx context.Context, e *mapping.Entity) (int64, error)
	// Positions returns the positions of q's rows numbered at (from 1,
	// in q's order within its After and Until), in one statement:
	// out[j] is row at[j]'s, nil past q's last row. q reads in order
	// (q.OrderBy set).
	Positions(ctx context.Context, q extract.Query, at []int64) ([][]string, error)
	// CountRange returns the number of rows Stream(ctx, name, q, …) would
	// read (a resumed entity's rows left to read).
	CountRange(ctx context.Context, name string, q extract.Query) (int64, error)
	// CanonicalPosition reads pos back as values of q's OrderBy columns
	// and returns their text again; ok is false when the source refuses
	// pos (see trustedRanges).
	CanonicalPosition(ctx context.Context, q extract.Query, pos []string) (canon []string, ok bool, err error)
	// Stream calls fn with the values of each row q reads, in q's order,
	// bounded by q.After and q.Until; values are valid only during the
	// call. An error from fn stops the read and is returned; name is the
	// entity's, for errors.
	Stream(ctx context.Context, name string, q extract.Query, fn func(values []any) error) error
	// Fork opens another reader of the same snapshot, for a parallel
	// reader. The fork must be closed; the RowSource forked stays open
	// until then.
	Fork(ctx context.Context) (RowSource, error)
	// Close ends a fork's session.
	Close(ctx context.Context) error
}

// Postgres returns src, a PostgreSQL source whose snapshot has begun
// (extract.Source.Begin), as a RowSource; its forks share the snapshot
// (extract.Source.Fork).
func Postgres(src *extract.Source) RowSource { return pgSource{src} }

type pgSource struct{ *extract.Source }

func (s pgSource) CountRange(ctx context.Context, name string, q extract.Query) (int64, error) {
	n, err := s.Source.CountRange(ctx, q)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return n, nil
}

func (s pgSource) Fork(ctx context.Context) (RowSource, error) {
	f, err := s.Source.Fork(ctx)
	if err != nil {
		return nil, err
	}
	return pgSource{f}, nil
}
