package load

import (
	"context"
	"math"
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
		err := ScanSegments(context.Background(), f, &dynamodb.ScanInput{TableName: aws.String("t")}, segments, limit,
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
