package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Options tune Compare. The zero value is usable.
type Options struct {
	// Segments is the number of parallel Scan segments (default 4).
	Segments int
	// Readers is the number of connections the source pass reads with,
	// as a full load's (pipeline.Options.Readers; 0 or 1: one). More than
	// one needs a source that exports its snapshot.
	Readers int
	// MinRangeRows is the fewest rows of a range when an entity's read is
	// split across Readers (pipeline.Options.MinRangeRows).
	MinRangeRows int64
	// Sample is the number of parameter tuples tried per access pattern
	// (default 20); all of them when the source has no more.
	Sample int
	// SampleChanged is how many changed items keep their whole before and
	// after (default 20); every changed item keeps its attribute changes.
	SampleChanged int
	// SkipPatterns leaves the access patterns out.
	SkipPatterns bool
	// IndexWait is how long, in all, access-pattern checks on a GSI that
	// do not match are queried again, as a GSI is updated asynchronously.
	// Zero or less: no second query.
	// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Writes
	IndexWait time.Duration
	// Progress, if set, is told of the source pass as pipeline.Run tells
	// it, then of the table's Scan as one entity named ScanName(table),
	// its Rows the items derived. It is called one call at a time.
	Progress pipeline.Progress
	// MaxListed is how many entries each of the Result's lists keeps
	// (default MaxListed); the counts stay exact (Result.Counts).
	MaxListed int
	// ExportBytes, if set, gives the bytes an item takes in an export
	// (ddbjson.AppendLine's DynamoDB JSON), summed per entity into
	// EntityCounts.ExportBytes: what ImportTable is priced by.
	ExportBytes func(item map[string]types.AttributeValue) int64
	// ChangeCost, if set, prices writing only the differences, per
	// entity: EntityCounts.ChangeWriteUnits and StaleWriteUnits, beside
	// WriteUnits, a full run's (diff).
	ChangeCost bool
	// InFlight, if set, says which items changes committed after the
	// check's snapshot may have changed (a follow streaming into the
	// table). Such an item that differs is counted in flight, not as a
	// mismatch, and access patterns skip it on both sides.
	InFlight InFlightFunc
	// Apply, if set, brings the table in line with the source in the same
	// pass (migrate --changes-only): each new and changed item goes to
	// Apply.Put as its bucket is compared (unless DeleteOnly); once all are
	// compared, and only when the counts agree, each stale item of a mapped
	// type goes to Apply.Delete. ReadBack then runs before the access
	// patterns. Result.Applied says what was handed over. Not with InFlight.
	Apply Applier
	// DeleteOnly hands Apply the stale items alone (migrate --prune).
	DeleteOnly bool
	// ReadBack, with Apply, reads every key put or deleted again once
	// applied (Applied.ReadBack); nil: not read back.
	ReadBack dynamodb.BatchGetItemAPIClient
	// OnReject, if set, is told of every row the source pass rejects, as
	// migrate's rejects file is (pipeline.Options.OnReject); Compare's
	// derivation only.
	OnReject func(pipeline.Reject) error
	// Types, if set, limits the table's side to the items whose type
	// attribute holds one of these values (a Scan FilterExpression, at
	// most 100 operands of IN; still charged for every item scanned). An
	// item of another type is not seen, so a derived item found missing
	// may have its key, which Apply must not overwrite. Items of a type
	// given that no entity derives are stale.
	// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Scan.html#Scan.FilterExpression
	Types []string
	// Holders, with Types, reads the key of every item found missing
	// again (BatchGetItem, 100 keys a request, Segments requests at once,
	// eventually consistent, projected to the key and type attributes:
	// half a read unit a key whose item is up to 4 KB, or absent): one
	// held by an item of a type not in Types, which the Scan did not
	// return, is counted in Result.Held. Putting the derived item there
	// would overwrite another entity's item: migrate --changes-only
	// --previous-mapping rejects it instead. Nil: not read.
	Holders dynamodb.BatchGetItemAPIClient
	// Retired are types no entity of the mapping derives any more: their
	// items are stale, deleted with Apply. Give them in Types too when
	// Types is set.
	Retired []string
}

// InFlightFunc reports whether a change committed after the check's
// snapshot may have changed the item of table key (pk, sk), as the table
// was read at readAt or before (follow.Watch.Changed). It fails on a
// replication or source error, which fails the check.
type InFlightFunc func(ctx context.Context, pk, sk string, readAt time.Time) (bool, error)

// ItemRef names an item by its primary key and type.
type ItemRef struct {
	PK   string `json:"pk"`
	SK   string `json:"sk"`
	Type string `json:"type,omitempty"`
}

// AttrChange is one attribute that differs: its value in the table
// (Before) and as the source derives it (After); null for absent.
type AttrChange struct {
	Attribute string          `json:"attribute"`
	Before    json.RawMessage `json:"before"`
	After     json.RawMessage `json:"after"`
}

// ChangedItem is an item whose content differs.
type ChangedItem struct {
	ItemRef
	Changes []AttrChange `json:"changes"`
	// Before and After are the whole items, for the first SampleChanged.
	Before json.RawMessage `json:"before,omitempty"`
	After  json.RawMessage `json:"after,omitempty"`
}

// EntityCounts compares one entity's items. PostgreSQL's count(*) of the
// entity's source, apart from the transform, gives
// Expected = (SourceRows − Rejected) × ItemsPerRow, and the transform must
// derive exactly that many items with distinct keys (Derived = Expected,
// Duplicates = 0); otherwise CountProblem says what differs, and
// verification fails.
type EntityCounts struct {
	Entity string `json:"entity"`
	Type   string `json:"type"`
	// SourceRows is PostgreSQL's count(*) of the entity's source.
	SourceRows int64 `json:"source_rows"`
	// Rows is the number of rows the transform read; Rejected the rows
	// that give no item, rejected as migrate rejects them.
	Rows     int64 `json:"rows"`
	Rejected int64 `json:"rejected"`
	// ItemsPerRow is 1, or 2 for an entity with a mirror item.
	ItemsPerRow int64 `json:"items_per_row"`
	// Expected items: (SourceRows − Rejected) × ItemsPerRow.
	Expected int64 `json:"expected"`
	// Derived is the number of distinct items the transform derived;
	// Duplicates the derived items whose key an earlier one already has
	// (of any entity), which migrate would write over each other.
	Derived    int64 `json:"derived"`
	Duplicates int64 `json:"duplicates"`
	// CountProblem says how the counts disagree; empty when they agree.
	CountProblem string `json:"count_problem,omitempty"`
	// Table items of this type.
	Table     int64 `json:"table"`
	Missing   int64 `json:"missing"`
	Changed   int64 `json:"changed"`
	Unchanged int64 `json:"unchanged"`
	// Stale items of this type the source no longer produces.
	Stale int64 `json:"stale"`
	// InFlight items of this type differ (missing, extra or changed) but
	// were changed after the snapshot while the check ran
	// (Options.InFlight): lag, not a mismatch.
	InFlight int64 `json:"in_flight,omitempty"`
	// WriteUnits a run writing every derived item consumes.
	WriteUnits int64 `json:"write_units"`
	// ChangeWriteUnits is what putting only the new and changed items
	// consumes (Options.ChangeCost): a changed one at the larger of its
	// table and derived versions, as DynamoDB charges a replacing put.
	// StaleWriteUnits is what deleting the stale items consumes, charged
	// at the deleted item's size (in each GSI too).
	// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html#write-operation-consumption
	ChangeWriteUnits int64 `json:"change_write_units,omitempty"`
	StaleWriteUnits  int64 `json:"stale_write_units,omitempty"`
	// ExportBytes is the size of every derived item as DynamoDB JSON, as
	// pg2dynamo export writes it before compression (Options.ExportBytes).
	ExportBytes int64 `json:"export_bytes,omitempty"`
}

// checkCounts sets Expected and CountProblem from the other counts.
func (e *EntityCounts) checkCounts() {
	e.Expected = (e.SourceRows - e.Rejected) * e.ItemsPerRow
	e.CountProblem = ""
	if e.Derived == e.Expected && e.Duplicates == 0 {
		return
	}
	e.CountProblem = fmt.Sprintf("PostgreSQL counts %d rows, %d rejected: %d items expected (%d a row); the transform read %d rows and derived %d items with distinct keys",
		e.SourceRows, e.Rejected, e.Expected, e.ItemsPerRow, e.Rows, e.Derived)
	if e.Duplicates > 0 {
		e.CountProblem += fmt.Sprintf(", and %d more with the key of another derived item, which no duplicate check rejected: a run writes them over each other", e.Duplicates)
	}
}

// PatternResult is one access pattern run for one parameter tuple, or a
// pattern that could not be run (no parameter tuple: Params empty, Want
// and Got 0).
type PatternResult struct {
	Pattern string            `json:"pattern"`
	Index   string            `json:"index"`
	Params  map[string]string `json:"params"`
	Want    int               `json:"want"`
	Got     int               `json:"got"`
	OK      bool              `json:"ok"`
	Problem string            `json:"problem,omitempty"`
	// Order, when set, is the order mismatch Problem describes.
	Order *OrderMismatch `json:"order,omitempty"`
	// NotRun is true when no Query was run: the pattern had no parameter
	// tuple to run it with.
	NotRun bool `json:"not_run,omitempty"`
	// Note says why a passing result checked nothing (the source derives
	// no item, or the source of its parameters is empty), or what it did
	// not check: items whose passing the filter is undecided, members of
	// an item collection PostgreSQL cannot count.
	Note string `json:"note,omitempty"`
	// Retries counts the GSI's re-reads (Options.IndexWait) before this
	// result.
	Retries int `json:"retries,omitempty"`
	// InFlight counts the items, of the answer or of the source's, that
	// differed and were skipped as changed after the snapshot
	// (Options.InFlight).
	InFlight int `json:"in_flight,omitempty"`
	// Scanned is, for a pattern with a filter, the items its Query's key
	// condition read before the filter (ScannedCount, summed over the
	// pages): the items that passed, those it left out and those whose
	// passing is undecided (Note).
	Scanned int `json:"scanned,omitempty"`
}

// Result is the comparison of the table with what the source derives.
// Its lists are kept in temporary files until Close.
type Result struct {
	Table string `json:"table"`
	// TableMissing is true when the table does not exist: every item is
	// missing (new).
	TableMissing bool           `json:"table_missing"`
	Entities     []EntityCounts `json:"entities"`
	// Missing items are derived from the source but not in the table.
	Missing List[ItemRef] `json:"missing"`
	// Extra items are in the table but not derived from the source: of a
	// mapped type (stale) or not (unmanaged).
	Extra List[ItemRef] `json:"extra"`
	// Duplicates are keys the source derives more than once that no
	// duplicate check rejected (EntityCounts.Duplicates), one entry per
	// extra item, typed by its entity.
	Duplicates List[ItemRef] `json:"duplicates"`
	Stale      int64         `json:"stale"`
	Unmanaged  int64         `json:"unmanaged"`
	// RetiredStale counts the stale items of Options.Retired (in Stale
	// too), and RetiredWriteUnits what deleting them consumes (priced as
	// EntityCounts.StaleWriteUnits).
	RetiredStale      int64             `json:"retired_stale,omitempty"`
	RetiredWriteUnits int64             `json:"retired_write_units,omitempty"`
	Changed           List[ChangedItem] `json:"changed"`
	// InFlight items differ from the snapshot but changes committed after
	// it, applied by a follow while the check ran, may have changed them
	// (Options.InFlight): lag, not a mismatch; they are in no other list.
	InFlight List[ItemRef] `json:"in_flight"`
	// ListsTruncated is true when a list holds only its first
	// Options.MaxListed entries (in bucket order); Counts and the counts
	// per entity are complete.
	ListsTruncated bool `json:"lists_truncated,omitempty"`
	// Counts gives the exact length of each list, and how many of its
	// entries are listed.
	Counts   ListCounts      `json:"counts"`
	Patterns []PatternResult `json:"patterns,omitempty"`
	// Held counts, by the type of the item that holds it ("(none)": an
	// item without a type attribute), the keys of missing items (in
	// Missing too) that an item of a type outside Options.Types holds
	// (Options.Holders); nil without Holders.
	Held map[string]int64 `json:"held,omitempty"`
	// Applied is what Options.Apply was handed and how it read back; nil
	// without Apply.
	Applied *Applied `json:"applied,omitempty"`

	files *sortGroup // the lists' files
}

// Close removes the Result's temporary files; its lists are empty
// afterwards. A Result made by hand or decoded from JSON has none.
func (r *Result) Close() error {
	if r.files == nil {
		return nil
	}
	err := r.files.close()
	r.files = nil
	r.Missing, r.Extra, r.Duplicates, r.Changed, r.InFlight = List[ItemRef]{}, List[ItemRef]{}, List[ItemRef]{}, List[ChangedItem]{}, List[ItemRef]{}
	if a := r.Applied; a != nil {
		a.Put, a.Delete, a.Unapplied = List[ItemRef]{}, List[ItemRef]{}, List[ItemRef]{}
	}
	return err
}

// WriteUnits is what a run writing every derived item consumes: the
// entities' EntityCounts.WriteUnits summed.
func (r *Result) WriteUnits() int64 {
	var n int64
	for _, e := range r.Entities {
		n += e.WriteUnits
	}
	return n
}

// OK reports whether the source's counts agree with the items derived
// (EntityCounts), the table holds exactly the derived items, and every
// access pattern returned what it should, in PostgreSQL's order. Items of
// no mapped type (Unmanaged) are another writer's and do not fail it.
func (r *Result) OK() bool {
	c := r.Counts
	if r.TableMissing || c.Missing.Total > 0 || r.Stale > 0 || c.Changed.Total > 0 || c.Duplicates.Total > 0 {
		return false
	}
	for _, e := range r.Entities {
		if e.CountProblem != "" {
			return false
		}
	}
	for _, p := range r.Patterns {
		if !p.OK {
			return false
		}
	}
	return true
}

// Compare derives every item from src (which must have begun its snapshot)
// by the plans, reads the whole table with a parallel segmented Scan, and
// compares the two by canonical content, bucket by bucket on disk. It
// checks each entity's derived items against PostgreSQL's count(*) of its
// source (EntityCounts), then runs each access pattern for sampled
// parameters and compares the Query's items, in order and in PostgreSQL's
// order of their source values, with the derived items that must answer
// it (patternSample.runAll; docs/verify.md gives the rules). It only reads
// DynamoDB, through client (DescribeTable, Scan, Query). Its temporary
// files are in os.TempDir, the Result's lists until Result.Close, which
// the caller must call. It fails, before reading the source, when DynamoDB
// cannot be reached, and on a source, Scan, Query or temporary file error;
// a mismatch is a result, not an error.
func Compare(ctx context.Context, src *extract.Source, m *mapping.Mapping, plans []*transform.Plan,
	client ReadAPI, opts Options) (*Result, error) {
	derive := func(ctx context.Context, sink load.Sink) (*pipeline.Summary, error) {
		// The pipeline's duplicate check rejects exactly the rows migrate
		// rejects, so only the others' items are expected.
		return pipeline.Run(ctx, pipeline.Postgres(src), m, plans, sink, pipeline.Options{Concurrency: 1, Readers: opts.Readers, MinRangeRows: opts.MinRangeRows, Progress: opts.Progress, OnReject: opts.OnReject})
	}
	return compare(ctx, src, derive, m, plans, client, opts)
}

// comparison is one run of Compare: its inputs, and what its passes
// share.
type comparison struct {
	src      source
	derive   deriveFunc
	m        *mapping.Mapping
	plans    []*transform.Plan
	client   ReadAPI
	opts     Options
	keyAttrs [2]string // the table's partition and sort key attributes
	orders   *orderChecker
	// sourceRows is PostgreSQL's count(*) of each entity's source, by
	// plan (countSources).
	sourceRows []int64
	// derived is the number of items the source pass derived.
	derived int64
	// work holds the buckets and the patterns' expected answers; it is
	// removed when compare returns.
	work *sortGroup
}

// compare is Compare with the source behind seams: src for the counts,
// the parameter samples and the order checks, derive for the items.
func compare(ctx context.Context, src source, derive deriveFunc, m *mapping.Mapping, plans []*transform.Plan,
	client ReadAPI, opts Options) (*Result, error) {
	// The table first: a DynamoDB that cannot be reached fails the command
	// in seconds, before the source is counted (count(*) of every table)
	// and read.
	if opts.Apply != nil && opts.InFlight != nil {
		return nil, errors.New("verify: Options.Apply with Options.InFlight: a follow keeps the table in step itself")
	}
	td, err := load.DescribeTable(ctx, client, m.Table.Name)
	if err != nil {
		return nil, err
	}
	c := &comparison{src: src, derive: derive, m: m, plans: plans, client: client, opts: opts,
		keyAttrs: m.Table.Keys(), orders: newOrderChecker(src, m, plans)}
	expected, err := c.countSources(ctx)
	if err != nil {
		return nil, err
	}
	res := &Result{Table: m.Table.Name, TableMissing: td == nil}
	if td != nil {
		// The table may hold more than the source derives (an approximate
		// count, refreshed by DynamoDB every few hours): size for both.
		expected = max(expected, aws.ToInt64(td.ItemCount))
	}
	if c.work, err = newSortGroup("pg2dynamo-verify-", patternBudget); err != nil {
		return nil, err
	}
	defer c.work.close()
	// res.files holds the lists, removed by res.Close.
	if res.files, err = newSortGroup("pg2dynamo-verify-lists-", listBudget); err != nil {
		return nil, err
	}
	if err := c.fill(ctx, res, expected); err != nil {
		res.Close()
		return nil, err
	}
	return res, nil
}

// countSources runs PostgreSQL's count(*) of every entity's source into
// c.sourceRows (see EntityCounts). It returns the number of items those
// rows give (with mirrors), to size the buckets.
func (c *comparison) countSources(ctx context.Context) (int64, error) {
	c.sourceRows = make([]int64, len(c.plans))
	var expected int64
	for i, p := range c.plans {
		n, err := c.src.Count(ctx, p.Entity())
		if err != nil {
			return 0, err
		}
		c.sourceRows[i] = n
		expected += n * itemsPerRow(p)
	}
	return expected, nil
}

// fill makes res: the source pass and the table pass into buckets sized
// for about expected items of each side, the buckets compared, the counts
// checked, then the access patterns run (not against a missing table).
func (c *comparison) fill(ctx context.Context, res *Result, expected int64) error {
	sp, err := newSpill(c.work, expected)
	if err != nil {
		return err
	}
	defer sp.close()
	var samples []*patternSample
	if !c.opts.SkipPatterns {
		if samples, err = samplePatterns(ctx, c.src, c.m, c.plans, cmp(c.opts.Sample, 20), c.work); err != nil {
			return err
		}
	}
	if res.Entities, err = c.sourcePass(ctx, sp, samples); err != nil {
		return err
	}
	if !res.TableMissing {
		read := c.scanProgress()
		in := &dynamodb.ScanInput{TableName: aws.String(c.m.Table.Name)}
		if err := typeFilter(in, c.m.TypeAttribute, c.opts.Types); err != nil {
			return err
		}
		if err := scanInto(ctx, c.client, in, cmp(c.opts.Segments, 4), c.keyAttrs, c.m.TypeAttribute, sp, read); err != nil {
			return err
		}
	}
	lo := c.listOptions(ctx)
	if c.opts.Apply != nil {
		if lo.apply, err = newApplyRun(c, res.files, lo.maxListed); err != nil {
			return err
		}
	}
	probe := c.opts.Holders != nil && len(c.opts.Types) > 0 && !res.TableMissing
	if probe {
		f, err := c.work.tempFile("held-*")
		if err != nil {
			return err
		}
		lo.held = newJournal(f)
	}
	if err := res.compareBuckets(sp, c.plans, lo); err != nil {
		return err
	}
	sp.close() // the buckets' space, before the Queries
	if probe {
		rb := &readBack{client: c.opts.Holders, table: c.m.Table.Name, keyAttrs: c.keyAttrs, keyTypes: c.m.Table.KeyTypes(), typeAttr: c.m.TypeAttribute,
			keysOnly: true, parallel: cmp(c.opts.Segments, 4)}
		res.Held = map[string]int64{}
		if err := rb.held(ctx, lo.held, c.opts.Types, res.Held); err != nil {
			return err
		}
	}
	derived := res.checkEntityCounts()
	if lo.apply != nil {
		if err := lo.apply.finish(ctx, res, c.readBack()); err != nil {
			return err
		}
	}
	if res.TableMissing {
		return nil
	}
	res.Patterns, err = c.runPatterns(ctx, samples, derived)
	return err
}

// listOptions are the options of c's bucket comparison, all but apply.
func (c *comparison) listOptions(ctx context.Context) listOptions {
	lo := listOptions{ctx: ctx, sampleChanged: cmp(c.opts.SampleChanged, 20), maxListed: cmp(c.opts.MaxListed, MaxListed), retired: c.opts.Retired}
	if c.opts.ChangeCost || c.opts.Apply != nil {
		lo.writeUnits = func(item []byte) (int64, error) {
			attrs, err := ddbjson.DecodeItem(item)
			return transform.WriteUnits(c.m, attrs), err
		}
	}
	if f := c.opts.InFlight; f != nil {
		scanned := time.Now() // every item of the Scan was read before
		lo.inFlight = func(key string) (bool, error) {
			pk, sk := splitItemKey(key)
			return f(ctx, pk, sk, scanned)
		}
	}
	return lo
}

// readBack is how Options.ReadBack reads the table back; nil without it.
func (c *comparison) readBack() *readBack {
	if c.opts.ReadBack == nil {
		return nil
	}
	return &readBack{client: c.opts.ReadBack, table: c.m.Table.Name, keyAttrs: c.keyAttrs, keyTypes: c.m.Table.KeyTypes(), typeAttr: c.m.TypeAttribute}
}

// ScanName is the name verify's Progress is told the table's Scan under.
func ScanName(table string) string { return "Scan of " + table }

// scanProgress tells c.opts.Progress that the Scan begins, with the items
// derived as its total, and returns what the Scan's segments report the
// items of each page to (nil without a Progress).
func (c *comparison) scanProgress() func(n int) {
	p := c.opts.Progress
	if p == nil {
		return nil
	}
	name := ScanName(c.m.Table.Name)
	p.Plan([]pipeline.PlannedEntity{{Name: name, Rows: c.derived, Unit: "items"}})
	p.Start(name)
	var mu sync.Mutex
	return func(n int) {
		mu.Lock()
		defer mu.Unlock()
		p.Advance(name, n, n)
	}
}

// sourcePass derives every item (c.derive) into sp, adding up its write
// units and offering it to the checks of samples whose partition it is
// in. It returns the counts per entity the source pass knows: the
// source's rows, the rows read and rejected, and the write units.
func (c *comparison) sourcePass(ctx context.Context, sp *spill, samples []*patternSample) ([]EntityCounts, error) {
	var checks []*patternCheck
	for _, ps := range samples {
		checks = append(checks, ps.checks...)
	}
	sink := &sourceSink{c: c, sp: sp, byAttr: indexChecks(checks), wcu: make([]int64, len(c.plans)), bytes: make([]int64, len(c.plans))}
	sum, err := c.derive(ctx, sink)
	if err != nil {
		return nil, err
	}
	var out []EntityCounts
	for i, e := range sum.Entities {
		c.derived += e.Items
		out = append(out, EntityCounts{Entity: e.Name, Type: c.plans[i].Entity().Type, SourceRows: c.sourceRows[i],
			Rows: e.Rows, Rejected: e.Rejected, ItemsPerRow: itemsPerRow(c.plans[i]), WriteUnits: sink.wcu[i], ExportBytes: sink.bytes[i]})
	}
	return out, nil
}

// sourceSink is the source pass's load.Sink: it spills each derived item,
// adds up its write units per entity, and offers it to the checks whose
// partition it is in. Safe for concurrent use.
type sourceSink struct {
	c      *comparison
	sp     *spill
	byAttr map[string]map[string][]*patternCheck // indexChecks
	mu     sync.Mutex                            // guards wcu, bytes and the checks
	wcu    []int64                               // write units by entity
	bytes  []int64                               // export bytes by entity
}

// Write spills and accounts for every item of batch; it fails on a
// bucket write or an order check's encoding error.
func (s *sourceSink) Write(_ context.Context, batch []transform.Item) error {
	for j, it := range batch {
		key := itemKey(it.Attrs, s.c.keyAttrs)
		if err := s.sp.add(fromSource, it.Entity, key, ddbjson.Canonical(it.Attrs), ""); err != nil {
			return err
		}
		if err := s.account(it, isMirror(batch, j, s.c.plans)); err != nil {
			return err
		}
	}
	return nil
}

// account adds it's write units to its entity's and offers it to the
// checks of every partition it is in; mirror says it is its entity's
// mirror item.
func (s *sourceSink) account(it transform.Item, mirror bool) error {
	w := transform.WriteUnits(s.c.m, it.Attrs)
	var n int64
	if f := s.c.opts.ExportBytes; f != nil {
		n = f(it.Attrs)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wcu[it.Entity] += w
	s.bytes[it.Entity] += n
	for attr, bySample := range s.byAttr {
		v, ok := it.Attrs[attr]
		if !ok {
			continue
		}
		text, _ := transform.KeyText(v)
		for _, pc := range bySample[text] {
			if err := pc.offer(s.c.m, s.c.orders, it, mirror); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkEntityCounts checks every entity's counts
// (EntityCounts.checkCounts) and returns the items derived in all.
func (r *Result) checkEntityCounts() int64 {
	var derived int64
	for i := range r.Entities {
		r.Entities[i].checkCounts()
		derived += r.Entities[i].Derived
	}
	return derived
}

// runPatterns runs the checks of every sample (patternSample.runAll), in
// mapping order, with one GSI re-read budget (Options.IndexWait) for them
// all; derived is the number of items derived in all.
func (c *comparison) runPatterns(ctx context.Context, samples []*patternSample, derived int64) ([]PatternResult, error) {
	wait := newIndexWait(c.opts.IndexWait)
	ties := c.work.sub(tiesBudget).newSorter("ties", bytes.Compare)
	var out []PatternResult
	for _, ps := range samples {
		for _, pc := range ps.checks {
			pc.inFlight = c.itemInFlight
		}
		prs, err := ps.runAll(ctx, c.src, c.client, c.m.Table.Name, wait, c.orders, ties, derived, c.sourceRows)
		if err != nil {
			return nil, err
		}
		out = append(out, prs...)
	}
	return out, nil
}

// itemInFlight is Options.InFlight for an item in canonical form, of a
// table read at readAt or before; false without Options.InFlight.
func (c *comparison) itemInFlight(ctx context.Context, item []byte, readAt time.Time) (bool, error) {
	if c.opts.InFlight == nil {
		return false, nil
	}
	attrs, err := ddbjson.DecodeItem(item)
	if err != nil {
		return false, fmt.Errorf("verify: item %s: %w", item, err)
	}
	k := transform.ItemKey(attrs, c.keyAttrs)
	return c.opts.InFlight(ctx, k[0], k[1], readAt)
}

// Memory budgets, in bytes: the derived items that must answer the
// sampled Queries (all the checks together) and the lists' entries (the
// four lists together) are held in memory up to these, and on disk past
// them. See sorter.
// tiesBudget bounds a GSI answer's run of equal sort keys held while it
// is ordered.
const (
	patternBudget = 2 << 20
	listBudget    = 1 << 20
	tiesBudget    = 1 << 20
)

// itemsPerRow is the number of items a row of p's entity gives: 2 with a
// mirror, else 1.
func itemsPerRow(p *transform.Plan) int64 {
	if p.KeySlots().Mirrored() {
		return 2
	}
	return 1
}

// isMirror reports whether batch[j] is its entity's mirror item: the
// pipeline hands a row's items together, in transform.Plan.Items' order,
// the mirror after the item and holding the same row slice
// (transform.Item.Row).
func isMirror(batch []transform.Item, j int, plans []*transform.Plan) bool {
	it := batch[j]
	if !plans[it.Entity].KeySlots().Mirrored() || j == 0 {
		return false
	}
	prev := batch[j-1]
	if prev.Entity != it.Entity || len(prev.Row) == 0 || len(prev.Row) != len(it.Row) || &prev.Row[0] != &it.Row[0] {
		return false
	}
	return !isMirror(batch, j-1, plans)
}

// MaxListed is the default of Options.MaxListed: the entries kept per
// list, so that a table unlike its source does not fill the disk; the
// counts stay exact (Result.Counts).
const MaxListed = 100_000

func cmp(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// itemKey is an item's primary key (transform.ItemKey) as one string: the
// partition key, a NUL, the sort key. A binary key may hold NULs: then
// each NUL of either key is written as NUL and 0x01, and the two are
// separated by two NULs (splitItemKey tells the forms apart).
func itemKey(item map[string]types.AttributeValue, keyAttrs [2]string) string {
	return joinItemKey(transform.ItemKey(item, keyAttrs))
}

// joinItemKey is itemKey of key text k.
func joinItemKey(k [2]string) string {
	if !strings.Contains(k[0], "\x00") && !strings.Contains(k[1], "\x00") {
		return k[0] + "\x00" + k[1]
	}
	esc := strings.NewReplacer("\x00", "\x00\x01")
	return esc.Replace(k[0]) + "\x00\x00" + esc.Replace(k[1])
}

// splitItemKey returns the partition and sort key text of an itemKey.
func splitItemKey(key string) (pk, sk string) {
	if i := strings.Index(key, "\x00\x00"); i >= 0 {
		unesc := strings.NewReplacer("\x00\x01", "\x00")
		return unesc.Replace(key[:i]), unesc.Replace(key[i+2:])
	}
	pk, sk, _ = strings.Cut(key, "\x00")
	return pk, sk
}

// scanPageItems bounds the items of one Scan page (ScanInput.Limit): the
// SDK decodes a whole page at once, and a full 1 MB page of small items is
// several times that in Go values per segment (docs/performance.md gives
// verify's memory budgets).
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Scan.html#Scan.Limit
const scanPageItems = 200

// typeFilter sets in's FilterExpression to keep the items whose
// attribute typeAttr holds one of types (none: every item).
func typeFilter(in *dynamodb.ScanInput, typeAttr string, types []string) error {
	if len(types) == 0 {
		return nil
	}
	if len(types) > 100 {
		return fmt.Errorf("verify: %d types to compare: a Scan's filter takes at most 100", len(types))
	}
	var ops []expression.OperandBuilder
	for _, t := range types {
		ops = append(ops, expression.Value(t))
	}
	cond := expression.Name(typeAttr).In(ops[0], ops[1:]...)
	expr, err := expression.NewBuilder().WithFilter(cond).Build()
	if err != nil {
		return err
	}
	in.FilterExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues = expr.Filter(), expr.Names(), expr.Values()
	return nil
}

// scanInto reads the table of in (with in's filter, if any) with
// segments parallel Scans (strongly consistent) and spills every item
// with the value of its type attribute typeAttr, telling read (if not
// nil) the items of each page.
func scanInto(ctx context.Context, client dynamodb.ScanAPIClient, in *dynamodb.ScanInput, segments int, keyAttrs [2]string, typeAttr string, sp *spill, read func(n int)) error {
	g, gctx := errgroup.WithContext(ctx)
	table := aws.ToString(in.TableName)
	for seg := range segments {
		g.Go(func() error {
			si := *in
			si.Segment, si.TotalSegments, si.ConsistentRead, si.Limit = aws.Int32(int32(seg)), aws.Int32(int32(segments)), aws.Bool(true), aws.Int32(scanPageItems)
			p := dynamodb.NewScanPaginator(client, &si)
			for p.HasMorePages() {
				page, err := p.NextPage(gctx)
				if err != nil {
					return fmt.Errorf("scan %s segment %d: %w", table, seg, err)
				}
				for _, it := range page.Items {
					typ, _ := it[typeAttr].(*types.AttributeValueMemberS)
					t := ""
					if typ != nil {
						t = typ.Value
					}
					if err := sp.add(fromTable, -1, itemKey(it, keyAttrs), ddbjson.Canonical(it), t); err != nil {
						return err
					}
				}
				if read != nil {
					read(len(page.Items))
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// listOptions tune the lists compareBuckets makes: the changed items that
// keep their whole before and after, and the entries kept per list.
type listOptions struct {
	// ctx is the comparison's, for apply.
	ctx                      context.Context
	sampleChanged, maxListed int
	// inFlight, if set, says whether the item of a key (itemKey) that
	// differs was changed after the snapshot (Options.InFlight).
	inFlight func(key string) (bool, error)
	// writeUnits, if set, prices writing an item given as its canonical
	// JSON (Options.ChangeCost, Options.Apply).
	writeUnits func(item []byte) (int64, error)
	// apply, if set, is handed the differences (Options.Apply).
	apply *applyRun
	// retired are Options.Retired.
	retired []string
	// held, if set, journals the key of every missing item, read again
	// for Options.Holders.
	held *journal
}

// compareBuckets classifies every key, one bucket in memory at a time,
// counting per entity and listing the keys in r's lists (in r.files): a
// key derived but not in the table is missing; one in the table but not
// derived is extra (stale when of a mapped type, else unmanaged); one in
// both is unchanged or changed, by canonical content; a key derived more
// than once is a duplicate. It fails on a bucket or list file error.
func (r *Result) compareBuckets(sp *spill, plans []*transform.Plan, opts listOptions) error {
	bc := newBucketComparer(r, plans, opts)
	if err := sp.each(bc.bucket); err != nil {
		return err
	}
	bc.finish()
	return nil
}

// bucketComparer classifies the records of one bucket at a time into the
// counts of a Result and the builders of its lists.
type bucketComparer struct {
	r     *Result
	plans []*transform.Plan
	// byType is the first entity of each item type; retired the types no
	// entity derives any more (Options.Retired).
	byType        map[string]int
	retired       map[string]bool
	sampleChanged int
	missing       *listBuilder[ItemRef]
	extra         *listBuilder[ItemRef]
	dups          *listBuilder[ItemRef]
	changed       *listBuilder[ChangedItem]
	inFlight      *listBuilder[ItemRef]
	found         int64 // changed items found, in bucket order
	isInFlight    func(key string) (bool, error)
	writeUnits    func(item []byte) (int64, error) // listOptions.writeUnits
	ctx           context.Context                  // listOptions.ctx
	apply         *applyRun                        // listOptions.apply
	held          *journal                         // listOptions.held
}

func newBucketComparer(r *Result, plans []*transform.Plan, opts listOptions) *bucketComparer {
	byType := map[string]int{}
	for i, p := range plans {
		if _, ok := byType[p.Entity().Type]; !ok {
			byType[p.Entity().Type] = i
		}
	}
	retired := map[string]bool{}
	for _, t := range opts.retired {
		retired[t] = true
	}
	return &bucketComparer{r: r, plans: plans, byType: byType, retired: retired, sampleChanged: opts.sampleChanged,
		missing:    newListBuilder[ItemRef](r.files, "missing", opts.maxListed),
		extra:      newListBuilder[ItemRef](r.files, "extra", opts.maxListed),
		dups:       newListBuilder[ItemRef](r.files, "duplicates", opts.maxListed),
		changed:    newListBuilder[ChangedItem](r.files, "changed", opts.maxListed),
		inFlight:   newListBuilder[ItemRef](r.files, "in-flight", opts.maxListed),
		isInFlight: opts.inFlight, writeUnits: opts.writeUnits, ctx: opts.ctx, apply: opts.apply, held: opts.held}
}

// flight counts and lists the item of key, of type typ and entity e (-1:
// of no mapped type), and returns true, when it differs because it was
// changed after the snapshot (listOptions.inFlight).
func (bc *bucketComparer) flight(key, typ string, e int) (bool, error) {
	if bc.isInFlight == nil {
		return false, nil
	}
	in, err := bc.isInFlight(key)
	if err != nil || !in {
		return false, err
	}
	if e >= 0 {
		bc.r.Entities[e].InFlight++
	}
	return true, bc.inFlight.add(key, itemRef(key, typ))
}

// bucket classifies the records of one bucket (spill.each's fn).
func (bc *bucketComparer) bucket(recs []record) error {
	source, others, err := bc.sourceItems(recs)
	if err != nil {
		return err
	}
	seen := map[string]bool{} // derived keys found in the table
	for _, rc := range recs {
		if rc.side != fromTable {
			continue
		}
		if err := bc.tableItem(rc, source, others, seen); err != nil {
			return err
		}
	}
	return bc.missingItems(recs, source, seen)
}

// sourceItems returns the first derived item of each key of recs, and the
// others with that key (duplicates, counted and listed): the table holds
// whichever a run wrote last.
func (bc *bucketComparer) sourceItems(recs []record) (map[string]record, map[string][]record, error) {
	source := map[string]record{}
	others := map[string][]record{}
	for _, rc := range recs {
		if rc.side != fromSource {
			continue
		}
		if _, dup := source[rc.key]; dup {
			// Not rejected by the pipeline's duplicate check, which
			// rejects what migrate rejects: migrate wrote both.
			bc.r.Entities[rc.entity].Duplicates++
			if err := bc.dups.add(rc.key, itemRef(rc.key, bc.typeOf(rc.entity))); err != nil {
				return nil, nil, err
			}
			others[rc.key] = append(others[rc.key], rc)
			continue
		}
		source[rc.key] = rc
		bc.r.Entities[rc.entity].Derived++
	}
	return source, others, nil
}

// tableItem classifies table record rc: extra when no item is derived
// with its key, else unchanged when its content is that of one of the
// items derived with its key, else changed. A derived key it finds is
// marked in seen.
func (bc *bucketComparer) tableItem(rc record, source map[string]record, others map[string][]record, seen map[string]bool) error {
	if e, ok := bc.byType[rc.typ]; ok {
		bc.r.Entities[e].Table++
	}
	s, ok := source[rc.key]
	if !ok {
		return bc.extraItem(rc)
	}
	seen[rc.key] = true
	if bytes.Equal(s.item, rc.item) || slices.ContainsFunc(others[rc.key], func(o record) bool { return bytes.Equal(o.item, rc.item) }) {
		bc.r.Entities[s.entity].Unchanged++
		return nil
	}
	return bc.changedItem(rc, s)
}

// extraItem counts and lists table record rc, which no derived item has
// the key of: stale when its type is an entity's, else unmanaged.
func (bc *bucketComparer) extraItem(rc record) error {
	e, mapped := bc.byType[rc.typ]
	if !mapped {
		e = -1
	}
	if in, err := bc.flight(rc.key, rc.typ, e); in || err != nil {
		return err
	}
	if mapped || bc.retired[rc.typ] {
		bc.r.Stale++
		var units int64
		var err error
		if mapped {
			bc.r.Entities[e].Stale++
			units, err = bc.price(&bc.r.Entities[e].StaleWriteUnits, rc.item)
		} else {
			bc.r.RetiredStale++
			units, err = bc.price(&bc.r.RetiredWriteUnits, rc.item)
		}
		if err != nil {
			return err
		}
		if bc.apply != nil {
			if err := bc.apply.staleItem(rc.key, itemRef(rc.key, rc.typ), units); err != nil {
				return err
			}
		}
	} else {
		bc.r.Unmanaged++
	}
	return bc.extra.add(rc.key, itemRef(rc.key, rc.typ))
}

// changedItem counts and lists table record rc, whose content differs
// from s's, the item derived with its key: with its attribute changes
// and, for the first sampleChanged found, both whole items. Past the
// list's cap it is only counted.
func (bc *bucketComparer) changedItem(rc, s record) error {
	if in, err := bc.flight(rc.key, bc.typeOf(s.entity), s.entity); in || err != nil {
		return err
	}
	bc.r.Entities[s.entity].Changed++
	units, err := bc.price(&bc.r.Entities[s.entity].ChangeWriteUnits, rc.item, s.item)
	if err != nil {
		return err
	}
	if err := bc.put(rc.key, s, units, false); err != nil {
		return err
	}
	bc.found++
	if bc.changed.full() {
		bc.changed.total++
		return nil
	}
	ci := ChangedItem{ItemRef: itemRef(rc.key, bc.typeOf(s.entity)), Changes: attrChanges(rc.item, s.item)}
	if bc.found <= int64(bc.sampleChanged) {
		ci.Before, ci.After = rc.item, s.item
	}
	return bc.changed.add(rc.key, ci)
}

// missingItems counts and lists the derived keys of recs not seen in the
// table, in record order, so that a truncated list keeps the same keys on
// every run.
func (bc *bucketComparer) missingItems(recs []record, source map[string]record, seen map[string]bool) error {
	for _, rc := range recs {
		if rc.side != fromSource || seen[rc.key] {
			continue
		}
		seen[rc.key] = true
		s := source[rc.key]
		if in, err := bc.flight(rc.key, bc.typeOf(s.entity), s.entity); in || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		bc.r.Entities[s.entity].Missing++
		units, err := bc.price(&bc.r.Entities[s.entity].ChangeWriteUnits, s.item)
		if err != nil {
			return err
		}
		if err := bc.missing.add(rc.key, itemRef(rc.key, bc.typeOf(s.entity))); err != nil {
			return err
		}
		if bc.held != nil {
			if err := bc.held.add(journalEntry{kind: journalPut, key: rc.key, typ: bc.typeOf(s.entity)}); err != nil {
				return err
			}
		}
		if err := bc.put(rc.key, s, units, true); err != nil {
			return err
		}
	}
	return nil
}

// put hands the derived item s, of key, to listOptions.apply, if any, with
// the write units of putting it; missing: the table's side had no item of
// its key (Write.Missing).
func (bc *bucketComparer) put(key string, s record, units int64, missing bool) error {
	if bc.apply == nil {
		return nil
	}
	e := bc.plans[s.entity].Entity()
	return bc.apply.putItem(bc.ctx, Write{ItemRef: itemRef(key, e.Type), Entity: e.Name, WriteUnits: units, Missing: missing}, key, s.item)
}

// price adds to *sum the write units of writing the largest of items
// (canonical JSON), when the comparison prices changes
// (listOptions.writeUnits), and returns them (0 when it does not). It
// fails on JSON it cannot decode.
func (bc *bucketComparer) price(sum *int64, items ...[]byte) (int64, error) {
	if bc.writeUnits == nil {
		return 0, nil
	}
	var most int64
	for _, it := range items {
		n, err := bc.writeUnits(it)
		if err != nil {
			return 0, fmt.Errorf("verify: price a change: %w", err)
		}
		most = max(most, n)
	}
	*sum += most
	return most, nil
}

// finish sets the Result's lists, their counts and ListsTruncated.
func (bc *bucketComparer) finish() {
	r := bc.r
	r.Missing, r.Counts.Missing = bc.missing.list()
	r.Extra, r.Counts.Extra = bc.extra.list()
	r.Duplicates, r.Counts.Duplicates = bc.dups.list()
	r.Changed, r.Counts.Changed = bc.changed.list()
	r.InFlight, r.Counts.InFlight = bc.inFlight.list()
	c := r.Counts
	r.ListsTruncated = c.Missing.Truncated() || c.Extra.Truncated() || c.Duplicates.Truncated() || c.Changed.Truncated() || c.InFlight.Truncated()
}

// typeOf is the item type of entity (an index in the plans).
func (bc *bucketComparer) typeOf(entity int) string { return bc.plans[entity].Entity().Type }

// itemRef names the item of key (itemKey: partition key, NUL, sort key)
// and type typ.
func itemRef(key, typ string) ItemRef {
	pk, sk := splitItemKey(key)
	return ItemRef{PK: pk, SK: sk, Type: typ}
}

// attrChanges lists the attributes whose canonical values differ.
func attrChanges(before, after []byte) []AttrChange {
	var b, a map[string]json.RawMessage
	_ = json.Unmarshal(before, &b)
	_ = json.Unmarshal(after, &a)
	names := map[string]bool{}
	for k := range b {
		names[k] = true
	}
	for k := range a {
		names[k] = true
	}
	var out []AttrChange
	for _, k := range slices.Sorted(maps.Keys(names)) {
		if !bytes.Equal(b[k], a[k]) {
			out = append(out, AttrChange{Attribute: k, Before: nullIfEmpty(b[k]), After: nullIfEmpty(a[k])})
		}
	}
	return out
}

func nullIfEmpty(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	return v
}
