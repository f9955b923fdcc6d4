package plan

import (
	"context"
	"sync"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Stats reads every entity from src (snapshot begun) through the real pipeline
// into a measuring sink and returns per entity a full load's rows, items,
// rejects, sizes and write units. prog, if set, is told of the reading as
// pipeline.Run tells it.
func Stats(ctx context.Context, src *extract.Source, m *mapping.Mapping, plans []*transform.Plan, prog pipeline.Progress) ([]EntityStatsRow, error) {
	ms := &measureSink{m: m, acc: make([]acc, len(plans))}
	rejects := map[string][]RejectReason{}
	onReject := func(r pipeline.Reject) error {
		rs := rejects[r.Entity]
		for i := range rs {
			if rs[i].Reason == r.Reason && rs[i].Column == r.Column {
				rs[i].Rows++
				return nil
			}
		}
		if len(rs) < MaxRejectReasons {
			rejects[r.Entity] = append(rs, RejectReason{Reason: r.Reason, Column: r.Column, Rows: 1, Example: r.SourceKey})
		}
		return nil
	}
	// One reader and writer: example keys are the first rows', and rejects come
	// from one goroutine.
	sum, err := pipeline.Run(ctx, pipeline.Postgres(src), m, plans, ms, pipeline.Options{Concurrency: 1, Readers: 1, Progress: prog, OnReject: onReject})
	if err != nil {
		return nil, err
	}
	out := make([]EntityStatsRow, len(plans))
	for i, e := range sum.Entities {
		a := ms.acc[i]
		out[i] = EntityStatsRow{Entity: e.Name, Rows: e.Rows, Items: a.items, Rejected: e.Rejected,
			MaxItemBytes: a.max, WriteUnits: a.wcu, ExportBytes: a.json, ExampleKey: a.example, Rejects: rejects[e.Name]}
		if a.items > 0 {
			out[i].AvgItemBytes = (a.bytes + a.items/2) / a.items
		}
	}
	return out, nil
}

type acc struct {
	items, bytes, max, wcu, json int64
	example                      []string
}

// measureSink writes nothing; it sizes each item and its GSI projections.
type measureSink struct {
	m   *mapping.Mapping
	mu  sync.Mutex
	acc []acc
}

func (s *measureSink) Write(_ context.Context, batch []transform.Item) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, it := range batch {
		a := &s.acc[it.Entity]
		n := int64(transform.ItemSize(it.Attrs))
		a.items++
		a.bytes += n
		a.max = max(a.max, n)
		a.wcu += transform.WriteUnits(s.m, it.Attrs)
		a.json += ddbjson.LineBytes(it.Attrs)
		if a.example == nil {
			k := transform.ItemKey(it.Attrs, s.m.Table.Keys())
			a.example = k[:]
		}
	}
	return nil
}
