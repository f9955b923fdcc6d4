package load

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/time/rate"
)

// scanPages answers each segment's Scans with pages in turn: the first
// reporting its read units, the second not (as an endpoint without
// ConsumedCapacity answers).
type scanPages struct {
	mu       sync.Mutex
	asked    []types.ReturnConsumedCapacity
	reported float64
	item     map[string]types.AttributeValue
}

func (f *scanPages) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, in.ReturnConsumedCapacity)
	if in.ExclusiveStartKey == nil {
		return &dynamodb.ScanOutput{Items: []map[string]types.AttributeValue{f.item},
			ConsumedCapacity: &types.ConsumedCapacity{CapacityUnits: aws.Float64(f.reported)},
			LastEvaluatedKey: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "x"}}}, nil
	}
	return &dynamodb.ScanOutput{Items: []map[string]types.AttributeValue{f.item, f.item, f.item}}, nil
}

// A ReadLimit is paid, page by page, the read units DynamoDB reports, or
// where it reports none one unit per 4 KB of the page's items; the Scans ask
// for the units only when paced.
func TestReadLimitPaysEachPage(t *testing.T) {
	// 5,000 bytes an item (name and value): a page of three is 15,000
	// bytes, 4 units.
	item := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: strings.Repeat("a", 4998)}}
	const segments, reported = 3, 7.5
	for _, paced := range []bool{false, true} {
		f := &scanPages{item: item, reported: reported}
		var limit *ReadLimit
		const budget = 1_000_000
		if paced {
			// Next to no refill: the tokens taken are the units paid.
			limit = &ReadLimit{limiter: rate.NewLimiter(rate.Limit(1e-9), budget)}
		}
		items := 0
		var mu sync.Mutex
		err := ScanSegments(context.Background(), limit.Scan(f), &dynamodb.ScanInput{TableName: aws.String("t")}, segments,
			func(page []map[string]types.AttributeValue) error {
				mu.Lock()
				items += len(page)
				mu.Unlock()
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		if items != segments*4 || len(f.asked) != segments*2 {
			t.Fatalf("paced %v: %d items in %d Scans, want %d in %d", paced, items, len(f.asked), segments*4, segments*2)
		}
		want := types.ReturnConsumedCapacity("")
		if paced {
			want = types.ReturnConsumedCapacityTotal
		}
		for _, got := range f.asked {
			if got != want {
				t.Errorf("paced %v: a Scan asked ReturnConsumedCapacity %q, want %q", paced, got, want)
			}
		}
		if want := map[bool]float64{false: 0, true: segments * (7.5 + 4)}[paced]; limit.Consumed() != want {
			t.Errorf("paced %v: %v read units counted, want %v", paced, limit.Consumed(), want)
		}
		if paced {
			paid := budget - limit.limiter.Tokens()
			if wantPaid := float64(segments * (8 + 4)); math.Abs(paid-wantPaid) > 0.01 {
				t.Errorf("paid %.2f read units, want %v: per segment 8 (7.5 reported, whole units) and 4 (15,000 bytes)", paid, wantPaid)
			}
		}
	}
}

// reads answers each read with two items of 5,000 bytes, reporting units
// (nil: none, as an endpoint without ConsumedCapacity answers), and records
// what each request asked.
type reads struct {
	item     map[string]types.AttributeValue
	reported *float64
	asked    []types.ReturnConsumedCapacity
}

func (r *reads) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	r.asked = append(r.asked, in.ReturnConsumedCapacity)
	out := &dynamodb.QueryOutput{Items: []map[string]types.AttributeValue{r.item, r.item}}
	if r.reported != nil {
		out.ConsumedCapacity = &types.ConsumedCapacity{CapacityUnits: r.reported}
	}
	return out, nil
}

func (r *reads) BatchGetItem(_ context.Context, in *dynamodb.BatchGetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	r.asked = append(r.asked, in.ReturnConsumedCapacity)
	out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{"t": {r.item}, "u": {r.item}}}
	if r.reported != nil {
		out.ConsumedCapacity = []types.ConsumedCapacity{{CapacityUnits: r.reported}, {CapacityUnits: r.reported}}
	}
	return out, nil
}

func (r *reads) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	r.asked = append(r.asked, in.ReturnConsumedCapacity)
	out := &dynamodb.GetItemOutput{Item: r.item}
	if r.reported != nil {
		out.ConsumedCapacity = &types.ConsumedCapacity{CapacityUnits: r.reported}
	}
	return out, nil
}

// The clients a ReadLimit wraps ask for the units and pay what DynamoDB
// reports (a BatchGetItem's tables summed), or where it reports none one unit
// per 4 KB: of a Query's items together, of each item a GetItem or
// BatchGetItem reads, at least one a key looked up. A nil ReadLimit hands the
// client back.
func TestReadLimitPaysQueriesAndGets(t *testing.T) {
	item := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: strings.Repeat("a", 4998)}}
	ctx := context.Background()
	for _, c := range []struct {
		reported *float64
		// query, batch and get are the units each read pays.
		query, batch, get float64
	}{
		{aws.Float64(2.5), 2.5, 5, 2.5},
		{nil, 3, 4, 2}, // 10,000 bytes together; 5,000 bytes each, rounded up
	} {
		r := &reads{item: item, reported: c.reported}
		var nl *ReadLimit
		if nl.Query(r) != dynamodb.QueryAPIClient(r) || nl.BatchGetItem(r) != dynamodb.BatchGetItemAPIClient(r) || nl.GetItem(r) != GetItemAPI(r) {
			t.Fatal("a nil ReadLimit wraps the client")
		}
		l := NewReadLimit(0)
		if _, err := l.Query(r).Query(ctx, &dynamodb.QueryInput{}); err != nil {
			t.Fatal(err)
		}
		after := []float64{l.Consumed()}
		key := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "k"}}
		in := &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
			"t": {Keys: []map[string]types.AttributeValue{key}}, "u": {Keys: []map[string]types.AttributeValue{key}}}}
		if _, err := l.BatchGetItem(r).BatchGetItem(ctx, in); err != nil {
			t.Fatal(err)
		}
		after = append(after, l.Consumed())
		if _, err := l.GetItem(r).GetItem(ctx, &dynamodb.GetItemInput{}); err != nil {
			t.Fatal(err)
		}
		after = append(after, l.Consumed())
		want := []float64{c.query, c.query + c.batch, c.query + c.batch + c.get}
		if !slices.Equal(after, want) {
			t.Errorf("reported %v: consumed after the Query, the BatchGetItem and the GetItem %v, want %v", aws.ToFloat64(c.reported), after, want)
		}
		for i, a := range r.asked {
			if a != types.ReturnConsumedCapacityTotal {
				t.Errorf("read %d asked ReturnConsumedCapacity %q, want TOTAL", i, a)
			}
		}
	}
	// An absent item's look-up is priced too: one unit where none is reported.
	l := NewReadLimit(0)
	if _, err := l.GetItem(&reads{}).GetItem(ctx, &dynamodb.GetItemInput{}); err != nil || l.Consumed() != 1 {
		t.Errorf("a GetItem finding nothing paid %v read units (%v), want 1", l.Consumed(), err)
	}
}
