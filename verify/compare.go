package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

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
	// Sample is the number of parameter tuples tried per access pattern
	// (default 20); all of them when the source has no more.
	Sample int
	// SampleChanged is how many changed items keep their whole before and
	// after (default 20); every changed item keeps its attribute changes.
	SampleChanged int
	// SkipPatterns leaves the access patterns out.
	SkipPatterns bool
	// IndexWait is how long, in all, access-pattern checks on a GSI that
	// do not match are queried again: a GSI is updated asynchronously and
	// read eventually consistently, so a Query right after a load can miss
	// the latest writes. Zero or less: no second query.
	// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Writes
	IndexWait time.Duration
	// Progress, if set, is told of the source pass.
	Progress pipeline.Progress
}

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

// EntityCounts compares one entity's items. The source's own count comes
// first: SourceRows is PostgreSQL's count(*) of the entity's source, run
// by verify in its snapshot, apart from the transform. Each row not
// rejected must give ItemsPerRow items (2 with a mirror), so
//
//	Expected = (SourceRows − Rejected) × ItemsPerRow
//
// and the transform must derive exactly that many items, all with
// distinct keys: Derived = Expected and Duplicates = 0. Otherwise
// CountProblem says what differs, and verification fails.
type EntityCounts struct {
	Entity string `json:"entity"`
	Type   string `json:"type"`
	// SourceRows is PostgreSQL's count(*) of the entity's source.
	SourceRows int64 `json:"source_rows"`
	// Rows is the number of rows the transform read; Rejected the rows
	// that give no item, rejected as migrate rejects them (a bad key, a
	// value DynamoDB cannot hold, a duplicate key the run's duplicate
	// check finds), each listed by migrate in its rejects file.
	Rows     int64 `json:"rows"`
	Rejected int64 `json:"rejected"`
	// ItemsPerRow is 1, or 2 for an entity with a mirror item.
	ItemsPerRow int64 `json:"items_per_row"`
	// Expected items: (SourceRows − Rejected) × ItemsPerRow.
	Expected int64 `json:"expected"`
	// Derived is the number of distinct items the transform derived;
	// Duplicates the derived items whose key an earlier derived item
	// already has (of this entity or another), which no duplicate check
	// rejected: migrate writes them over each other and one survives.
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
	// WriteUnits a run writing every derived item consumes.
	WriteUnits int64 `json:"write_units"`
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
	// no item).
	Note string `json:"note,omitempty"`
	// Retries counts the GSI's re-reads (Options.IndexWait) before this
	// result.
	Retries int `json:"retries,omitempty"`
}

// Result is the comparison of the table with what the source derives.
type Result struct {
	Table string `json:"table"`
	// TableMissing is true when the table does not exist: every item is
	// missing (new).
	TableMissing bool           `json:"table_missing"`
	Entities     []EntityCounts `json:"entities"`
	// Missing items are derived from the source but not in the table.
	Missing []ItemRef `json:"missing"`
	// Extra items are in the table but not derived from the source: of a
	// mapped type (stale) or not (unmanaged).
	Extra []ItemRef `json:"extra"`
	// Duplicates are keys the source derives more than once that no
	// duplicate check rejected (EntityCounts.Duplicates), one entry per
	// extra item, typed by its entity.
	Duplicates []ItemRef     `json:"duplicates"`
	Stale      int64         `json:"stale"`
	Unmanaged  int64         `json:"unmanaged"`
	Changed    []ChangedItem `json:"changed"`
	// ListsTruncated is true when a list holds only its first MaxListed
	// keys (in bucket order); the counts per entity are complete.
	ListsTruncated bool            `json:"lists_truncated,omitempty"`
	Patterns       []PatternResult `json:"patterns,omitempty"`
}

// OK reports whether the source's counts agree with the items derived
// (EntityCounts), the table holds exactly the derived items, and every
// access pattern returned what it should, in PostgreSQL's order.
func (r *Result) OK() bool {
	if r.TableMissing || len(r.Missing) > 0 || len(r.Extra) > 0 || len(r.Changed) > 0 || len(r.Duplicates) > 0 {
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
// compares the two by canonical content, bucket by bucket on disk so that
// memory does not grow with the table. It checks the items derived per
// entity against PostgreSQL's own count(*) of its source, less the rows
// rejected (EntityCounts). Then it runs each access pattern for parameters
// sampled from the source and compares the Query's items, in order, with
// the derived items that must answer it; a check on a GSI that does not
// match is queried again within opts.IndexWait. Items that match are then
// checked to come back in the order PostgreSQL gives their source values
// (OrderMismatch), and a pattern that could not be run, or whose every
// Query found nothing, fails (patternSample.runAll). It writes nothing to
// DynamoDB. It fails, before reading the source, when DynamoDB cannot be
// reached (load.DescribeTable), and on a source, Scan or Query error; a
// mismatch is a result, not an error.
func Compare(ctx context.Context, src *extract.Source, m *mapping.Mapping, plans []*transform.Plan,
	client *dynamodb.Client, opts Options) (*Result, error) {
	segments := cmp(opts.Segments, 4)
	res := &Result{Table: m.Table.Name}

	// The table first: a DynamoDB that cannot be reached fails the command
	// in seconds, before the source is counted (count(*) of every table)
	// and read.
	td, err := load.DescribeTable(ctx, client, m.Table.Name)
	if err != nil {
		return nil, err
	}
	// PostgreSQL's own count of every source, in the snapshot: what the
	// items derived are checked against, apart from the transform.
	sourceRows := make([]int64, len(plans))
	var expected int64
	for i, p := range plans {
		if sourceRows[i], err = src.Count(ctx, p.Entity()); err != nil {
			return nil, err
		}
		expected += sourceRows[i] * itemsPerRow(p)
	}
	if td == nil {
		res.TableMissing = true
	} else {
		// The table may hold more than the source derives (an approximate
		// count, refreshed by DynamoDB every few hours): size for both.
		expected = max(expected, aws.ToInt64(td.ItemCount))
	}
	sp, err := newSpill(expected)
	if err != nil {
		return nil, err
	}
	defer sp.remove()

	var samples []*patternSample
	if !opts.SkipPatterns {
		if samples, err = samplePatterns(ctx, src, m, plans, cmp(opts.Sample, 20)); err != nil {
			return nil, err
		}
	}
	var checks []*patternCheck
	for _, ps := range samples {
		checks = append(checks, ps.checks...)
	}
	byAttr := indexChecks(checks)

	// Source pass: the real pipeline into a sink that spills and matches.
	keyAttrs := [2]string{m.Table.PartitionKey, m.Table.SortKey}
	wcu := make([]int64, len(plans))
	var mu sync.Mutex
	sink := sinkFunc(func(_ context.Context, batch []transform.Item) error {
		for j, it := range batch {
			key := itemKey(it.Attrs, keyAttrs)
			if err := sp.add(fromSource, it.Entity, key, Canonical(it.Attrs)); err != nil {
				return err
			}
			w := transform.WriteUnits(m, it.Attrs)
			mirror := isMirror(batch, j, plans)
			mu.Lock()
			wcu[it.Entity] += w
			for attr, bySample := range byAttr {
				if v, ok := it.Attrs[attr].(*types.AttributeValueMemberS); ok {
					for _, c := range bySample[v.Value] {
						c.offer(m, it, mirror)
					}
				}
			}
			mu.Unlock()
		}
		return nil
	})
	// The pipeline's own duplicate check rejects exactly the rows migrate
	// rejects (whole rows, mirrors included), so only their items are
	// expected, matched against patterns and costed.
	sum, err := pipeline.Run(ctx, src, m, plans, sink, pipeline.Options{Concurrency: 1, Progress: opts.Progress})
	if err != nil {
		return nil, err
	}
	for i, e := range sum.Entities {
		res.Entities = append(res.Entities, EntityCounts{Entity: e.Name, Type: plans[i].Entity().Type,
			SourceRows: sourceRows[i], Rows: e.Rows, Rejected: e.Rejected, ItemsPerRow: itemsPerRow(plans[i]), WriteUnits: wcu[i]})
	}

	// Table pass: parallel segmented Scan.
	if !res.TableMissing {
		if err := scanInto(ctx, client, m.Table.Name, segments, keyAttrs, sp); err != nil {
			return nil, err
		}
	}

	if err := res.compareBuckets(sp, m, plans, cmp(opts.SampleChanged, 20)); err != nil {
		return nil, err
	}
	var derived int64
	for i := range res.Entities {
		res.Entities[i].checkCounts()
		derived += res.Entities[i].Derived
	}
	res.Missing, res.Extra, res.Changed = nonNil(res.Missing), nonNil(res.Extra), nonNil(res.Changed)
	res.Duplicates = nonNil(res.Duplicates)
	if !res.TableMissing {
		wait := newIndexWait(opts.IndexWait)
		orders := newOrderChecker(src, m, plans)
		for _, ps := range samples {
			prs, err := ps.runAll(ctx, client, m.Table.Name, wait, orders, derived, sourceRows)
			if err != nil {
				return nil, err
			}
			res.Patterns = append(res.Patterns, prs...)
		}
	}
	return res, nil
}

// itemsPerRow is the number of items a row of p's entity gives: 2 with a
// mirror, else 1.
func itemsPerRow(p *transform.Plan) int64 {
	if p.Entity().Mirror != nil {
		return 2
	}
	return 1
}

// isMirror reports whether batch[j] is its entity's mirror item. The
// pipeline hands a row's items to the sink together, in one batch, in the
// order transform.Plan.Items appends them: the item, then its mirror, both
// holding the row's one values slice (transform.Item.Row). So a mirror is
// an item of a mirrored entity whose row is the previous item's, that
// previous item not being a mirror itself.
func isMirror(batch []transform.Item, j int, plans []*transform.Plan) bool {
	it := batch[j]
	if plans[it.Entity].Entity().Mirror == nil || j == 0 {
		return false
	}
	prev := batch[j-1]
	if prev.Entity != it.Entity || len(prev.Row) == 0 || len(prev.Row) != len(it.Row) || &prev.Row[0] != &it.Row[0] {
		return false
	}
	return !isMirror(batch, j-1, plans)
}

// MaxListed bounds the keys kept per list (missing, extra, changed), so
// that a table unlike its source does not fill memory; the counts stay
// exact and ListsTruncated says when a list was cut.
const MaxListed = 100_000

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func cmp(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

type sinkFunc func(context.Context, []transform.Item) error

func (f sinkFunc) Write(ctx context.Context, b []transform.Item) error { return f(ctx, b) }

// itemKey is an item's primary key (transform.ItemKey) as one string: the
// partition key, a NUL, the sort key.
func itemKey(item map[string]types.AttributeValue, keyAttrs [2]string) string {
	k := transform.ItemKey(item, keyAttrs)
	return k[0] + "\x00" + k[1]
}

// scanInto reads the whole table with segments parallel Scans (strongly
// consistent) and spills every item.
func scanInto(ctx context.Context, client *dynamodb.Client, table string, segments int, keyAttrs [2]string, sp *spill) error {
	g, gctx := errgroup.WithContext(ctx)
	for seg := range segments {
		g.Go(func() error {
			p := dynamodb.NewScanPaginator(client, &dynamodb.ScanInput{TableName: aws.String(table),
				Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(int32(segments)), ConsistentRead: aws.Bool(true)})
			for p.HasMorePages() {
				page, err := p.NextPage(gctx)
				if err != nil {
					return fmt.Errorf("scan %s segment %d: %w", table, seg, err)
				}
				for _, it := range page.Items {
					if err := sp.add(fromTable, -1, itemKey(it, keyAttrs), Canonical(it)); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// compareBuckets classifies every key, one bucket in memory at a time.
func (r *Result) compareBuckets(sp *spill, m *mapping.Mapping, plans []*transform.Plan, sampleChanged int) error {
	byType := map[string]int{}
	for i, p := range plans {
		if _, ok := byType[p.Entity().Type]; !ok {
			byType[p.Entity().Type] = i
		}
	}
	ref := func(key string, typ string) ItemRef {
		pk, sk, _ := strings.Cut(key, "\x00")
		return ItemRef{PK: pk, SK: sk, Type: typ}
	}
	err := sp.each(func(recs []record) error {
		// The first derived item of each key, and the others with that key
		// (duplicates): the table holds whichever a run wrote last.
		source := map[string]record{}
		others := map[string][]record{}
		for _, rc := range recs {
			if rc.side != fromSource {
				continue
			}
			if _, dup := source[rc.key]; dup {
				// Not rejected by the pipeline's duplicate check, which
				// rejects what migrate rejects: migrate wrote both.
				r.Entities[rc.entity].Duplicates++
				r.Duplicates = r.keep(r.Duplicates, ref(rc.key, plans[rc.entity].Entity().Type))
				others[rc.key] = append(others[rc.key], rc)
				continue
			}
			source[rc.key] = rc
			r.Entities[rc.entity].Derived++
		}
		seen := map[string]bool{}
		for _, rc := range recs {
			if rc.side != fromTable {
				continue
			}
			typ := typeOf(rc.item, m.TypeAttribute)
			if e, ok := byType[typ]; ok {
				r.Entities[e].Table++
			}
			s, ok := source[rc.key]
			if !ok {
				r.Extra = r.keep(r.Extra, ref(rc.key, typ))
				if e, mapped := byType[typ]; mapped {
					r.Stale++
					r.Entities[e].Stale++
				} else {
					r.Unmanaged++
				}
				continue
			}
			seen[rc.key] = true
			if bytes.Equal(s.item, rc.item) || slices.ContainsFunc(others[rc.key], func(o record) bool { return bytes.Equal(o.item, rc.item) }) {
				r.Entities[s.entity].Unchanged++
				continue
			}
			r.Entities[s.entity].Changed++
			ci := ChangedItem{ItemRef: ref(rc.key, plans[s.entity].Entity().Type), Changes: attrChanges(rc.item, s.item)}
			if len(r.Changed) < sampleChanged {
				ci.Before, ci.After = rc.item, s.item
			}
			if len(r.Changed) < MaxListed {
				r.Changed = append(r.Changed, ci)
			} else {
				r.ListsTruncated = true
			}
		}
		for key, s := range source {
			if !seen[key] {
				r.Entities[s.entity].Missing++
				r.Missing = r.keep(r.Missing, ref(key, plans[s.entity].Entity().Type))
			}
		}
		return nil
	})
	less := func(a, b ItemRef) int { return strings.Compare(a.PK+"\x00"+a.SK, b.PK+"\x00"+b.SK) }
	slices.SortFunc(r.Missing, less)
	slices.SortFunc(r.Extra, less)
	slices.SortFunc(r.Duplicates, less)
	slices.SortFunc(r.Changed, func(a, b ChangedItem) int { return less(a.ItemRef, b.ItemRef) })
	return err
}

// keep appends ref unless the list is full.
func (r *Result) keep(list []ItemRef, ref ItemRef) []ItemRef {
	if len(list) >= MaxListed {
		r.ListsTruncated = true
		return list
	}
	return append(list, ref)
}

func typeOf(item []byte, attr string) string {
	var m map[string]map[string]any
	if json.Unmarshal(item, &m) != nil {
		return ""
	}
	s, _ := m[attr]["S"].(string)
	return s
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
