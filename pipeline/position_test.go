package pipeline_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv/prepare"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// failingSink keeps the items of its first ok writes, then fails every
// write.
type failingSink struct {
	mu    sync.Mutex
	ok    int
	items []transform.Item
}

var errSinkDown = errors.New("sink down")

func (s *failingSink) Write(_ context.Context, batch []transform.Item) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ok == 0 {
		return errSinkDown
	}
	s.ok--
	s.items = append(s.items, batch...)
	return nil
}

// A table keyed by bytea, whose keys pgx reads as Go byte slices: a run
// stopped after a few batches records its position, and a run resumed
// from it reads exactly the rows not yet written, none skipped. (Go's
// rendering of the key, [222 173], read back as bytea, is other bytes, and
// the resumed run skipped every row between.) A range recorded with such a
// position by an earlier version is read again from its start, so nothing
// is lost either.
func TestResumeByteaKeyLosesNothing(t *testing.T) {
	url := testenv.NewDatabase(t)
	// Keys spread over the first byte (Knuth's multiplicative hash of
	// 1…300, unique), the first batches' below and above '[' (0x5b).
	testenv.Exec(t, url, `CREATE TABLE b (k bytea PRIMARY KEY, n integer NOT NULL UNIQUE);
		INSERT INTO b SELECT decode(lpad(to_hex((i * 2654435761) % 4294967296), 8, '0'), 'hex'), i FROM generate_series(1, 300) i;`)
	m := prepare.Mapping(t, "b.yaml", "table: {name: bbb}\nentities:\n  B:\n    source: {table: b}\n    pk: B#${n}\n    sk: B\n")
	ctx := context.Background()
	run := func(t *testing.T, sink load.Sink, ranges []pipeline.Range) ([]pipeline.Range, error) {
		t.Helper()
		src, plans := prepare.Source(t, url, m)
		cp := pipeline.NewCheckpoint("fp", src.Name(), "bbb", plans)
		cp.Entities["B"].Ranges = ranges
		_, err := pipeline.Run(ctx, pipeline.Postgres(src), m, plans, sink, pipeline.Options{Concurrency: 1, Readers: 1, Checkpoint: cp})
		return cp.Entities["B"].Ranges, err
	}
	ns := func(items ...[]transform.Item) map[int32]int {
		seen := map[int32]int{}
		for _, list := range items {
			for _, it := range list {
				seen[it.Row[1].(int32)]++
			}
		}
		return seen
	}

	t.Run("resumed after a stop", func(t *testing.T) {
		first := &failingSink{ok: 3}
		ranges, err := run(t, first, nil)
		if !errors.Is(err, errSinkDown) || len(ranges) != 1 || ranges[0].Done || len(ranges[0].After) != 1 {
			t.Fatalf("first run: ranges %v, error %v; want a position after 3 batches and the sink's error", ranges, err)
		}
		second := &recordSink{}
		if _, err := run(t, second, ranges); err != nil {
			t.Fatal(err)
		}
		if got := ns(first.items, second.items); len(got) != 300 || len(second.items) != 300-len(first.items) {
			t.Errorf("after %v: %d rows written, then %d more; %d of 300 rows written in all, want each once",
				ranges[0].After, len(first.items), len(second.items), len(got))
		}
	})

	t.Run("a position in Go's rendering", func(t *testing.T) {
		sink := &recordSink{}
		if _, err := run(t, sink, []pipeline.Range{{After: []string{"[1 2]"}}}); err != nil {
			t.Fatal(err)
		}
		if got := ns(sink.items); len(got) != 300 {
			t.Errorf("%d of 300 rows read from a range recorded after [1 2]; want all, from the range's start", len(got))
		}
	})
}
