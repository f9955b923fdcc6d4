package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv/prepare"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

const twoEntities = `table: {name: snap}
entities:
  A:
    source: {table: a}
    pk: A#${id}
    sk: A
  B:
    source: {table: b}
    pk: B#${id}
    sk: B
`

// recordSink keeps the items written.
type recordSink struct {
	mu    sync.Mutex
	items []transform.Item
}

func (s *recordSink) Write(_ context.Context, batch []transform.Item) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = append(s.items, batch...)
	return nil
}

func setup(t *testing.T, yaml string) (*extract.Source, *mapping.Mapping, []*transform.Plan, string) {
	t.Helper()
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE a (id integer PRIMARY KEY); CREATE TABLE b (id integer PRIMARY KEY, x text);
		INSERT INTO a SELECT generate_series(1, 100); INSERT INTO b SELECT generate_series(1, 100);
		CREATE FUNCTION wipe_b() RETURNS integer LANGUAGE sql AS 'DELETE FROM b; SELECT 1';`)
	m := prepare.Mapping(t, "snap.yaml", yaml)
	src, plans := prepare.Source(t, url, m)
	return src, m, plans, url
}

// startHook is a Progress that runs hook when the first entity starts,
// after the run has counted rows (its first statement fixes the snapshot)
// and before any row is read.
type startHook struct {
	once sync.Once
	hook func()
}

func (p *startHook) Plan([]pipeline.PlannedEntity) {}
func (p *startHook) Start(string)                  { p.once.Do(p.hook) }
func (p *startHook) Advance(string, int, int)      {}

// Every entity is read from the snapshot taken when the run began: rows
// committed while the run is under way do not appear, in any entity, and
// rows deleted meanwhile are still read.
func TestRunReadsOneSnapshot(t *testing.T) {
	src, m, plans, url := setup(t, twoEntities)
	writer := testenv.Connect(t, url)
	hook := &startHook{hook: func() {
		if _, err := writer.Exec(context.Background(), "INSERT INTO b SELECT generate_series(101, 150); DELETE FROM a WHERE id > 90"); err != nil {
			t.Error(err)
		}
	}}
	sink := &recordSink{}
	sum, err := pipeline.Run(context.Background(), pipeline.Postgres(src), m, plans, sink, pipeline.Options{Concurrency: 2, Progress: hook})
	if err != nil {
		t.Fatal(err)
	}
	perType := map[int]int{}
	for _, it := range sink.items {
		perType[it.Entity]++
	}
	if perType[0] != 100 || perType[1] != 100 {
		t.Errorf("items per entity = %v, want 100 A and 100 B as of the snapshot", perType)
	}
	for _, e := range sum.Entities {
		if e.Total != 100 || e.Rows != 100 || e.Written != 100 || e.Rejected != 0 {
			t.Errorf("summary %+v, want 100 counted, read and written", e)
		}
	}
}

// The snapshot is read-only: a query source that writes (here through a
// function) is refused by PostgreSQL, and nothing is changed.
func TestRunIsReadOnly(t *testing.T) {
	src, m, plans, url := setup(t, strings.Replace(twoEntities, "source: {table: b}",
		`source: {query: "SELECT wipe_b() AS id"}`, 1))
	_, err := pipeline.Run(context.Background(), pipeline.Postgres(src), m, plans, &recordSink{}, pipeline.Options{})
	if err == nil || !strings.Contains(err.Error(), "read-only transaction") {
		t.Fatalf("Run error = %v, want PostgreSQL's read-only refusal", err)
	}
	var n int
	if err := testenv.Connect(t, url).QueryRow(context.Background(), "SELECT count(*) FROM b").Scan(&n); err != nil || n != 100 {
		t.Errorf("b has %d rows (err %v), want 100 untouched", n, err)
	}
}

// failSink writes the first ok batches, then fails every later write.
type failSink struct {
	recordSink
	mu sync.Mutex
	ok int
}

func (s *failSink) Write(ctx context.Context, batch []transform.Item) error {
	s.mu.Lock()
	if s.ok == 0 {
		s.mu.Unlock()
		return errors.New("sink down")
	}
	s.ok--
	s.mu.Unlock()
	return s.recordSink.Write(ctx, batch)
}

// A sink failure stops the run with that error instead of hanging the
// reader, and the summary accounts for every row read.
func TestRunStopsOnSinkFailure(t *testing.T) {
	src, m, plans, _ := setup(t, strings.Replace(twoEntities, "source: {table: a}",
		`source: {query: "SELECT generate_series(1, 5000) AS id"}`, 1))
	sink := &failSink{ok: 2}
	sum, err := pipeline.Run(context.Background(), pipeline.Postgres(src), m, plans, sink, pipeline.Options{Concurrency: 1})
	if err == nil || err.Error() != "sink down" {
		t.Fatalf("Run error = %v, want the sink's", err)
	}
	total := sum.Total()
	if total.Written != 50 || int(total.Written) != len(sink.items) {
		t.Errorf("summary says %d written, the sink holds %d; want 50 (two batches)", total.Written, len(sink.items))
	}
	if total.Rows != total.Written+total.Rejected+total.NotWritten || total.NotWritten == 0 {
		t.Errorf("summary does not reconcile: %+v", total)
	}
}

// A PostgreSQL error part-way through an entity stops the reading; the rows
// read before it are still written, and the error names the entity.
func TestRunWritesRowsReadBeforeAReadError(t *testing.T) {
	src, m, plans, _ := setup(t, strings.Replace(twoEntities, "source: {table: a}",
		`source: {query: "SELECT id, 1 / (id - 70) AS x FROM a ORDER BY id"}`, 1))
	sink := &recordSink{}
	sum, err := pipeline.Run(context.Background(), pipeline.Postgres(src), m, plans, sink, pipeline.Options{Concurrency: 2})
	if err == nil || !strings.Contains(err.Error(), "read A after 69 rows") || !strings.Contains(err.Error(), "division by zero") {
		t.Fatalf("Run error = %v, want the read error of entity A after 69 rows", err)
	}
	if a := sum.Entities[0]; a.Rows != 69 || a.Written != 69 || a.NotWritten != 0 || len(sink.items) != 69 {
		t.Errorf("entity A: %+v and %d items in the sink; want 69 read and written", a, len(sink.items))
	}
}

// An error from the rejects callback (a full disk, say) stops the run.
func TestRunStopsWhenRejectsCannotBeRecorded(t *testing.T) {
	src, m, plans, _ := setup(t, strings.Replace(twoEntities, "pk: B#${id}", "pk: B#${x}", 1))
	_, err := pipeline.Run(context.Background(), pipeline.Postgres(src), m, plans, &recordSink{}, pipeline.Options{
		OnReject: func(pipeline.Reject) error { return errors.New("disk full") },
	})
	if err == nil || err.Error() != "disk full" {
		t.Fatalf("Run error = %v, want the callback's", err)
	}
}

// Parallel readers split a large table into primary-key ranges (a
// composite key here) and read them on other connections, all from the
// snapshot the run began with: rows deleted and inserted once reading has
// begun change nothing, on any reader. Every row is read exactly once.
func TestParallelReadersShareOneSnapshot(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE c (g integer, id integer, PRIMARY KEY (g, id));
		INSERT INTO c SELECT i % 3, i FROM generate_series(1, 60000) i;`)
	ctx := context.Background()
	m := prepare.Mapping(t, "c.yaml", "table: {name: ccc}\nentities:\n  C:\n    source: {table: c}\n    pk: C#${g}\n    sk: C#${id}\n")
	src, plans := prepare.Source(t, url, m)
	writer := testenv.Connect(t, url)
	hook := &startHook{hook: func() {
		if _, err := writer.Exec(ctx, "DELETE FROM c; INSERT INTO c SELECT 9, generate_series(1, 100)"); err != nil {
			t.Error(err)
		}
	}}
	sink := &recordSink{}
	cp := pipeline.NewCheckpoint("fp", src.Name(), "ccc", plans)
	sum, err := pipeline.Run(ctx, pipeline.Postgres(src), m, plans, sink, pipeline.Options{Concurrency: 2, Readers: 3, Progress: hook,
		Checkpoint: cp})
	last := cp.Entities["C"].Ranges
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, it := range sink.items {
		seen[testenv.CanonicalItem(it.Attrs)]++
	}
	if len(seen) != 60000 || len(sink.items) != 60000 {
		t.Errorf("%d items, %d distinct; want the 60000 rows of the snapshot once each", len(sink.items), len(seen))
	}
	if e := sum.Entities[0]; e.Rows != 60000 || e.Written != 60000 {
		t.Errorf("summary %+v, want 60000 read and written", e)
	}
	if len(last) != 3 {
		t.Fatalf("ranges %v, want 3 (one per reader)", last)
	}
	for i, r := range last {
		if !r.Done || (i < 2) != (r.Until != nil) || (i == 1 && slices.Compare(r.Until, last[0].Until) <= 0) {
			t.Errorf("range %d = %+v: want done, ending after range %d, open-ended only last", i, r, i-1)
		}
	}
}

// Arrays keep their dimensions (pgx's Values would flatten them), NULL
// elements, and emptiness; a NULL array is no attribute.
func TestArraysKeepTheirShape(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE arr (id integer PRIMARY KEY, m integer[][], t text[]);
		INSERT INTO arr VALUES (1, '{{1,2},{3,4},{5,6}}', '{a,NULL,c}'), (2, '{}', '{}'), (3, NULL, NULL);`)
	ctx := context.Background()
	m := prepare.Mapping(t, "arr.yaml", "table: {name: arr}\nentities:\n  A:\n    source: {table: arr}\n    pk: A#${id}\n    sk: A\n")
	src, plans := prepare.Source(t, url, m)
	sink := &recordSink{}
	if _, err := pipeline.Run(ctx, pipeline.Postgres(src), m, plans, sink, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range sink.items {
		got = append(got, testenv.CanonicalItem(it.Attrs))
	}
	slices.Sort(got)
	want := []string{
		`{"PK":{"S":"A#0000000001"},"SK":{"S":"A"},"id":{"N":"1"},"m":{"L":[{"L":[{"N":"1"},{"N":"2"}]},{"L":[{"N":"3"},{"N":"4"}]},{"L":[{"N":"5"},{"N":"6"}]}]},"t":{"L":[{"S":"a"},{"NULL":true},{"S":"c"}]},"type":{"S":"A"}}`,
		`{"PK":{"S":"A#0000000002"},"SK":{"S":"A"},"id":{"N":"2"},"m":{"L":[]},"t":{"L":[]},"type":{"S":"A"}}`,
		`{"PK":{"S":"A#0000000003"},"SK":{"S":"A"},"id":{"N":"3"},"type":{"S":"A"}}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("items:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// batchKeySink keeps the items written, and counts the batches holding two
// puts of one primary key: BatchWriteItem refuses those
// (ValidationException), and putting their items one by one silently
// keeps only the last.
type batchKeySink struct {
	recordSink
	dupBatches int
}

func (s *batchKeySink) Write(ctx context.Context, batch []transform.Item) error {
	seen := map[[2]string]bool{}
	for _, it := range batch {
		k := [2]string{testenv.CanonicalValue(it.Attrs["PK"]), testenv.CanonicalValue(it.Attrs["SK"])}
		if seen[k] {
			s.mu.Lock()
			s.dupBatches++
			s.mu.Unlock()
			break
		}
		seen[k] = true
	}
	return s.recordSink.Write(ctx, batch)
}

// An entity whose keys are proven unique still has each batch checked:
// were the proof wrong (here it is forced), two rows of one key in one
// batch would reach BatchWriteItem. The later is rejected, naming the
// earlier, with the run-wide check on or off.
func TestBatchCheckedWhenKeysProvenUnique(t *testing.T) {
	proven := func(_ *mapping.Mapping, plans []*transform.Plan) []bool {
		return slices.Repeat([]bool{true}, len(plans))
	}
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE c (id integer PRIMARY KEY, code text);
		INSERT INTO c VALUES (1, 'k'), (2, 'k'), (3, 'm');`)
	ctx := context.Background()
	m := prepare.Mapping(t, "c.yaml", "table: {name: ccc}\nentities:\n  C:\n    source: {table: c}\n    pk: C#${code}\n    sk: C\n")
	for _, skip := range []bool{false, true} {
		t.Run(fmt.Sprintf("SkipDuplicateCheck=%v", skip), func(t *testing.T) {
			src, plans := prepare.Source(t, url, m)
			sink := &batchKeySink{}
			var rejects []pipeline.Reject
			sum, err := pipeline.Run(ctx, pipeline.Postgres(src), m, plans, sink, pipeline.WithKeysUnique(pipeline.Options{SkipDuplicateCheck: skip,
				OnReject: func(r pipeline.Reject) error { rejects = append(rejects, r); return nil }}, proven))
			if err != nil {
				t.Fatal(err)
			}
			if sink.dupBatches > 0 {
				t.Errorf("%d batches hold two puts of one key", sink.dupBatches)
			}
			want := []pipeline.Reject{{Entity: "C", SourceKey: map[string]any{"id": "2", "code": "k"},
				ItemKey: map[string]string{"PK": "C#k", "SK": "C"},
				Reason:  `duplicate primary key (PK "C#k", SK "C"): row (code=k, id=1) of entity C keeps it`}}
			if d := cmp.Diff(want, rejects); d != "" {
				t.Errorf("rejects (-want +got):\n%s", d)
			}
			if c := sum.Entities[0]; c.Written != 2 || c.Rejected != 1 || len(sink.items) != 2 {
				t.Errorf("summary %+v and %d items written, want 2 written and 1 rejected", c, len(sink.items))
			}
		})
	}
}

// A row that collides with an earlier row of another entity of its
// collision group is rejected with a reason naming the key and that
// entity, the group's second here (its first is A, and P is in none).
func TestCollisionReasonNamesKeeper(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE t (id integer PRIMARY KEY, x text);
		INSERT INTO t VALUES (1, 'B#1'), (2, 'z');`)
	ctx := context.Background()
	m := prepare.Mapping(t, "t.yaml", `table: {name: keeper}
entities:
  P: {source: {table: t}, pk: "P#${id}", sk: P}
  A: {source: {table: t}, pk: "K#A#${id}", sk: X}
  B: {source: {table: t}, pk: "K#${x}", sk: X}
  C: {source: {table: t}, pk: "K#B#${id:0}", sk: X}
`)
	src, plans := prepare.Source(t, url, m)
	var rejects []pipeline.Reject
	if _, err := pipeline.Run(ctx, pipeline.Postgres(src), m, plans, &recordSink{}, pipeline.Options{Readers: 4,
		OnReject: func(r pipeline.Reject) error { rejects = append(rejects, r); return nil }}); err != nil {
		t.Fatal(err)
	}
	want := []pipeline.Reject{{Entity: "C", SourceKey: map[string]any{"id": "1"},
		ItemKey: map[string]string{"PK": "K#B#1", "SK": "X"},
		Reason:  `duplicate primary key (PK "K#B#1", SK "X"): an earlier row of entity B keeps it`}}
	if d := cmp.Diff(want, rejects); d != "" {
		t.Errorf("rejects (-want +got):\n%s", d)
	}
}

// The shards of a split read every row exactly once between them, each
// reading (and counting in its summary) a contiguous range of its own,
// whatever the number of shards: fewer rows than shards included, on a
// composite key with a text column.
func TestShardsPartitionTheRows(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE c (g text, id integer, PRIMARY KEY (g, id));
		INSERT INTO c SELECT chr(97 + i % 3), i FROM generate_series(1, 20) i;`)
	ctx := context.Background()
	m := prepare.Mapping(t, "c.yaml", "table: {name: ccc}\nentities:\n  C:\n    source: {table: c}\n    pk: C#${g}\n    sk: C#${id}\n")
	src, plans := prepare.Source(t, url, m)
	for _, n := range []int{1, 2, 3, 7, 19, 20, 21, 50} {
		t.Run(fmt.Sprintf("%d shards", n), func(t *testing.T) {
			seen := map[string]int{}
			var order []string // the items' keys, shard after shard
			for i := 1; i <= n; i++ {
				sink := &recordSink{}
				sum, err := pipeline.Run(ctx, pipeline.Postgres(src), m, plans, sink, pipeline.Options{Concurrency: 1, Readers: 2,
					Shard: pipeline.Shard{Index: i, Count: n}})
				if err != nil {
					t.Fatal(err)
				}
				if e := sum.Entities[0]; e.Rows != int64(len(sink.items)) || e.Total != e.Rows {
					t.Errorf("shard %d/%d: %d items, summary %+v", i, n, len(sink.items), e)
				}
				for _, it := range sink.items {
					k := testenv.CanonicalItem(it.Attrs)
					seen[k]++
					order = append(order, k)
				}
			}
			if len(seen) != 20 || len(order) != 20 {
				t.Errorf("%d items, %d distinct; want the 20 rows once each", len(order), len(seen))
			}
			if !slices.IsSorted(order) {
				t.Errorf("the shards' rows, shard after shard, are not in key order: %q", order)
			}
		})
	}
}
