package pipeline

import (
	"context"
	"fmt"
	"slices"

	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Positions. A read in primary-key order records where it stands as a position:
// per key column, PostgreSQL's output text under extract.SessionSettings.
// PostgreSQL renders every position and binds it back through the type's input
// function ($1::text::bytea), so a position is the very value it was read from.

// trustedRanges restarts from its start (lower) a range whose After PostgreSQL
// does not read back as the same text: reading again is safe, skipping is not.
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
		out[i].After = lower(out, i)
	}
	return out, nil
}

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
