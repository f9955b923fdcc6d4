package verify

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// RunPattern follows every page of the Query's answer, in DynamoDB's
// order (here reversed: scan_forward false), and fails with the page's
// error, wrapped and naming the pattern.
func TestRunPatternReadsEveryPage(t *testing.T) {
	m, src := shop(t, "  Latest: {key_condition: \"PK = CUSTOMER#${customer_id}\", scan_forward: false}\n")
	pp := compilePattern(t, m, src, "Latest")
	table := &fakeTable{keys: [2]string{"PK", "SK"}, items: src.tableItems(t), pageSize: 1}
	items, err := RunPattern(context.Background(), table, "shop", pp, []any{int32(10)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, sValue(it, "SK"))
	}
	if want := "ORDER#0000000005 ORDER#0000000002 ORDER#0000000001"; strings.Join(got, " ") != want {
		t.Errorf("items %v, want %s", got, want)
	}
	if len(table.queries) != 3 {
		t.Errorf("%d Query calls, want 3 (one item a page)", len(table.queries))
	}
	table = &fakeTable{keys: [2]string{"PK", "SK"}, items: src.tableItems(t), pageSize: 1, queryErrAt: 2}
	if _, err := RunPattern(context.Background(), table, "shop", pp, []any{int32(10)}); !errors.Is(err, errFake) || !strings.HasPrefix(err.Error(), "pattern Latest: ") {
		t.Errorf("error %v, want errFake wrapped, naming the pattern", err)
	}
}

// A GSI check that does not match is queried again within IndexWait, and
// passes once the GSI has caught up; past the budget it fails. A check of
// the table is never queried again.
func TestGSICheckIsReadAgain(t *testing.T) {
	m, src := shopWithGSI(t)
	items := src.tableItems(t)
	var indexed []item
	for _, it := range items {
		if _, ok := it["GSI1PK"]; ok {
			indexed = append(indexed, it)
		}
	}
	if len(indexed) != 5 {
		t.Fatalf("%d items in the GSI, want 5", len(indexed))
	}
	for _, tc := range []struct {
		name    string
		wait    time.Duration
		answers [][]item
		ok      bool
		retries int
	}{
		{"caught up on the second read", 300 * time.Millisecond, [][]item{indexed[:4], indexed}, true, 1},
		{"no budget", 0, [][]item{indexed[:4], indexed}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := &fakeTable{keys: [2]string{"PK", "SK"}, gsis: map[string][2]string{"ByNote": {"GSI1PK", "GSI1SK"}},
				items: items, queryAnswers: map[string][][]item{"NOTES": tc.answers}}
			res, err := runCompare(t, m, src, table, Options{IndexWait: tc.wait})
			if err != nil {
				t.Fatal(err)
			}
			var found bool
			for _, p := range res.Patterns {
				if p.Pattern != "ByNote" {
					continue
				}
				found = true
				if p.OK != tc.ok || p.Retries != tc.retries {
					t.Errorf("ByNote: OK %v, retries %d (%s); want %v, %d", p.OK, p.Retries, p.Problem, tc.ok, tc.retries)
				}
			}
			if !found {
				t.Fatal("no ByNote result")
			}
		})
	}
}

// shopWithGSI is shop with Order's items also in GSI ByNote (partition
// NOTES, sorted by note), and a pattern on it.
func shopWithGSI(t *testing.T) (*mapping.Mapping, *fakeSource) {
	t.Helper()
	text := strings.Replace(shopMapping, "table: {name: shop}",
		"table: {name: shop, gsis: [{name: ByNote, partition_key: GSI1PK, sort_key: GSI1SK}]}", 1)
	text = strings.Replace(text, "    sk: ORDER#${order_id}\n", "    sk: ORDER#${order_id}\n    indexes: {ByNote: {pk: NOTES, sk: \"${note}\"}}\n", 1)
	return shopFrom(t, text+"  ByNote: {index: ByNote, key_condition: \"GSI1PK = NOTES\"}\n")
}

// The order check streams: across chunks of Rank calls it finds the
// first two items of an entity that PostgreSQL orders the other way,
// never flags items with equal sort keys, and keeps no order for values
// PostgreSQL cannot order.
func TestOrderStreamUnit(t *testing.T) {
	m, src := shop(t, "")
	type in struct {
		key string
		id  int32
	}
	tests := []struct {
		name      string
		items     []in
		unordered bool
		want      [2]int // positions of First and Second; zero: no mismatch
	}{
		{"in order", []in{{"A", 1}, {"B", 2}, {"C", 3}, {"D", 4}, {"E", 5}}, false, [2]int{}},
		{"out of order in a later chunk", []in{{"A", 1}, {"B", 2}, {"C", 4}, {"D", 3}, {"E", 5}}, false, [2]int{3, 4}},
		{"out of order across a chunk boundary", []in{{"A", 1}, {"B", 3}, {"C", 2}, {"D", 4}}, false, [2]int{2, 3}},
		{"equal sort keys in any order", []in{{"A", 1}, {"B", 3}, {"B", 2}, {"C", 4}}, false, [2]int{}},
		{"a block after its equal keys", []in{{"A", 2}, {"A", 5}, {"B", 4}}, false, [2]int{2, 3}},
		{"values with no order", []in{{"A", 2}, {"B", 1}}, true, [2]int{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src.unordered = tc.unordered
			src.ranks = 0
			oc := newOrderChecker(src, m, src.plans)
			oc.chunk = 2
			st := oc.stream("SK", false)
			ctx := context.Background()
			for _, it := range tc.items {
				vals, err := oc.values(1, false, "SK", []any{it.id, int32(10), "n"})
				if err != nil {
					t.Fatal(err)
				}
				if err := st.add(ctx, 1, false, it.key, vals); err != nil {
					t.Fatal(err)
				}
			}
			mm, err := st.finish(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got [2]int
			if mm != nil {
				got = [2]int{mm.First.Position, mm.Second.Position}
				if mm.Entity != "Order" || mm.Template != "ORDER#${order_id}" || mm.OrderBy != "order_id" {
					t.Errorf("mismatch %+v: want entity Order, template ORDER#${order_id}, ORDER BY order_id", mm)
				}
			}
			if got != tc.want {
				t.Errorf("mismatch at %v, want %v (%+v)", got, tc.want, mm)
			}
			if src.ranks < 2 && len(tc.items) > 2 && !tc.unordered && tc.want == ([2]int{}) {
				t.Errorf("%d Rank calls for %d items in chunks of 2: want several", src.ranks, len(tc.items))
			}
		})
	}
}

// readValue refuses an encoding appendValue did not write: empty, an
// unknown tag, or cut short anywhere, with errValueData; every value it
// reads back is the one encoded, with the rest of the buffer.
func TestReadValueRefusesCorruptEncodings(t *testing.T) {
	values := []any{nil, true, int16(-3), int32(7), int64(1 << 40), float32(1.5), 2.25, "text", []byte{1, 2},
		[16]byte{1}, time.Date(2024, 2, 29, 12, 0, 0, 5, time.UTC), pgtype.Infinity,
		pgtype.Numeric{Int: big.NewInt(-12345), Exp: -2, Valid: true}}
	for _, v := range values {
		enc, err := appendValue(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		got, rest, err := readValue(append(enc, 0xAA))
		if err != nil || len(rest) != 1 || rest[0] != 0xAA {
			t.Errorf("%T %v: read %v, rest %v, %v; want it back, rest [0xAA]", v, v, got, rest, err)
		}
		for n := 1; n < len(enc); n++ { // every cut but after the tag of a value with no payload
			if _, _, err := readValue(enc[:n]); !errors.Is(err, errValueData) {
				t.Errorf("%T %v cut to %d of %d bytes: error %v, want errValueData", v, v, n, len(enc), err)
			}
		}
	}
	for _, b := range [][]byte{nil, {0xFF}, {tagTime, 2, 0, 0}} {
		if _, _, err := readValue(b); !errors.Is(err, errValueData) {
			t.Errorf("%x: error %v, want errValueData", b, err)
		}
	}
}

// The fakes themselves: a scripted Scan returns LastEvaluatedKey while
// items remain and resumes after ExclusiveStartKey; an unknown key ends
// the answer.
func TestFakeTablePages(t *testing.T) {
	f := &fakeTable{keys: [2]string{"PK", "SK"}, pageSize: 2}
	for _, k := range []string{"a", "b", "c"} {
		f.items = append(f.items, item{"PK": &types.AttributeValueMemberS{Value: k}, "SK": &types.AttributeValueMemberS{Value: "x"}})
	}
	p1, last := f.page(f.items, nil, nil, f.keys[:])
	p2, end := f.page(f.items, last, nil, f.keys[:])
	if len(p1) != 2 || sValue(last, "PK") != "b" || len(p2) != 1 || sValue(p2[0], "PK") != "c" || end != nil {
		t.Errorf("pages %d (last %v), %d (last %v); want 2 (b), 1 (none)", len(p1), last, len(p2), end)
	}
}
