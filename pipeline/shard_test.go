package pipeline_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv/prepare"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// idSink keeps the ids of entity B's rows written; with failOn set, it fails
// the first batch of that entity instead, as a crash would.
type idSink struct {
	mu     sync.Mutex
	failOn int
	b      []int32
}

func (s *idSink) Write(_ context.Context, batch []transform.Item) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, it := range batch {
		if it.Entity == s.failOn {
			return errSinkDown
		}
	}
	for _, it := range batch {
		if it.Entity == 1 {
			s.b = append(s.b, it.Row[0].(int32))
		}
	}
	return nil
}

// Shard 2 of 3 stops after A is written, before any batch of B is: its
// checkpoint holds B's range as planned, before the read. Rows are then
// inserted into b, and the shard resumes in a new snapshot: it reads its
// planned range of B, not one cut again from the new count(*), so the three
// shards read each of b's first 300 rows once (a range cut again read
// (110, 220]: rows 101 to 110 by no shard).
func TestShardResumeReadsItsPlannedRange(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE a (id integer PRIMARY KEY); CREATE TABLE b (id integer PRIMARY KEY);
		INSERT INTO a SELECT generate_series(1, 300); INSERT INTO b SELECT generate_series(1, 300);`)
	m := prepare.Mapping(t, "s.yaml", "table: {name: shards}\nentities:\n  A:\n    source: {table: a}\n    pk: A#${id}\n    sk: A\n"+
		"  B:\n    source: {table: b}\n    pk: B#${id}\n    sk: B\n")
	run := func(shard int, sink *idSink, cp *pipeline.Checkpoint) (*pipeline.Checkpoint, error) {
		t.Helper()
		src, plans := prepare.Source(t, url, m)
		if cp == nil {
			cp = pipeline.NewCheckpoint("fp", src.Name(), "shards", plans)
		}
		_, err := pipeline.Run(context.Background(), pipeline.Postgres(src), m, plans, sink,
			pipeline.Options{Concurrency: 1, Readers: 1, Checkpoint: cp, Shard: pipeline.Shard{Index: shard, Count: 3}})
		return cp, err
	}
	read := map[int32]int{}
	for _, shard := range []int{1, 3} {
		sink := &idSink{failOn: -1}
		if _, err := run(shard, sink, nil); err != nil {
			t.Fatal(err)
		}
		for _, id := range sink.b {
			read[id]++
		}
	}
	cp, err := run(2, &idSink{failOn: 1}, nil)
	if !errors.Is(err, errSinkDown) || !cp.Entities["A"].Done || cp.Entities["B"].Done {
		t.Fatalf("shard 2: error %v, checkpoint %+v %+v; want the sink's error with A done, B not", err, cp.Entities["A"], cp.Entities["B"])
	}
	saved, err := cp.Encode(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if cp, err = pipeline.DecodeCheckpoint(saved); err != nil {
		t.Fatal(err)
	}
	planned := cp.Entities["B"].Ranges
	testenv.Exec(t, url, `INSERT INTO b SELECT generate_series(301, 330)`)
	sink := &idSink{failOn: -1}
	if _, err := run(2, sink, cp); err != nil {
		t.Fatal(err)
	}
	for _, id := range sink.b {
		read[id]++
	}
	for id := int32(1); id <= 300; id++ {
		if read[id] != 1 {
			t.Errorf("row %d of b read %d times by the shards, want once (shard 2 resumed B's ranges %+v)", id, read[id], planned)
			break
		}
	}
}
