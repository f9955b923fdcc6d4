package load

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"

	"github.com/pg2dynamo/pg2dynamo/transform"
)

// ScanPageItems bounds a Scan page (ScanInput.Limit): the SDK decodes a page at
// once, and a full page (1 MB) of small items is several times larger in Go
// values, per segment (docs/performance.md).
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Scan.html#Scan.Limit
const ScanPageItems = 200

// ScanSegments reads in's table with segments parallel, strongly consistent
// Scans of pages of ScanPageItems, calling page with each page's items on its
// segment's goroutine, so page must be safe for concurrent use (a client a
// ReadLimit wraps paces and counts the pages). in is copied, not changed. The
// first error, a Scan's (wrapped with the table and segment) or page's, stops
// the others and is returned.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Scan.html#Scan.ParallelScan
func ScanSegments(ctx context.Context, client dynamodb.ScanAPIClient, in *dynamodb.ScanInput, segments int,
	page func([]map[string]types.AttributeValue) error) error {
	g, gctx := errgroup.WithContext(ctx)
	for seg := range segments {
		g.Go(func() error {
			si := *in
			si.Segment, si.TotalSegments = aws.Int32(int32(seg)), aws.Int32(int32(segments))
			si.ConsistentRead, si.Limit = aws.Bool(true), aws.Int32(ScanPageItems)
			p := dynamodb.NewScanPaginator(client, &si)
			for p.HasMorePages() {
				out, err := p.NextPage(gctx)
				if err != nil {
					return fmt.Errorf("scan %s segment %d: %w", aws.ToString(in.TableName), seg, err)
				}
				if err := page(out.Items); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// ReadLimit paces and counts a run's reads of its table: the Scans, Queries,
// GetItems and BatchGetItems of the clients it wraps. It paces at a number of
// read capacity units a second, so that a check leaves the table's read
// capacity to the application. Each answer is paid for once read: with the
// units DynamoDB reports it consumed (the requests ask, ReturnConsumedCapacity
// TOTAL), or, where the endpoint reports none, one unit per 4 KB of its items
// (a strongly consistent read's price; for GetItem and BatchGetItem, of each
// item). A nil *ReadLimit neither paces nor counts, and its reads ask for no
// units. Safe for concurrent use.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html#read-operation-consumption
type ReadLimit struct {
	limiter  *rate.Limiter // nil: no cap
	mu       sync.Mutex
	consumed float64
}

// NewReadLimit paces at units read capacity units a second, with a second's
// worth at once; for units <= 0 it counts without pacing.
func NewReadLimit(units int) *ReadLimit {
	if units <= 0 {
		return &ReadLimit{}
	}
	return &ReadLimit{limiter: rate.NewLimiter(rate.Limit(units), units)}
}

// Consumed is the read capacity units paid so far (0 for nil).
func (l *ReadLimit) Consumed() float64 {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.consumed
}

// pay counts an answer's read units, cc's or else one per 4 KB of its items:
// of them together, as a Scan or Query is priced, or, for keys looked up (keys
// > 0: GetItem, BatchGetItem), of each item, and at least one a key, an absent
// item's look-up being priced too. Then it blocks until they fit the rate, or
// ctx ends.
func (l *ReadLimit) pay(ctx context.Context, cc *types.ConsumedCapacity, items []map[string]types.AttributeValue, keys int) error {
	if l == nil {
		return nil
	}
	var units float64
	if cc != nil && cc.CapacityUnits != nil {
		units = *cc.CapacityUnits
	} else {
		size := 0
		for _, it := range items {
			n := transform.ItemSize(it)
			if keys > 0 {
				n = (n + 4095) / 4096 * 4096
			}
			size += n
		}
		units = float64(max((size+4095)/4096, keys))
	}
	l.mu.Lock()
	l.consumed += units
	l.mu.Unlock()
	if l.limiter == nil {
		return nil
	}
	for n := int(math.Ceil(units)); n > 0; {
		step := min(n, l.limiter.Burst())
		if err := l.limiter.WaitN(ctx, step); err != nil {
			return err
		}
		n -= step
	}
	return nil
}

// Scan returns c with each Scan page paid for (c itself for a nil l).
func (l *ReadLimit) Scan(c dynamodb.ScanAPIClient) dynamodb.ScanAPIClient {
	if l == nil {
		return c
	}
	return pacedScan{c, l}
}

type pacedScan struct {
	c dynamodb.ScanAPIClient
	l *ReadLimit
}

func (p pacedScan) Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	s := *in
	s.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := p.c.Scan(ctx, &s, opts...)
	if err != nil {
		return out, err
	}
	return out, p.l.pay(ctx, out.ConsumedCapacity, out.Items, 0)
}

// Query returns c with each Query answer paid for (c itself for a nil l).
func (l *ReadLimit) Query(c dynamodb.QueryAPIClient) dynamodb.QueryAPIClient {
	if l == nil {
		return c
	}
	return pacedQuery{c, l}
}

type pacedQuery struct {
	c dynamodb.QueryAPIClient
	l *ReadLimit
}

func (p pacedQuery) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	q := *in
	q.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := p.c.Query(ctx, &q, opts...)
	if err != nil {
		return out, err
	}
	return out, p.l.pay(ctx, out.ConsumedCapacity, out.Items, 0)
}

// BatchGetItem returns c with each BatchGetItem answer paid for (c itself for a
// nil l).
func (l *ReadLimit) BatchGetItem(c dynamodb.BatchGetItemAPIClient) dynamodb.BatchGetItemAPIClient {
	if l == nil {
		return c
	}
	return pacedBatchGet{c, l}
}

type pacedBatchGet struct {
	c dynamodb.BatchGetItemAPIClient
	l *ReadLimit
}

func (p pacedBatchGet) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	b := *in
	b.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := p.c.BatchGetItem(ctx, &b, opts...)
	if err != nil {
		return out, err
	}
	var cc *types.ConsumedCapacity // the tables' sum, if reported
	for _, c := range out.ConsumedCapacity {
		if c.CapacityUnits != nil {
			if cc == nil {
				cc = &types.ConsumedCapacity{CapacityUnits: aws.Float64(0)}
			}
			*cc.CapacityUnits += *c.CapacityUnits
		}
	}
	var items []map[string]types.AttributeValue
	for _, its := range out.Responses {
		items = append(items, its...)
	}
	keys := 0
	for t, ka := range b.RequestItems {
		keys += len(ka.Keys) - len(out.UnprocessedKeys[t].Keys)
	}
	return out, p.l.pay(ctx, cc, items, keys)
}

// GetItemAPI is the client of a GetItem.
type GetItemAPI interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// GetItem returns c with each GetItem answer paid for (c itself for a nil l).
func (l *ReadLimit) GetItem(c GetItemAPI) GetItemAPI {
	if l == nil {
		return c
	}
	return pacedGet{c, l}
}

type pacedGet struct {
	c GetItemAPI
	l *ReadLimit
}

func (p pacedGet) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	g := *in
	g.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	out, err := p.c.GetItem(ctx, &g, opts...)
	if err != nil {
		return out, err
	}
	var items []map[string]types.AttributeValue
	if out.Item != nil {
		items = append(items, out.Item)
	}
	return out, p.l.pay(ctx, out.ConsumedCapacity, items, 1)
}

// StringAttr is item's attribute name as a string: "" when it is absent or of
// another type than S.
func StringAttr(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}
