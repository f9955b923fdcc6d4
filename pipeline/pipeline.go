// Package pipeline runs a migration: readers on one exported PostgreSQL
// snapshot convert rows to items and hand them to the writers of a Writes over
// a bounded queue, so a slow sink slows the readers and memory stays flat.
// Every row is written or rejected; the Summary reconciles the two.
package pipeline

import (
	"encoding/base64"
	"fmt"
	"time"

	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// DefaultConcurrency is the default number of fixed writers.
const DefaultConcurrency = 8

// Reject is a row not written: a line of the rejects file (JSON Lines).
type Reject struct {
	Entity string `json:"entity"`
	// SourceKey holds the row's primary key and key-template columns (nil for
	// NULL).
	SourceKey map[string]any `json:"source_key"`
	// ItemKey is the item's primary key, when one was rendered.
	ItemKey map[string]string `json:"item_key,omitempty"`
	Column  string            `json:"column,omitempty"`
	Reason  string            `json:"reason"`
	// Deleted are the items a follow deleted for a row a change rejected;
	// empty in a full load.
	Deleted []map[string]string `json:"deleted,omitempty"`
}

// RowReject is the reject of a row that could not become items.
func RowReject(re *transform.RowError) Reject {
	return Reject{Entity: re.Entity, SourceKey: re.SourceKey, Column: re.Column, Reason: re.Reason}
}

// Progress receives counts as the run goes, from one goroutine (see Options).
type Progress interface {
	// Plan is called once, before any row is read, with every entity in
	// mapping order.
	Plan(entities []PlannedEntity)
	// Start is called when entity's first rows are read.
	Start(entity string)
	// Advance reports rows of entity finished (written or rejected), with
	// items.
	Advance(entity string, rows, items int)
}

// WritersProgress is a Progress also told an Autoscale run's writers, at the
// start and at each change, from the goroutine of its other calls.
type WritersProgress interface {
	Progress
	Writers(n int)
}

// PlannedEntity is one entity of a run, as Progress.Plan is told of it.
type PlannedEntity struct {
	Name string
	// Rows is the count(*) of the rows this run reads (shard, resume).
	Rows int64
	// Done is set when the Checkpoint records the entity written: it is not
	// read.
	Done bool
	// Unit is what Rows counts ("": rows; "items" for a Scan or import).
	Unit string
}

// Options tune Run; the zero value is usable. Run calls OnReject, Progress and
// OnCheckpoint from one goroutine, in order, holding no lock: a slow callback
// slows the run, a failing one stops it.
type Options struct {
	keysUnique func(*mapping.Mapping, []*transform.Plan) []bool
	// Concurrency is the number of writers (default DefaultConcurrency);
	// ignored with Auto.
	Concurrency int
	// Auto, if set, has an Autoscaler choose and pace the writers.
	Auto *Autoscale
	// OnReject gets each rejected row before its batch reaches the Checkpoint;
	// nil discards rejects (still counted).
	OnReject func(Reject) error
	// Progress, if set, is told of each entity's progress.
	Progress Progress
	// Readers is the number of connections reading in parallel on one
	// snapshot (default 1).
	Readers int
	// MinRangeRows is the fewest rows of a range split across Readers (default
	// MinRangeRows).
	MinRangeRows int64
	// SkipDuplicateCheck turns off the run-wide check that no two rows render
	// one primary key (11 to 21 bytes an item not proven unique; such entities
	// are read one after another). Batches are still checked.
	SkipDuplicateCheck bool
	// Checkpoint, if set, records how far each entity is written; Run resumes
	// it.
	Checkpoint *Checkpoint
	// OnCheckpoint is called at each change of Checkpoint, with the entity and
	// whether it is done (entity "": the plan, before any read); it may save
	// cp, not keep it.
	OnCheckpoint func(cp *Checkpoint, entity string, done bool) error
	// WriteGrace is how long writers finish the batches read after ctx is done
	// (default WriteGrace).
	WriteGrace time.Duration
	// Shard, when its Count is over 1, reads only this shard's rows.
	Shard Shard
}

// Shard is shard Index (1 to Count) of a run split across processes with no
// coordinator: each entity is cut at equal offsets of its rows in primary-key
// order; one without a primary key goes whole to the shard an FNV-1a hash of
// its name picks. Shards on one snapshot read every row once.
type Shard struct{ Index, Count int }

// MaxShards bounds a Shard's Count: each shard holds PostgreSQL connections and
// writes export objects of its own (an import reads at most 50,000).
const MaxShards = 1024

// ParseShard parses "i/N": 1 ≤ i ≤ N ≤ MaxShards.
func ParseShard(text string) (Shard, error) {
	var sh Shard
	if _, err := fmt.Sscanf(text, "%d/%d", &sh.Index, &sh.Count); err != nil || fmt.Sprintf("%d/%d", sh.Index, sh.Count) != text ||
		sh.Count < 1 || sh.Index < 1 || sh.Index > sh.Count {
		return Shard{}, fmt.Errorf("shard %q: expected i/N with 1 ≤ i ≤ N, e.g. 2/3", text)
	}
	if sh.Count > MaxShards {
		return Shard{}, fmt.Errorf("shard %q: at most %d shards: each is a process with PostgreSQL connections of its own (max_connections is 100 by default), and each shard of an export writes objects of its own (one import reads at most 50,000); use fewer shards, each with more --readers",
			text, MaxShards)
	}
	return sh, nil
}

// On reports whether the run is split (Count over 1).
func (sh Shard) On() bool { return sh.Count > 1 }

// String is "i/N".
func (sh Shard) String() string { return fmt.Sprintf("%d/%d", sh.Index, sh.Count) }

func (o Options) withDefaults() Options {
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	o.Readers = max(o.Readers, 1)
	if o.MinRangeRows <= 0 {
		o.MinRangeRows = MinRangeRows
	}
	if o.WriteGrace <= 0 {
		o.WriteGrace = WriteGrace
	}
	if o.keysUnique == nil {
		o.keysUnique = transform.KeysUnique
	}
	return o
}

// WriteGrace is Options.WriteGrace's default.
const WriteGrace = 30 * time.Second

// EntityStats is the outcome for one entity.
type EntityStats struct {
	Name string
	// Total is the rows the run was to read (PlannedEntity.Rows).
	Total int64
	// Rows is the number of rows read.
	Rows int64
	// Written is the rows whose items were all written.
	Written int64
	// Items is the number of items written.
	Items int64
	// Rejected is the number of rows listed as rejected.
	Rejected int64
	// NotWritten is rows read but not settled: Rows = Written + Rejected +
	// NotWritten.
	NotWritten int64
	// Elapsed runs from the first row read to the last write acknowledged.
	Elapsed time.Duration
}

// Summary is the outcome of a run, entities in mapping order.
type Summary struct {
	Entities []EntityStats
	Elapsed  time.Duration
	// Autoscale is an Autoscale run's writers (nil for a fixed number).
	Autoscale *AutoscaleSummary
}

// Total sums the per-entity counts (Name "total", Elapsed of the run).
func (s *Summary) Total() EntityStats {
	t := EntityStats{Name: "total", Elapsed: s.Elapsed}
	for _, e := range s.Entities {
		t.Total += e.Total
		t.Rows += e.Rows
		t.Written += e.Written
		t.Items += e.Items
		t.Rejected += e.Rejected
		t.NotWritten += e.NotWritten
	}
	return t
}

// Range is the rows after After (nil: from the first) up to and including Until
// (nil: to the last), as positions (position.go). An unordered entity has one.
// From is where it was planned to begin: where a replay, or a read after an
// untrusted After, begins.
type Range struct {
	After []string `json:"after,omitempty"`
	Until []string `json:"until,omitempty"`
	Done  bool     `json:"done,omitempty"`
	From  []string `json:"from,omitempty"`
}

// lower is where rs[k] begins: its From, else the previous range's Until.
func lower(rs []Range, k int) []string {
	switch {
	case rs[k].From != nil:
		return rs[k].From
	case k > 0:
		return rs[k-1].Until
	}
	return nil
}

// MinRangeRows is Options.MinRangeRows' default.
const MinRangeRows = 20_000

// ItemKeyMap is a reject's item_key: key values under keyAttrs, B-typed ones in
// padded standard base64 (as DynamoDB JSON writes B).
func ItemKeyMap(k [2]string, keyAttrs, keyTypes [2]string) map[string]string {
	text := func(i int) string {
		if keyTypes[i] == "B" {
			return base64.StdEncoding.EncodeToString([]byte(k[i]))
		}
		return k[i]
	}
	m := map[string]string{keyAttrs[0]: text(0)}
	if keyAttrs[1] != "" {
		m[keyAttrs[1]] = text(1)
	}
	return m
}
