// Package pipeline runs a migration: readers, each on its own connection
// to one exported PostgreSQL snapshot, read every entity (a large table
// split into primary-key ranges), convert rows to items and hand them in
// batches to the writers of a Writes over a bounded queue, so a slow sink
// slows the readers and memory stays flat. Every source row ends up
// written or listed as rejected with its reason; the Summary reconciles the
// two.
//
// The parts, each in its own file: the rows come from a RowSource
// (source.go: an extract.Source, or a fake in tests); schedule.go cuts the
// entities into parts and tasks; a reader (reader.go) reads one task at a
// time, converts rows (transform) and checks their keys (dupcheck.go), and
// hands the rows of each part to a Group of a Writes (writes.go, the write
// stage of every writing command; autorun.go for --concurrency auto),
// which packs whole rows into batches of up to 25 items (batch.go), hands
// each to the load.Sink and turns failed items into rejects; the
// acknowledger (ack.go) receives, in order, every
// reject and acknowledgement and alone calls the callbacks of Options and
// records positions in the Checkpoint (checkpoint.go); stop.go holds the
// stopping rules and stats.go the counts.
package pipeline

import (
	"encoding/base64"
	"fmt"
	"time"

	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// DefaultConcurrency is the default number of parallel writers of a
// fixed number (Options.Concurrency, WritesOptions.Concurrency).
const DefaultConcurrency = 8

// Reject is one source row that was not written, as one line of the
// rejects file (JSON Lines).
type Reject struct {
	Entity string `json:"entity"`
	// SourceKey holds the row's values of its table's primary key and of
	// the columns its key templates use (nil for NULL).
	SourceKey map[string]any `json:"source_key"`
	// ItemKey is the item's primary key, when one was rendered.
	ItemKey map[string]string `json:"item_key,omitempty"`
	Column  string            `json:"column,omitempty"`
	Reason  string            `json:"reason"`
	// Deleted are the keys of the items a follow deleted from the table
	// for the row, which a change made a reject: the items it had before,
	// which a full load would not write (deleting a key the row never
	// had an item of changes nothing). Empty in a full load.
	Deleted []map[string]string `json:"deleted,omitempty"`
}

// RowReject is the reject of a row that could not become items.
func RowReject(re *transform.RowError) Reject {
	return Reject{Entity: re.Entity, SourceKey: re.SourceKey, Column: re.Column, Reason: re.Reason}
}

// Progress receives counts as the run goes, from one goroutine (see
// Options).
type Progress interface {
	// Plan is called once, before any row is read, with every entity of
	// the run in the mapping's order.
	Plan(entities []PlannedEntity)
	// Start is called when entity's first rows are read.
	Start(entity string)
	// Advance reports that rows more rows of entity are finished (written
	// or rejected), which put items items in the table: two per row with
	// a mirror, none for a rejected row.
	Advance(entity string, rows, items int)
}

// WritersProgress is a Progress that is also told how many writers an
// Autoscale run has: at the start, and at each change (from the same
// goroutine as the other calls).
type WritersProgress interface {
	Progress
	Writers(n int)
}

// PlannedEntity is one entity of a run, as Progress.Plan is told of it.
type PlannedEntity struct {
	Name string
	// Rows is the number of the entity's rows this run reads, in the
	// snapshot: PostgreSQL's count(*) of its source; on a shard, of the
	// shard's range (see Shard); resuming from a Checkpoint, of the
	// ranges it records as left (or the whole count, when Done).
	Rows int64
	// Done is set when the run's Checkpoint records the entity written
	// (a resumed run): it is not read.
	Done bool
	// Unit is what Rows and the progress count, in the plural ("": rows);
	// "items" for a table's Scan or an import DynamoDB runs.
	Unit string
}

// Options tune Run. The zero value is usable.
//
// Run calls OnReject, Progress and OnCheckpoint from one goroutine, one
// call at a time, in the order of what they report, and holds no lock
// that readers or writers wait on while they run: a slow callback slows
// the run through the bounded queue to it, and a failing one stops the
// run.
type Options struct {
	// keysUnique proves which entities' keys are unique
	// (transform.KeysUnique); tests force it to check what Run does when
	// a proof is wrong.
	keysUnique func(*mapping.Mapping, []*transform.Plan) []bool
	// Concurrency is the number of parallel writers (default
	// DefaultConcurrency); ignored with Auto.
	Concurrency int
	// Auto, if not nil, lets the run choose its number of writers as it
	// goes, and pace them: see Autoscale and Autoscaler. The sink's
	// throttled requests count when it is a load.ThrottleCounter.
	Auto *Autoscale
	// OnReject is called for every rejected row, before the
	// acknowledgement of the batch the row was read in reaches the
	// Checkpoint. An error from it stops the run. Nil discards rejects
	// (they are still counted).
	OnReject func(Reject) error
	// Progress, if not nil, is told of each entity's progress.
	Progress Progress
	// Readers is the number of connections reading and transforming in
	// parallel, all on one snapshot (default 1). See Run.
	Readers int
	// MinRangeRows is the fewest rows of each primary-key range when an
	// entity's read is split across Readers (default MinRangeRows).
	MinRangeRows int64
	// SkipDuplicateCheck turns off the run-wide check that no two rows
	// render the same primary key (11 to 21 bytes of memory per item of
	// the entities whose keys transform.KeysUnique cannot prove unique,
	// which are then read one after another; see Run). Duplicates within
	// one batch are still caught.
	SkipDuplicateCheck bool
	// Checkpoint, if not nil, is where the run records how far each
	// entity is written, and what it resumes: entities it records done
	// are not read, the others from their recorded ranges (see
	// Checkpoint). With the duplicate check, what a collision group's
	// ranges record as written is read again, to claim its keys only.
	Checkpoint *Checkpoint
	// OnCheckpoint, if set, is called each time Checkpoint changes (the
	// written prefix of one of an entity's ranges advanced), with the
	// entity's name and whether the entity is now done. The Checkpoint
	// may be read (saved) in the call and must not be kept: Run goes on
	// changing it. An error stops the run.
	OnCheckpoint func(cp *Checkpoint, entity string, done bool) error
	// WriteGrace is how long writers go on, once ctx is done, to finish
	// the batches already read (default WriteGrace).
	WriteGrace time.Duration
	// Shard, when its Count is over 1, reads only this shard's rows (see
	// Shard).
	Shard Shard
}

// Shard is shard Index (1 to Count) of a run split across Count
// processes with no coordinator. Each entity read in primary-key order is
// cut into Count ranges at equal offsets of its rows, and the shard reads
// range Index: the rows numbered after ⌊rows·(Index−1)/Count⌋ up to and
// including ⌊rows·Index/Count⌋, whose two positions it reads in one
// statement (RowSource.Positions, PostgreSQL's row_number() along the
// primary key); an entity without a primary key is read whole by one
// shard, chosen by a hash (FNV-1a) of its name. Shards reading one
// snapshot (extract.Source.BeginAt) count the same rows and compute the
// same positions, so every row is read by exactly one shard; shards
// reading snapshots of their own may disagree on positions if rows are
// inserted or deleted between them.
type Shard struct{ Index, Count int }

// MaxShards bounds a Shard's Count. Each shard is a process holding
// PostgreSQL connections of its own (the server allows 100 at once by
// default, max_connections), and an export's shards write one object or
// more each, of the 50,000 one import reads: past a thousand shards the
// server and the import, not the rows, bound the run.
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

// withDefaults returns o with its zero values replaced by the defaults.
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

// WriteGrace is how long writers go on, by default, after the run's
// context is done, to finish the batches already read.
const WriteGrace = 30 * time.Second

// EntityStats is the outcome for one entity.
type EntityStats struct {
	Name string
	// Total is the number of rows the run was to read, counted in the
	// snapshot before reading (see PlannedEntity.Rows).
	Total int64
	// Rows is the number of rows read.
	Rows int64
	// Written is the number of rows whose items (one, or two with a
	// mirror) were all written.
	Written int64
	// Items is the number of items written.
	Items int64
	// Rejected is the number of rows listed as rejected.
	Rejected int64
	// NotWritten is the number of rows read but neither written nor
	// rejected because the run stopped (an error or an interruption):
	// Rows = Written + Rejected + NotWritten.
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

// Range is one part of an entity's read, in primary-key order: the rows
// after After (from the first row when nil) up to and including Until (to
// the last row when nil). After and Until are positions (position.go:
// PostgreSQL's output text of each primary key column's value). Done
// means every row of the range is written or rejected. An entity that
// reads in no order (no primary key) has one range, without positions.
type Range struct {
	After []string `json:"after,omitempty"`
	Until []string `json:"until,omitempty"`
	Done  bool     `json:"done,omitempty"`
}

// MinRangeRows is the default fewest rows per range when an entity's read
// is split for parallel readers (Options.MinRangeRows): a table of fewer
// than twice as many rows is read by one reader.
const MinRangeRows = 20_000

// ItemKeyMap is a reject's item_key: the item's partition key value under
// keyAttrs[0] and, when the table has a sort key (keyAttrs[1] not ""), its
// sort key value under keyAttrs[1], each the key text of k
// (transform.KeyText), in base64 (standard, padded, as DynamoDB JSON
// writes B) for an attribute whose type in keyTypes is B: its bytes as
// they are would not survive JSON. Every writer's rejects name the item
// this way, so that a row rejected by a full load and by a follow reads
// the same.
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
