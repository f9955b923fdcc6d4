package verify

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// BatchGetItem answers from the fake's items, leaving the last key of a
// request of more than one unprocessed on every first call, so that the
// read-back has to ask again.
func (f *fakeTable) BatchGetItem(_ context.Context, in *dynamodb.BatchGetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{}, UnprocessedKeys: map[string]types.KeysAndAttributes{}}
	for table, ka := range in.RequestItems {
		keys := ka.Keys
		if f.batchGets++; f.batchGets%2 == 1 && len(keys) > 1 {
			out.UnprocessedKeys[table] = types.KeysAndAttributes{Keys: keys[len(keys)-1:], ConsistentRead: ka.ConsistentRead}
			keys = keys[:len(keys)-1]
		}
		for _, k := range keys {
			if i := f.index(sValue(k, f.keys[0]), sValue(k, f.keys[1])); i >= 0 {
				out.Responses[table] = append(out.Responses[table], f.items[i])
			}
		}
	}
	return out, nil
}

// index is the position of the item of key (pk, sk) in f.items, or -1;
// f.mu is held.
func (f *fakeTable) index(pk, sk string) int {
	return slices.IndexFunc(f.items, func(it item) bool { return sValue(it, f.keys[0]) == pk && sValue(it, f.keys[1]) == sk })
}

// fakeApplier applies writes to a fakeTable as they are handed over (a
// conditional delete as DynamoDB does it), and records them. A put of a
// key in garble writes another note than the one derived.
type fakeApplier struct {
	table        *fakeTable
	typeAttr     string
	garble       map[string]bool
	puts, dels   []outcome.ItemRef
	units, waits int64
}

func (a *fakeApplier) Put(_ context.Context, w Write) error {
	a.puts = append(a.puts, w.ItemRef)
	a.units += w.WriteUnits
	it := w.Item
	if a.garble[w.PK+" "+w.SK] {
		it = with(it, "note", &types.AttributeValueMemberS{Value: "garbled"})
	}
	a.table.mu.Lock()
	defer a.table.mu.Unlock()
	if i := a.table.index(w.PK, w.SK); i >= 0 {
		a.table.items[i] = it
	} else {
		a.table.items = append(a.table.items, it)
	}
	return nil
}

func (a *fakeApplier) Delete(_ context.Context, w Write) error {
	a.dels = append(a.dels, w.ItemRef)
	a.units += w.WriteUnits
	a.table.mu.Lock()
	defer a.table.mu.Unlock()
	if i := a.table.index(w.PK, w.SK); i >= 0 && sValue(a.table.items[i], a.typeAttr) == w.Type {
		a.table.items = slices.Delete(a.table.items, i, i+1)
	}
	return nil
}

func (a *fakeApplier) Wait(context.Context) error { a.waits++; return nil }

// Compare with Apply hands over exactly the differences it finds: the new
// and changed items to put, whole as derived, and, once the counts agree,
// the stale items to delete (never another writer's); it reads every key
// back, and runs the access patterns on the table as applied. A put that
// did not land as derived is listed unapplied; a stale item another
// writer retyped is left to it; with the derivation in doubt, nothing is
// deleted.
func TestCompareApplies(t *testing.T) {
	const (
		c10 = "CUSTOMER#0000000010"
		c11 = "CUSTOMER#0000000011"
		o2  = "ORDER#0000000002"
		o3  = "ORDER#0000000003"
		o99 = "ORDER#0000000099"
	)
	m, base := shop(t, "")
	drift := func(items []item) []item {
		items = without(items, c10, o2) // new
		for i, it := range items {
			if sValue(it, "SK") == o3 {
				items[i] = with(it, "note", &types.AttributeValueMemberS{Value: "X"}) // changed
			}
		}
		stale := with(with(items[3], "SK", &types.AttributeValueMemberS{Value: o99}), "order_id", &types.AttributeValueMemberN{Value: "99"})
		other := item{"PK": &types.AttributeValueMemberS{Value: "LOG#1"}, "SK": &types.AttributeValueMemberS{Value: "X"}, "type": &types.AttributeValueMemberS{Value: "Log"}}
		return append(items, stale, other)
	}
	wantPut := []outcome.ItemRef{{PK: c10, SK: o2, Type: "Order"}, {PK: c11, SK: o3, Type: "Order"}}
	wantDel := []outcome.ItemRef{{PK: c10, SK: o99, Type: "Order"}}
	tests := []struct {
		name      string
		opts      Options
		garble    map[string]bool
		retype    bool // another writer retypes the stale item after the Scan
		duplicate bool // the source derives a key twice
		wantPut   []outcome.ItemRef
		wantDel   []outcome.ItemRef
		want      outcome.Applied // its counts and read-back, not its lists
		wantOK    bool
		wantTable int // items in the table after
		wantUnapp []outcome.ItemRef
		wantUnits int64
		wantWaits int64
		// wantProblems are the failing access patterns, run after the writes.
		wantProblems []string
	}{{
		name: "puts and deletes, read back", wantPut: wantPut, wantDel: wantDel, wantOK: true, wantTable: 9, wantUnits: 3, wantWaits: 2,
		want: outcome.Applied{Counts: outcome.AppliedCounts{Put: outcome.ListCount{Total: 2, Listed: 2}, Delete: outcome.ListCount{Total: 1, Listed: 1}}, ReadBack: true, Matched: 2, Gone: 1},
	}, {
		name: "delete only", opts: Options{DeleteOnly: true}, wantDel: wantDel, wantTable: 8, wantUnits: 1, wantWaits: 2,
		want:         outcome.Applied{Counts: outcome.AppliedCounts{Delete: outcome.ListCount{Total: 1, Listed: 1}}, ReadBack: true, Gone: 1},
		wantProblems: []string{"OrdersOfCustomer 10", "OrdersOfCustomer 11"},
	}, {
		name: "a put that does not land as derived", garble: map[string]bool{c11 + " " + o3: true}, wantPut: wantPut, wantDel: wantDel,
		wantTable: 9, wantUnapp: []outcome.ItemRef{{PK: c11, SK: o3, Type: "Order"}}, wantUnits: 3, wantWaits: 2,
		want:         outcome.Applied{Counts: outcome.AppliedCounts{Put: outcome.ListCount{Total: 2, Listed: 2}, Delete: outcome.ListCount{Total: 1, Listed: 1}, Unapplied: outcome.ListCount{Total: 1, Listed: 1}}, ReadBack: true, Matched: 1, Gone: 1},
		wantProblems: []string{"OrdersOfCustomer 11"},
	}, {
		// The retyped item, another writer's now, is in the pattern's answer,
		// which passes over it as the Scan does.
		name: "a stale item retyped since the Scan", retype: true, wantPut: wantPut, wantDel: wantDel, wantTable: 10, wantUnits: 3, wantWaits: 2, wantOK: true,
		want: outcome.Applied{Counts: outcome.AppliedCounts{Put: outcome.ListCount{Total: 2, Listed: 2}, Delete: outcome.ListCount{Total: 1, Listed: 1}}, ReadBack: true, Matched: 2, Retyped: 1},
	}, {
		name: "a key derived twice: nothing deleted", duplicate: true, wantPut: wantPut, wantTable: 10, wantUnits: 2, wantWaits: 1,
		wantProblems: []string{"CustomerProfile 12", "OrdersOfCustomer 10"}, // the key derived twice, the stale item
		want: outcome.Applied{Counts: outcome.AppliedCounts{Put: outcome.ListCount{Total: 2, Listed: 2}}, ReadBack: true, Matched: 2,
			Withheld: "entity Customer's items disagree with the source's count (PostgreSQL counts 4 rows, 0 rejected: 4 items expected (1 a row); the transform read 4 rows and derived 3 items with distinct keys, and 1 more with the key of another derived item, which no duplicate check rejected: a run writes them over each other)"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := &fakeSource{plans: base.plans, rows: slices.Clone(base.rows)}
			table := &fakeTable{keys: [2]string{"PK", "SK"}, items: drift(src.tableItems(t))}
			if tc.duplicate {
				src.rows[0] = append(slices.Clone(src.rows[0]), []any{int32(12), "cy"})
			}
			ap := &fakeApplier{table: table, typeAttr: "type", garble: tc.garble}
			opts := tc.opts
			opts.Apply, opts.ReadBack, opts.Segments = ap, table, 2
			if tc.retype {
				opts.Apply = &retypingApplier{fakeApplier: ap, key: [2]string{c10, o99}}
			}
			res, err := runCompare(t, m, src, table, opts)
			if err != nil {
				t.Fatal(err)
			}
			a := res.Applied
			got := outcome.Applied{Counts: a.Counts, Withheld: a.Withheld, ReadBack: a.ReadBack, Matched: a.Matched, Gone: a.Gone, Retyped: a.Retyped}
			if d := gocmp.Diff(tc.want, got, cmpopts.IgnoreFields(outcome.Applied{}, "Put", "Delete", "Unapplied")); d != "" {
				t.Errorf("Applied (-want +got):\n%s", d)
			}
			if d := gocmp.Diff(tc.wantPut, ap.puts, byKey); d != "" {
				t.Errorf("puts handed over (-want +got):\n%s", d)
			}
			if d := gocmp.Diff(tc.wantDel, ap.dels, byKey); d != "" {
				t.Errorf("deletes handed over (-want +got):\n%s", d)
			}
			for name, l := range map[string]struct {
				list outcome.List[outcome.ItemRef]
				want []outcome.ItemRef
			}{"put": {a.Put, tc.wantPut}, "delete": {a.Delete, tc.wantDel}, "unapplied": {a.Unapplied, tc.wantUnapp}} {
				got, err := l.list.Slice()
				if err != nil {
					t.Fatal(err)
				}
				if d := gocmp.Diff(l.want, got, cmpopts.EquateEmpty()); d != "" {
					t.Errorf("list %s (-want +got):\n%s", name, d)
				}
			}
			if res.AppliedOK() != tc.wantOK || len(table.items) != tc.wantTable || ap.units != tc.wantUnits || ap.waits != tc.wantWaits {
				t.Errorf("AppliedOK %v, %d items in the table, %d write units, %d waits; want %v, %d, %d, %d",
					res.AppliedOK(), len(table.items), ap.units, ap.waits, tc.wantOK, tc.wantTable, tc.wantUnits, tc.wantWaits)
			}
			if len(res.Patterns) == 0 {
				t.Error("no access pattern ran")
			}
			if d := gocmp.Diff(tc.wantProblems, slices.Sorted(maps.Keys(patternProblems(res))), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("failing access patterns after the writes (-want +got):\n%s", d)
			}
		})
	}
}

// byKey sorts lists of ItemRef by key: an Applier is handed them in
// bucket order.
var byKey = cmpopts.SortSlices(func(a, b outcome.ItemRef) bool { return a.PK+"\x00"+a.SK < b.PK+"\x00"+b.SK })

// retypingApplier is a fakeApplier whose table's item of key gets another
// type just before it is deleted, as another writer may do after the
// Scan: the conditional delete leaves it.
type retypingApplier struct {
	*fakeApplier
	key [2]string
}

func (a *retypingApplier) Delete(ctx context.Context, w Write) error {
	a.table.mu.Lock()
	if i := a.table.index(a.key[0], a.key[1]); i >= 0 {
		a.table.items[i] = with(a.table.items[i], "type", &types.AttributeValueMemberS{Value: "Archived"})
	}
	a.table.mu.Unlock()
	return a.fakeApplier.Delete(ctx, w)
}

var _ dynamodb.BatchGetItemAPIClient = (*fakeTable)(nil)

// Compare refuses Apply with InFlight: a follow keeps the table in step
// itself.
func TestCompareApplyNotWhileFollowing(t *testing.T) {
	m, src := shop(t, "")
	table := &fakeTable{keys: [2]string{"PK", "SK"}, items: src.tableItems(t)}
	_, err := runCompare(t, m, src, table, Options{Apply: &fakeApplier{table: table}, InFlight: func(context.Context, string, string, time.Time) (bool, error) { return false, nil }})
	if err == nil {
		t.Fatal("Compare with Apply and InFlight: no error")
	}
}

// The items of a retired type (an entity removed from the mapping) are
// stale and deleted, priced as stale; with Types, the Scan asks DynamoDB
// for the items of those types only (a FilterExpression on the type
// attribute).
func TestCompareRetiredTypes(t *testing.T) {
	m, src := shop(t, "")
	logItem := item{"PK": &types.AttributeValueMemberS{Value: "LOG#1"}, "SK": &types.AttributeValueMemberS{Value: "X"}, "type": &types.AttributeValueMemberS{Value: "Log"}}
	table := &fakeTable{keys: [2]string{"PK", "SK"}, items: append(src.tableItems(t), logItem)}
	ap := &fakeApplier{table: table, typeAttr: "type"}
	res, err := runCompare(t, m, src, table, Options{Apply: ap, ReadBack: table, Retired: []string{"Log"}, Types: []string{"Customer", "Order", "Log"}, SkipPatterns: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := gocmp.Diff([]outcome.ItemRef{{PK: "LOG#1", SK: "X", Type: "Log"}}, ap.dels); d != "" {
		t.Errorf("deletes (-want +got):\n%s", d)
	}
	if res.Stale != 1 || res.RetiredStale != 1 || res.RetiredWriteUnits != 1 || res.Unmanaged != 0 || !res.AppliedOK() {
		t.Errorf("stale %d, retired %d (%d write units), unmanaged %d, applied OK %v; want 1, 1 (1), 0, true",
			res.Stale, res.RetiredStale, res.RetiredWriteUnits, res.Unmanaged, res.AppliedOK())
	}
	for _, in := range table.scans {
		if f := aws.ToString(in.FilterExpression); f != "#0 IN (:0, :1, :2)" || in.ExpressionAttributeNames["#0"] != "type" || len(in.ExpressionAttributeValues) != 3 {
			t.Errorf("Scan filter %q, names %v: want the type attribute IN the three types", f, in.ExpressionAttributeNames)
		}
	}
	if len(table.scans) == 0 {
		t.Error("no Scan")
	}
}
