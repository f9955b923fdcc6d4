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
	// MaxListed is how many entries each of the Result's lists keeps
	// (default MaxListed); the counts stay exact (Result.Counts).
	MaxListed int
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
	Duplicates List[ItemRef]     `json:"duplicates"`
	Stale      int64             `json:"stale"`
	Unmanaged  int64             `json:"unmanaged"`
	Changed    List[ChangedItem] `json:"changed"`
	// ListsTruncated is true when a list holds only its first
	// Options.MaxListed entries (in bucket order); Counts and the counts
	// per entity are complete.
	ListsTruncated bool `json:"lists_truncated,omitempty"`
	// Counts gives the exact length of each list, and how many of its
	// entries are listed.
	Counts   ListCounts      `json:"counts"`
	Patterns []PatternResult `json:"patterns,omitempty"`

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
	r.Missing, r.Extra, r.Duplicates, r.Changed = List[ItemRef]{}, List[ItemRef]{}, List[ItemRef]{}, List[ChangedItem]{}
	return err
}

// OK reports whether the source's counts agree with the items derived
// (EntityCounts), the table holds exactly the derived items, and every
// access pattern returned what it should, in PostgreSQL's order.
func (r *Result) OK() bool {
	c := r.Counts
	if r.TableMissing || c.Missing.Total > 0 || c.Extra.Total > 0 || c.Changed.Total > 0 || c.Duplicates.Total > 0 {
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
// the derived items that must answer it, which it keeps on disk; a check
// on a GSI that does not match is queried again within opts.IndexWait.
// Items that match are then checked to come back in the order PostgreSQL
// gives their source values (OrderMismatch), and a pattern that could not
// be run, or whose every Query found nothing, fails
// (patternSample.runAll). It writes nothing to DynamoDB. Its temporary
// files are in os.TempDir: the buckets and the patterns' answers are
// removed when it returns, the Result's lists by Result.Close, which the
// caller must call. It fails, before reading the source, when DynamoDB
// cannot be reached (load.DescribeTable), and on a source, Scan, Query or
// temporary file error; a mismatch is a result, not an error.
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
	// work holds the buckets and the patterns' expected answers, removed
	// on return; res.files the lists, removed by res.Close.
	work, err := newSortGroup("pg2dynamo-verify-", patternBudget)
	if err != nil {
		return nil, err
	}
	defer work.close()
	if res.files, err = newSortGroup("pg2dynamo-verify-lists-", listBudget); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			res.Close()
		}
	}()
	sp, err := newSpill(work, expected)
	if err != nil {
		return nil, err
	}
	defer sp.close()

	orders := newOrderChecker(src, m, plans)
	var samples []*patternSample
	if !opts.SkipPatterns {
		if samples, err = samplePatterns(ctx, src, m, plans, cmp(opts.Sample, 20), work); err != nil {
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
			if err := sp.add(fromSource, it.Entity, key, Canonical(it.Attrs), ""); err != nil {
				return err
			}
			w := transform.WriteUnits(m, it.Attrs)
			mirror := isMirror(batch, j, plans)
			mu.Lock()
			wcu[it.Entity] += w
			for attr, bySample := range byAttr {
				if v, ok := it.Attrs[attr].(*types.AttributeValueMemberS); ok {
					for _, c := range bySample[v.Value] {
						if err := c.offer(m, orders, it, mirror); err != nil {
							mu.Unlock()
							return err
						}
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
	sum, err := pipeline.Run(ctx, pipeline.Postgres(src), m, plans, sink, pipeline.Options{Concurrency: 1, Progress: opts.Progress})
	if err != nil {
		return nil, err
	}
	for i, e := range sum.Entities {
		res.Entities = append(res.Entities, EntityCounts{Entity: e.Name, Type: plans[i].Entity().Type,
			SourceRows: sourceRows[i], Rows: e.Rows, Rejected: e.Rejected, ItemsPerRow: itemsPerRow(plans[i]), WriteUnits: wcu[i]})
	}

	// Table pass: parallel segmented Scan.
	if !res.TableMissing {
		if err := scanInto(ctx, client, m.Table.Name, segments, keyAttrs, m.TypeAttribute, sp); err != nil {
			return nil, err
		}
	}

	if err := res.compareBuckets(sp, m, plans, listOptions{sampleChanged: cmp(opts.SampleChanged, 20), maxListed: cmp(opts.MaxListed, MaxListed)}); err != nil {
		return nil, err
	}
	sp.close() // the buckets' space, before the Queries
	var derived int64
	for i := range res.Entities {
		res.Entities[i].checkCounts()
		derived += res.Entities[i].Derived
	}
	if !res.TableMissing {
		wait := newIndexWait(opts.IndexWait)
		ties := work.sub(tiesBudget).newSorter("ties", bytes.Compare)
		for _, ps := range samples {
			prs, err := ps.runAll(ctx, client, m.Table.Name, wait, orders, ties, derived, sourceRows)
			if err != nil {
				return nil, err
			}
			res.Patterns = append(res.Patterns, prs...)
		}
	}
	ok = true
	return res, nil
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

// MaxListed is the default of Options.MaxListed: the entries kept per
// list (missing, extra, duplicates, changed), so that a table unlike its
// source does not fill the disk with lists nobody reads; the counts stay
// exact (Result.Counts), and ListsTruncated says when a list was cut.
const MaxListed = 100_000

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

// scanPageItems bounds the items of one Scan page (ScanInput.Limit):
// the SDK decodes a whole page at once, and a page of DynamoDB's 1 MB of
// small items is several MB of Go values per segment. At 1M items on the
// strategies mapping, 200 items a page took the live heap's peak from 13
// to 10.5 MB (and peak RSS from 98 to 83 MB) against 500, at the same
// speed against dynalite.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Scan.html#Scan.Limit
const scanPageItems = 200

// scanInto reads the whole table with segments parallel Scans (strongly
// consistent) and spills every item with the value of its type
// attribute typeAttr.
func scanInto(ctx context.Context, client *dynamodb.Client, table string, segments int, keyAttrs [2]string, typeAttr string, sp *spill) error {
	g, gctx := errgroup.WithContext(ctx)
	for seg := range segments {
		g.Go(func() error {
			p := dynamodb.NewScanPaginator(client, &dynamodb.ScanInput{TableName: aws.String(table),
				Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(int32(segments)), ConsistentRead: aws.Bool(true),
				Limit: aws.Int32(scanPageItems)})
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
					if err := sp.add(fromTable, -1, itemKey(it, keyAttrs), Canonical(it), t); err != nil {
						return err
					}
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
	sampleChanged, maxListed int
}

// compareBuckets classifies every key, one bucket in memory at a time,
// counting per entity and listing the keys in r's lists (in r.files).
func (r *Result) compareBuckets(sp *spill, m *mapping.Mapping, plans []*transform.Plan, opts listOptions) error {
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
	missing := newListBuilder[ItemRef](r.files, "missing", opts.maxListed)
	extra := newListBuilder[ItemRef](r.files, "extra", opts.maxListed)
	dups := newListBuilder[ItemRef](r.files, "duplicates", opts.maxListed)
	changed := newListBuilder[ChangedItem](r.files, "changed", opts.maxListed)
	var found int64 // changed items found, in bucket order
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
				if err := dups.add(rc.key, ref(rc.key, plans[rc.entity].Entity().Type)); err != nil {
					return err
				}
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
			if e, ok := byType[rc.typ]; ok {
				r.Entities[e].Table++
			}
			s, ok := source[rc.key]
			if !ok {
				if e, mapped := byType[rc.typ]; mapped {
					r.Stale++
					r.Entities[e].Stale++
				} else {
					r.Unmanaged++
				}
				if err := extra.add(rc.key, ref(rc.key, rc.typ)); err != nil {
					return err
				}
				continue
			}
			seen[rc.key] = true
			if bytes.Equal(s.item, rc.item) || slices.ContainsFunc(others[rc.key], func(o record) bool { return bytes.Equal(o.item, rc.item) }) {
				r.Entities[s.entity].Unchanged++
				continue
			}
			r.Entities[s.entity].Changed++
			found++
			if changed.full() {
				changed.total++
				continue
			}
			ci := ChangedItem{ItemRef: ref(rc.key, plans[s.entity].Entity().Type), Changes: attrChanges(rc.item, s.item)}
			if found <= int64(opts.sampleChanged) {
				ci.Before, ci.After = rc.item, s.item
			}
			if err := changed.add(rc.key, ci); err != nil {
				return err
			}
		}
		// In record order, so that a truncated list keeps the same keys on
		// every run.
		for _, rc := range recs {
			if rc.side != fromSource || seen[rc.key] {
				continue
			}
			seen[rc.key] = true
			s := source[rc.key]
			r.Entities[s.entity].Missing++
			if err := missing.add(rc.key, ref(rc.key, plans[s.entity].Entity().Type)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.Missing, r.Counts.Missing = missing.list()
	r.Extra, r.Counts.Extra = extra.list()
	r.Duplicates, r.Counts.Duplicates = dups.list()
	r.Changed, r.Counts.Changed = changed.list()
	c := r.Counts
	r.ListsTruncated = c.Missing.Truncated() || c.Extra.Truncated() || c.Duplicates.Truncated() || c.Changed.Truncated()
	return nil
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
