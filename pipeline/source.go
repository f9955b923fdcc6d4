package pipeline

import (
	"context"
	"fmt"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// RowSource is the rows of one snapshot of the source: Postgres, or test fakes.
// One goroutine at a time uses it; parallel readers use their own Forks.
type RowSource interface {
	// Count is PostgreSQL's count(*) of e's source in the snapshot.
	Count(ctx context.Context, e *mapping.Entity) (int64, error)
	// Positions returns in one statement the positions of q's rows numbered at
	// (from 1, within After and Until; nil past the end). q is ordered.
	Positions(ctx context.Context, q extract.Query, at []int64) ([][]string, error)
	// CountRange counts the rows Stream(ctx, name, q, …) would read.
	CountRange(ctx context.Context, name string, q extract.Query) (int64, error)
	// CanonicalPosition reads pos back and returns its text; ok false if
	// refused.
	CanonicalPosition(ctx context.Context, q extract.Query, pos []string) (canon []string, ok bool, err error)
	// Stream calls fn with each row q reads, in order; values live only during
	// the call. fn's error stops and is returned.
	Stream(ctx context.Context, name string, q extract.Query, fn func(values []any) error) error
	// Fork opens another reader of the snapshot; close it before its source.
	Fork(ctx context.Context) (RowSource, error)
	// Close ends a fork's session.
	Close(ctx context.Context) error
}

// Postgres adapts src, whose snapshot has begun; its forks share it.
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
