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

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/internal/extsort"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// Options tune Compare. The zero value is usable.
type Options struct {
	// Segments is the number of parallel Scan segments (default 4).
	Segments int
	// Reads, if set, paces and counts the reads of the table: the Scan, the
	// access patterns' Queries and the BatchGetItems of ReadBack and Holders
	// (load.ReadLimit).
	Reads *load.ReadLimit
	// Readers is the source pass's connection count, as a full load's
	// (pipeline.Options.Readers; 0 or 1: one); more needs a source that exports
	// its snapshot.
	Readers int
	// MinRangeRows is the fewest rows of a range split across Readers
	// (pipeline.Options.MinRangeRows).
	MinRangeRows int64
	// Sample is the parameter tuples tried per access pattern (default 20; all
	// when the source has fewer).
	Sample int
	// SampleChanged is how many changed items keep their whole before and after
	// (default 20).
	SampleChanged int
	// SkipPatterns leaves the access patterns out.
	SkipPatterns bool
	// IndexWait is the total time a non-matching GSI pattern check is
	// re-queried, as GSIs update asynchronously; zero or less: no retry.
	// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Writes
	IndexWait time.Duration
	// Progress, if set, is told of the source pass as pipeline.Run tells it,
	// then of the Scan as an entity named ScanName(table); one call at a time.
	Progress pipeline.Progress
	// MaxListed is the entries each outcome.Result list keeps (default
	// MaxListed); counts stay exact.
	MaxListed int
	// ExportBytes, if set, sizes an item as an export writes it
	// (ddbjson.AppendLine), summed into outcome.EntityCounts.ExportBytes:
	// what ImportTable is priced by.
	ExportBytes func(item map[string]types.AttributeValue) int64
	// ChangeCost prices writing only the differences:
	// outcome.EntityCounts.ChangeWriteUnits and StaleWriteUnits.
	ChangeCost bool
	// InFlight, if set, says which items changes committed after the snapshot
	// may have changed (a follow streaming into the table); such a differing
	// item counts in flight, not as a mismatch, and access patterns skip it on
	// both sides.
	InFlight InFlightFunc
	// Apply, if set, brings the table in line in the same pass (migrate
	// --changes-only): new and changed items go to Apply.Put as their bucket is
	// compared (unless DeleteOnly); then, only when the counts agree, stale
	// items of mapped types go to Apply.Delete. ReadBack runs before the access
	// patterns. Not with InFlight.
	Apply Applier
	// DeleteOnly hands Apply the stale items alone (migrate --prune).
	DeleteOnly bool
	// ReadBack, with Apply, reads every put or deleted key again once applied;
	// nil: not read back.
	ReadBack dynamodb.BatchGetItemAPIClient
	// OnReject, if set, is told of every row the source pass rejects
	// (pipeline.Options.OnReject).
	OnReject func(pipeline.Reject) error
	// Types, if set, limits the table's side to items whose type attribute is
	// one of these (a Scan FilterExpression of at most 100 IN operands; every
	// scanned item is still charged). A derived item found missing may then
	// have its key held by an unseen type, which Apply must not overwrite. A
	// given type no entity derives is stale.
	// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Scan.html#Scan.FilterExpression
	Types []string
	// Holders, with Types, re-reads every missing item's key (BatchGetItem,
	// Segments requests at once, projected to key and type): one held by a type
	// outside Types counts in outcome.Result.Held, since putting there would
	// overwrite another entity's item. Nil: not read.
	Holders dynamodb.BatchGetItemAPIClient
	// Retired are types no entity derives any more: stale, deleted with Apply.
	// Also list them in Types when set.
	Retired []string
}

// InFlightFunc reports whether a change committed after the snapshot may have
// changed the item of key (pk, sk) as read at readAt or before
// (follow.Watch.Changed). Its errors fail the check.
type InFlightFunc func(ctx context.Context, pk, sk string, readAt time.Time) (bool, error)

// checkCounts sets Expected and CountProblem from the other counts.
func checkCounts(e *outcome.EntityCounts) {
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

// Compare derives every item from src (its snapshot begun) by the plans, reads
// the table with a parallel segmented Scan, and compares both by canonical
// content, bucket by bucket on disk. It checks each entity against PostgreSQL's
// count(*) of its source, then runs each access pattern for sampled parameters
// and compares the Query's items, in PostgreSQL's order, with the derived items
// that must answer it (docs/verify.md). It only reads DynamoDB (DescribeTable,
// Scan, Query). The caller must Close the Result. It fails before reading the
// source when DynamoDB is unreachable, and on source, Scan, Query or temporary
// file errors; a mismatch is a result.
func Compare(ctx context.Context, src *extract.Source, m *mapping.Mapping, plans []*transform.Plan,
	client ReadAPI, opts Options) (*outcome.Result, error) {
	derive := func(ctx context.Context, sink load.Sink, onReject func(pipeline.Reject) error) (*pipeline.Summary, error) {
		// The pipeline's duplicate check rejects exactly what migrate rejects,
		// so only the others' items are expected.
		return pipeline.Run(ctx, pipeline.Postgres(src), m, plans, sink, pipeline.Options{Concurrency: 1, Readers: opts.Readers, MinRangeRows: opts.MinRangeRows, Progress: opts.Progress, OnReject: onReject})
	}
	return compare(ctx, src, derive, m, plans, client, opts)
}

type comparison struct {
	src      source
	derive   deriveFunc
	m        *mapping.Mapping
	plans    []*transform.Plan
	client   ReadAPI
	opts     Options
	keyAttrs [2]string // the table's partition and sort key attributes
	orders   *orderChecker
	// sourceRows is PostgreSQL's count(*) of each plan's source.
	sourceRows []int64
	derived    int64
	// work holds the buckets and the patterns' expected answers, removed when
	// compare returns.
	work *extsort.Group
	// rejected are the source pass's rejected rows, which the item
	// collections' counts leave out.
	rejected rejectedRows
	owners   *owners
}

// owners tells by its type attribute whose an item is: an entity's (the
// first of that type), a retired type's, or else another writer's.
type owners struct {
	byType  map[string]int
	retired map[string]bool
}

func newOwners(plans []*transform.Plan, retired []string) *owners {
	o := &owners{byType: map[string]int{}, retired: map[string]bool{}}
	for i, p := range plans {
		if _, ok := o.byType[p.Entity().Type]; !ok {
			o.byType[p.Entity().Type] = i
		}
	}
	for _, t := range retired {
		o.retired[t] = true
	}
	return o
}

// entity is the index of the first plan of type typ; false for no plan's.
func (o *owners) entity(typ string) (int, bool) {
	e, ok := o.byType[typ]
	return e, ok
}

// owns reports whether an item of type typ is the mapping's (or retired).
func (o *owners) owns(typ string) bool {
	_, ok := o.byType[typ]
	return ok || o.retired[typ]
}

// compare is Compare with the source behind seams: src for counts, samples and
// order checks, derive for items.
func compare(ctx context.Context, src source, derive deriveFunc, m *mapping.Mapping, plans []*transform.Plan,
	client ReadAPI, opts Options) (*outcome.Result, error) {
	// The table first: an unreachable DynamoDB fails in seconds, before every
	// source is counted and read.
	if opts.Apply != nil && opts.InFlight != nil {
		return nil, errors.New("verify: Options.Apply with Options.InFlight: a follow keeps the table in step itself")
	}
	td, err := load.DescribeTable(ctx, client, m.Table.Name)
	if err != nil {
		return nil, err
	}
	c := &comparison{src: src, derive: derive, m: m, plans: plans, client: client, opts: opts, owners: newOwners(plans, opts.Retired),
		keyAttrs: m.Table.Keys(), orders: newOrderChecker(src, m, plans)}
	expected, err := c.countSources(ctx)
	if err != nil {
		return nil, err
	}
	res := &outcome.Result{Table: m.Table.Name, TableMissing: td == nil}
	if td != nil {
		// ItemCount is approximate (refreshed every few hours) and may exceed
		// the source: size for both.
		expected = max(expected, aws.ToInt64(td.ItemCount))
	}
	if c.work, err = extsort.NewGroup("pg2dynamo-verify-", patternBudget); err != nil {
		return nil, err
	}
	defer c.work.Close()
	// res.Files holds the lists, removed by res.Close.
	if res.Files, err = extsort.NewGroup("pg2dynamo-verify-lists-", listBudget); err != nil {
		return nil, err
	}
	if err := c.fill(ctx, res, expected); err != nil {
		res.Close()
		return nil, err
	}
	return res, nil
}

// countSources fills c.sourceRows and returns the items those rows give
// (mirrors too), to size the buckets.
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

// fill runs the source and table passes into buckets sized for about expected
// items each, compares them, checks counts, then runs the access patterns (not
// against a missing table).
func (c *comparison) fill(ctx context.Context, res *outcome.Result, expected int64) error {
	sp, err := newSpill(c.work, expected)
	if err != nil {
		return err
	}
	defer sp.Close()
	var samples []*patternSample
	if !c.opts.SkipPatterns {
		if samples, err = samplePatterns(ctx, c.src, c.m, c.plans, cmp(c.opts.Sample, 20), c.work); err != nil {
			return err
		}
	}
	if res.Entities, err = c.sourcePass(ctx, sp, samples); err != nil {
		return err
	}
	var covers map[string][]*gsiCover
	var aggs map[string][]*aggCount
	if !res.TableMissing {
		read := c.scanProgress()
		in := &dynamodb.ScanInput{TableName: aws.String(c.m.Table.Name)}
		if err := typeFilter(in, c.m.TypeAttribute, c.opts.Types); err != nil {
			return err
		}
		if c.opts.Apply == nil && c.opts.InFlight == nil {
			covers, aggs = gsiCovers(c.m, c.plans), aggCounts(c.plans) // a table in step with the snapshot
		}
		each := func(typ string, it map[string]types.AttributeValue) {
			countCover(covers, typ, it)
			countAgg(aggs, typ, it)
		}
		if err := scanInto(ctx, c.opts.Reads.Scan(c.client), in, cmp(c.opts.Segments, 4), c.keyAttrs, c.m.TypeAttribute, sp, read, each); err != nil {
			return err
		}
	}
	lo := c.listOptions(ctx)
	if c.opts.Apply != nil {
		if lo.apply, err = newApplyRun(c, res.Files, lo.maxListed); err != nil {
			return err
		}
	}
	probe := c.opts.Holders != nil && len(c.opts.Types) > 0 && !res.TableMissing
	if probe {
		if lo.held, err = newJournal(c.work, "held-*"); err != nil {
			return err
		}
	}
	if err := compareBuckets(res, sp, c.plans, lo); err != nil {
		return err
	}
	sp.Close() // the buckets' space, before the Queries
	if probe {
		rb := &readBack{client: c.opts.Reads.BatchGetItem(c.opts.Holders), table: c.m.Table.Name, keyAttrs: c.keyAttrs, keyTypes: c.m.Table.KeyTypes(), typeAttr: c.m.TypeAttribute,
			keysOnly: true, parallel: cmp(c.opts.Segments, 4)}
		res.Held = map[string]int64{}
		if err := rb.held(ctx, lo.held, c.opts.Types, res.Held); err != nil {
			return err
		}
	}
	derived := checkEntityCounts(res)
	if err := c.checkCovers(ctx, res, covers); err != nil {
		return err
	}
	if err := c.checkAggs(ctx, res, aggs); err != nil {
		return err
	}
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

func (c *comparison) listOptions(ctx context.Context) listOptions {
	lo := listOptions{ctx: ctx, sampleChanged: cmp(c.opts.SampleChanged, 20), maxListed: cmp(c.opts.MaxListed, MaxListed), owners: c.owners}
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
	return &readBack{client: c.opts.Reads.BatchGetItem(c.opts.ReadBack), table: c.m.Table.Name, keyAttrs: c.keyAttrs, keyTypes: c.m.Table.KeyTypes(), typeAttr: c.m.TypeAttribute}
}

// ScanName is the name verify's Progress is told the table's Scan under.
func ScanName(table string) string { return "Scan of " + table }

// scanProgress announces the Scan to c.opts.Progress (total: items derived) and
// returns the per-page callback, nil without Progress.
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

// sourcePass derives every item into sp, summing write units and offering each
// to the checks of samples whose partition it is in; it returns the per-entity
// counts the source pass knows.
func (c *comparison) sourcePass(ctx context.Context, sp spill, samples []*patternSample) ([]outcome.EntityCounts, error) {
	var checks []*patternCheck
	for _, ps := range samples {
		checks = append(checks, ps.checks...)
	}
	sink := &sourceSink{c: c, sp: sp, byAttr: indexChecks(checks), wcu: make([]int64, len(c.plans)), bytes: make([]int64, len(c.plans))}
	sum, err := c.derive(ctx, sink, func(r pipeline.Reject) error {
		c.rejected.add(c.plans, r)
		if c.opts.OnReject != nil {
			return c.opts.OnReject(r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []outcome.EntityCounts
	for i, e := range sum.Entities {
		c.derived += e.Items
		out = append(out, outcome.EntityCounts{Entity: e.Name, Type: c.plans[i].Entity().Type, SourceRows: c.sourceRows[i],
			Rows: e.Rows, Rejected: e.Rejected, ItemsPerRow: itemsPerRow(c.plans[i]), WriteUnits: sink.wcu[i], ExportBytes: sink.bytes[i]})
	}
	return out, nil
}

// sourceSink is the source pass's load.Sink. Safe for concurrent use.
type sourceSink struct {
	c      *comparison
	sp     spill
	byAttr map[string]map[string][]*patternCheck // indexChecks
	mu     sync.Mutex                            // guards wcu, bytes and the checks
	wcu    []int64                               // write units by entity
	bytes  []int64                               // export bytes by entity
}

// Write spills and accounts for every item of batch; it fails on a bucket
// write or an order check's encoding error.
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

// account adds the item's write units to its entity's and offers it to every
// check of its partitions.
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

func checkEntityCounts(r *outcome.Result) int64 {
	var derived int64
	for i := range r.Entities {
		checkCounts(&r.Entities[i])
		derived += r.Entities[i].Derived
	}
	return derived
}

// runPatterns runs every sample's checks in mapping order, sharing one
// IndexWait budget.
func (c *comparison) runPatterns(ctx context.Context, samples []*patternSample, derived int64) ([]outcome.PatternResult, error) {
	wait := newIndexWait(c.opts.IndexWait)
	ties := c.work.Sub(tiesBudget).NewSorter("ties", bytes.Compare)
	var out []outcome.PatternResult
	var refused func(item []byte) (bool, error)
	if rf, ok := c.opts.Apply.(Refusals); ok {
		refused = func(item []byte) (bool, error) {
			k, err := c.keyOf(item)
			return err == nil && rf.Refused(k[0], k[1]), err
		}
	}
	for _, ps := range samples {
		for _, pc := range ps.checks {
			pc.inFlight, pc.refused = c.itemInFlight, refused
			if projectsType(pc.gsi, c.m.TypeAttribute) {
				pc.typeAttr, pc.owners = c.m.TypeAttribute, c.owners
			}
		}
		ps.rejected = &c.rejected
		prs, err := ps.runAll(ctx, c.src, c.opts.Reads.Query(c.client), c.m.Table.Name, wait, c.orders, ties, derived, c.sourceRows)
		if err != nil {
			return nil, err
		}
		out = append(out, prs...)
	}
	return out, nil
}

// itemInFlight is Options.InFlight for a canonical item read at readAt or
// before; false without it.
func (c *comparison) itemInFlight(ctx context.Context, item []byte, readAt time.Time) (bool, error) {
	if c.opts.InFlight == nil {
		return false, nil
	}
	k, err := c.keyOf(item)
	if err != nil {
		return false, err
	}
	return c.opts.InFlight(ctx, k[0], k[1], readAt)
}

// keyOf is a canonical item's key texts (transform.ItemKey).
func (c *comparison) keyOf(item []byte) ([2]string, error) {
	attrs, err := ddbjson.DecodeItem(item)
	if err != nil {
		return [2]string{}, fmt.Errorf("verify: item %s: %w", item, err)
	}
	return transform.ItemKey(attrs, c.keyAttrs), nil
}

// Memory budgets in bytes, past which data goes to disk (see extsort): the
// derived items answering sampled Queries (all checks together), the lists'
// entries (all four together), and a GSI answer's run of equal sort keys while
// it is ordered.
const (
	patternBudget = 2 << 20
	listBudget    = 1 << 20
	tiesBudget    = 1 << 20
)

func itemsPerRow(p *transform.Plan) int64 {
	if p.KeySlots().Mirrored() {
		return 2
	}
	return 1
}

// isMirror reports whether batch[j] is a mirror item: the pipeline hands a
// row's items together in transform.Plan.Items order, the mirror last, sharing
// the row slice.
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

// MaxListed is Options.MaxListed's default, so a table unlike its source does
// not fill the disk.
const MaxListed = 100_000

func cmp(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// itemKey is an item's primary key as one string: partition key, NUL, sort key.
// When a binary key holds NULs, each is written NUL 0x01 and the keys are
// separated by two NULs (splitItemKey tells the forms apart).
func itemKey(item map[string]types.AttributeValue, keyAttrs [2]string) string {
	return joinItemKey(transform.ItemKey(item, keyAttrs))
}

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

// typeFilter keeps the items whose typeAttr is one of types (none: every item).
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

// scanInto reads in's table (load.ScanSegments) and spills
// every item with its typeAttr value, telling read (if set) each page's item
// count and each (if set) every item with its type, concurrently.
func scanInto(ctx context.Context, client dynamodb.ScanAPIClient, in *dynamodb.ScanInput, segments int,
	keyAttrs [2]string, typeAttr string, sp spill, read func(n int), each func(typ string, it map[string]types.AttributeValue)) error {
	return load.ScanSegments(ctx, client, in, segments, func(items []map[string]types.AttributeValue) error {
		for _, it := range items {
			typ := load.StringAttr(it, typeAttr)
			if each != nil {
				each(typ, it)
			}
			if err := sp.add(fromTable, -1, itemKey(it, keyAttrs), ddbjson.Canonical(it), typ); err != nil {
				return err
			}
		}
		if read != nil {
			read(len(items))
		}
		return nil
	})
}

// listOptions tune compareBuckets' lists.
type listOptions struct {
	// ctx is the comparison's, for apply.
	ctx                      context.Context
	sampleChanged, maxListed int
	// inFlight says whether a differing key's item changed after the snapshot
	// (Options.InFlight).
	inFlight func(key string) (bool, error)
	// writeUnits prices writing a canonical JSON item (Options.ChangeCost,
	// Options.Apply).
	writeUnits func(item []byte) (int64, error)
	// apply, if set, is handed the differences (Options.Apply).
	apply  *applyRun
	owners *owners
	// held journals every missing key, re-read for Options.Holders.
	held *journal
}

// compareBuckets classifies every key one bucket at a time into r's counts and
// lists: derived only is missing; table only is extra (stale when of a mapped
// type, else unmanaged); both is unchanged or changed by canonical content;
// derived more than once is a duplicate.
func compareBuckets(r *outcome.Result, sp spill, plans []*transform.Plan, opts listOptions) error {
	bc := newBucketComparer(r, plans, opts)
	if err := sp.each(bc.bucket); err != nil {
		return err
	}
	bc.finish()
	return nil
}

// bucketComparer classifies one bucket's records at a time into a Result's
// counts and list builders.
type bucketComparer struct {
	r             *outcome.Result
	plans         []*transform.Plan
	owners        *owners
	sampleChanged int
	missing       *outcome.ListBuilder[outcome.ItemRef]
	extra         *outcome.ListBuilder[outcome.ItemRef]
	dups          *outcome.ListBuilder[outcome.ItemRef]
	changed       *outcome.ListBuilder[outcome.ChangedItem]
	inFlight      *outcome.ListBuilder[outcome.ItemRef]
	found         int64 // changed items found, in bucket order
	isInFlight    func(key string) (bool, error)
	writeUnits    func(item []byte) (int64, error) // listOptions.writeUnits
	ctx           context.Context                  // listOptions.ctx
	apply         *applyRun                        // listOptions.apply
	held          *journal                         // listOptions.held
}

func newBucketComparer(r *outcome.Result, plans []*transform.Plan, opts listOptions) *bucketComparer {
	return &bucketComparer{r: r, plans: plans, owners: opts.owners, sampleChanged: opts.sampleChanged,
		missing:    outcome.NewListBuilder[outcome.ItemRef](r.Files, "missing", opts.maxListed),
		extra:      outcome.NewListBuilder[outcome.ItemRef](r.Files, "extra", opts.maxListed),
		dups:       outcome.NewListBuilder[outcome.ItemRef](r.Files, "duplicates", opts.maxListed),
		changed:    outcome.NewListBuilder[outcome.ChangedItem](r.Files, "changed", opts.maxListed),
		inFlight:   outcome.NewListBuilder[outcome.ItemRef](r.Files, "in-flight", opts.maxListed),
		isInFlight: opts.inFlight, writeUnits: opts.writeUnits, ctx: opts.ctx, apply: opts.apply, held: opts.held}
}

// flight counts and lists the item of key (entity e, -1 for none) and returns
// true when it differs because it changed after the snapshot.
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
	return true, bc.inFlight.Add(key, itemRef(key, typ))
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

// sourceItems returns each key's first derived item and the others with it
// (duplicates, counted and listed): the table holds whichever a run wrote last.
func (bc *bucketComparer) sourceItems(recs []record) (map[string]record, map[string][]record, error) {
	source := map[string]record{}
	others := map[string][]record{}
	for _, rc := range recs {
		if rc.side != fromSource {
			continue
		}
		if _, dup := source[rc.key]; dup {
			// The duplicate check rejects what migrate rejects, so migrate
			// wrote both.
			bc.r.Entities[rc.entity].Duplicates++
			if err := bc.dups.Add(rc.key, itemRef(rc.key, bc.typeOf(rc.entity))); err != nil {
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

// tableItem classifies table record rc: extra without a derived item of its
// key, unchanged when its content is one's, else changed. It marks derived keys
// it finds in seen.
func (bc *bucketComparer) tableItem(rc record, source map[string]record, others map[string][]record, seen map[string]bool) error {
	if e, ok := bc.owners.entity(rc.typ); ok {
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

// extraItem counts and lists rc: stale when its type is an entity's, else
// unmanaged.
func (bc *bucketComparer) extraItem(rc record) error {
	e, mapped := bc.owners.entity(rc.typ)
	if !mapped {
		e = -1
	}
	if in, err := bc.flight(rc.key, rc.typ, e); in || err != nil {
		return err
	}
	if bc.owners.owns(rc.typ) {
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
	return bc.extra.Add(rc.key, itemRef(rc.key, rc.typ))
}

// changedItem counts and lists rc, differing from s, with its attribute changes
// and, for the first sampleChanged, both whole items; past the list's cap it is
// only counted.
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
	if bc.changed.Full() {
		return bc.changed.Add(rc.key, outcome.ChangedItem{}) // counted only
	}
	ci := outcome.ChangedItem{ItemRef: itemRef(rc.key, bc.typeOf(s.entity)), Changes: attrChanges(rc.item, s.item)}
	if bc.found <= int64(bc.sampleChanged) {
		ci.Before, ci.After = rc.item, s.item
	}
	return bc.changed.Add(rc.key, ci)
}

// missingItems counts and lists the derived keys of recs not seen in the table,
// in record order so a truncated list is stable.
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
		if err := bc.missing.Add(rc.key, itemRef(rc.key, bc.typeOf(s.entity))); err != nil {
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

// put hands s to listOptions.apply, if any, with its write units; missing: the
// table had no item of its key.
func (bc *bucketComparer) put(key string, s record, units int64, missing bool) error {
	if bc.apply == nil {
		return nil
	}
	e := bc.plans[s.entity].Entity()
	return bc.apply.putItem(bc.ctx, Write{ItemRef: itemRef(key, e.Type), Entity: e.Name, WriteUnits: units, Missing: missing}, key, s.item)
}

// price adds to *sum, and returns, the write units of the largest of items
// (canonical JSON) when changes are priced (listOptions.writeUnits); 0
// otherwise.
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
	r.Missing, r.Counts.Missing = bc.missing.List()
	r.Extra, r.Counts.Extra = bc.extra.List()
	r.Duplicates, r.Counts.Duplicates = bc.dups.List()
	r.Changed, r.Counts.Changed = bc.changed.List()
	r.InFlight, r.Counts.InFlight = bc.inFlight.List()
	c := r.Counts
	r.ListsTruncated = c.Missing.Truncated() || c.Extra.Truncated() || c.Duplicates.Truncated() || c.Changed.Truncated() || c.InFlight.Truncated()
}

// typeOf is the item type of entity (an index in the plans).
func (bc *bucketComparer) typeOf(entity int) string { return bc.plans[entity].Entity().Type }

// itemRef names the item of key (itemKey) and type typ.
func itemRef(key, typ string) outcome.ItemRef {
	pk, sk := splitItemKey(key)
	return outcome.ItemRef{PK: pk, SK: sk, Type: typ}
}

// attrChanges lists the attributes whose canonical values differ.
func attrChanges(before, after []byte) []outcome.AttrChange {
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
	var out []outcome.AttrChange
	for _, k := range slices.Sorted(maps.Keys(names)) {
		if !bytes.Equal(b[k], a[k]) {
			out = append(out, outcome.AttrChange{Attribute: k, Before: nullIfEmpty(b[k]), After: nullIfEmpty(a[k])})
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
