package load

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/transform"
)

// fakeAPI is DynamoDB at the WriteAPI seam: each call is answered by the
// script, and every request is recorded.
type fakeAPI struct {
	mu      sync.Mutex
	batches [][]string                     // keys of each BatchWriteItem call, in order
	rcc     []types.ReturnConsumedCapacity // of each BatchWriteItem call
	puts    []string
	deletes []string
	batch   func(call int, keys []string) (*dynamodb.BatchWriteItemOutput, error)
	put     func(key string) error
}

func (f *fakeAPI) BatchWriteItem(_ context.Context, in *dynamodb.BatchWriteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	f.mu.Lock()
	var keys []string
	for _, r := range in.RequestItems["t"] {
		keys = append(keys, pk(requestItem(r)))
	}
	f.batches = append(f.batches, keys)
	f.rcc = append(f.rcc, in.ReturnConsumedCapacity)
	call := len(f.batches)
	f.mu.Unlock()
	if f.batch == nil {
		return &dynamodb.BatchWriteItemOutput{}, nil
	}
	return f.batch(call, keys)
}

func (f *fakeAPI) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	f.mu.Lock()
	f.puts = append(f.puts, pk(in.Item))
	f.mu.Unlock()
	if f.put != nil {
		if err := f.put(pk(in.Item)); err != nil {
			return nil, err
		}
	}
	return &dynamodb.PutItemOutput{ConsumedCapacity: unitUsed(in.ReturnConsumedCapacity)}, nil
}

// unitUsed is one write unit's ConsumedCapacity, when rcc asks for it.
func unitUsed(rcc types.ReturnConsumedCapacity) *types.ConsumedCapacity {
	if rcc == types.ReturnConsumedCapacityNone || rcc == "" {
		return nil
	}
	return &types.ConsumedCapacity{CapacityUnits: aws.Float64(1)}
}

func (f *fakeAPI) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	f.mu.Lock()
	f.deletes = append(f.deletes, pk(in.Key))
	f.mu.Unlock()
	return &dynamodb.DeleteItemOutput{ConsumedCapacity: unitUsed(in.ReturnConsumedCapacity)}, nil
}

func pk(item map[string]types.AttributeValue) string {
	return item["PK"].(*types.AttributeValueMemberS).Value
}

func items(keys ...string) []transform.Item {
	out := make([]transform.Item, len(keys))
	for i, k := range keys {
		out[i] = transform.Item{Attrs: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: k}, "SK": &types.AttributeValueMemberS{Value: "S"}}}
	}
	return out
}

// unprocessed answers a BatchWriteItem leaving keys unprocessed.
func unprocessed(keys ...string) *dynamodb.BatchWriteItemOutput {
	var reqs []types.WriteRequest
	for _, it := range items(keys...) {
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it.Attrs}})
	}
	return &dynamodb.BatchWriteItemOutput{UnprocessedItems: map[string][]types.WriteRequest{"t": reqs}}
}

var errValidation = &smithy.GenericAPIError{Code: "ValidationException", Message: "Item size has exceeded the maximum allowed size"}

// newSink is a sink on api whose backoff is recorded, not slept.
func newSink(api WriteAPI, waits *[]int) *DynamoDB {
	d := NewDynamoDB(api, "t", "PK", "SK")
	d.Backoff = retry.BackoffDelayerFunc(func(n int, _ error) (time.Duration, error) {
		*waits = append(*waits, n)
		return 0, nil
	})
	return d
}

// The batch-failure paths of the DynamoDB sink, at its API seam.
func TestDynamoDBWritePaths(t *testing.T) {
	ctx := context.Background()
	t.Run("UnprocessedItems are re-sent until written", func(t *testing.T) {
		var waits []int
		api := &fakeAPI{batch: func(call int, keys []string) (*dynamodb.BatchWriteItemOutput, error) {
			if call == 1 {
				return unprocessed("b", "c"), nil
			}
			if call == 2 {
				return unprocessed("c"), nil
			}
			return &dynamodb.BatchWriteItemOutput{}, nil
		}}
		d := newSink(api, &waits)
		if err := d.Write(ctx, items("a", "b", "c")); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([][]string{{"a", "b", "c"}, {"b", "c"}, {"c"}}, api.batches); d != "" {
			t.Errorf("requests (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]int{1, 2}, waits); d != "" {
			t.Errorf("backoff rounds (-want +got):\n%s", d)
		}
		if s := d.Stats(); s.Requests != 3 || s.UnprocessedRetries != 2 {
			t.Errorf("stats %+v, want 3 requests and 2 re-sends", s)
		}
	})
	t.Run("items still unprocessed after the last round fail alone", func(t *testing.T) {
		var waits []int
		api := &fakeAPI{batch: func(int, []string) (*dynamodb.BatchWriteItemOutput, error) { return unprocessed("d", "b"), nil }}
		d := newSink(api, &waits)
		d.maxRounds = 3
		err := d.Write(ctx, items("a", "b", "c", "d"))
		var be *BatchError
		if !errors.As(err, &be) {
			t.Fatalf("got %v, want a *BatchError", err)
		}
		want := "2 items not written: item 3: still in UnprocessedItems after 3 BatchWriteItem rounds; " +
			"item 1: still in UnprocessedItems after 3 BatchWriteItem rounds"
		if be.Error() != want {
			t.Errorf("got %q, want %q", be.Error(), want)
		}
		if len(api.batches) != 3 || len(waits) != 2 {
			t.Errorf("%d requests and %d waits, want 3 and 2", len(api.batches), len(waits))
		}
	})
	t.Run("an invalid request whose items all put alone is written", func(t *testing.T) {
		var waits []int
		api := &fakeAPI{batch: func(int, []string) (*dynamodb.BatchWriteItemOutput, error) { return nil, errValidation }}
		d := newSink(api, &waits)
		if err := d.Write(ctx, items("a", "b")); err != nil {
			t.Fatal(err)
		}
		if s := d.Stats(); len(api.puts) != 2 || s.Requests != 3 {
			t.Errorf("%d PutItems, %d requests counted; want 2 and 3", len(api.puts), s.Requests)
		}
	})
	t.Run("an invalid request is split into PutItems, and only the invalid item fails", func(t *testing.T) {
		var waits []int
		api := &fakeAPI{
			batch: func(int, []string) (*dynamodb.BatchWriteItemOutput, error) { return nil, errValidation },
			put: func(key string) error {
				if key == "b" {
					return errValidation
				}
				return nil
			},
		}
		err := newSink(api, &waits).Write(ctx, items("a", "b", "c"))
		var be *BatchError
		if !errors.As(err, &be) || len(be.Failed) != 1 || be.Failed[0].Index != 1 ||
			be.Failed[0].Err.Error() != "DynamoDB ValidationException: Item size has exceeded the maximum allowed size" {
			t.Fatalf("got %v, want item 1 failed with DynamoDB's message", err)
		}
		if d := cmp.Diff([]string{"a", "b", "c"}, api.puts); d != "" {
			t.Errorf("PutItems (-want +got):\n%s", d)
		}
	})
	t.Run("a PutItem error other than validation stops the run", func(t *testing.T) {
		var waits []int
		denied := &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "no"}
		api := &fakeAPI{
			batch: func(int, []string) (*dynamodb.BatchWriteItemOutput, error) { return nil, errValidation },
			put:   func(string) error { return denied },
		}
		err := newSink(api, &waits).Write(ctx, items("a", "b"))
		var be *BatchError
		if errors.As(err, &be) || !errors.Is(err, denied) || !strings.HasPrefix(err.Error(), "PutItem on table t: ") {
			t.Fatalf("got %v, want the PutItem error itself", err)
		}
		if len(api.puts) != 1 {
			t.Errorf("%d PutItems after the error, want 1", len(api.puts))
		}
	})
	t.Run("a BatchWriteItem error other than validation stops the run", func(t *testing.T) {
		var waits []int
		denied := &smithy.GenericAPIError{Code: "ResourceNotFoundException", Message: "no table"}
		api := &fakeAPI{batch: func(int, []string) (*dynamodb.BatchWriteItemOutput, error) { return nil, denied }}
		err := newSink(api, &waits).Write(ctx, items("a"))
		if !errors.Is(err, denied) || !strings.HasPrefix(err.Error(), "BatchWriteItem on table t: ") || len(api.puts) != 0 {
			t.Fatalf("got %v and %d PutItems, want the BatchWriteItem error and none", err, len(api.puts))
		}
	})
	t.Run("the retry deadline ends a batch DynamoDB keeps throttling", func(t *testing.T) {
		api := &fakeAPI{batch: func(int, []string) (*dynamodb.BatchWriteItemOutput, error) { return unprocessed("a"), nil }}
		d := NewDynamoDB(api, "t", "PK", "SK")
		d.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 20 * time.Millisecond, nil })
		d.Deadline = 100 * time.Millisecond
		err := d.Write(ctx, items("a"))
		if err == nil || !strings.Contains(err.Error(), "after the retry deadline of 100ms") {
			t.Fatalf("got %v, want the deadline's message", err)
		}
	})
	t.Run("with a retry deadline, the run's own cancellation is returned as such", func(t *testing.T) {
		api := &fakeAPI{batch: func(int, []string) (*dynamodb.BatchWriteItemOutput, error) { return unprocessed("a"), nil }}
		d := NewDynamoDB(api, "t", "PK", "SK")
		d.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Hour, nil })
		d.Deadline = time.Hour
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(20*time.Millisecond, cancel)
		err := d.Write(cctx, items("a"))
		if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "deadline") {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	})
	t.Run("with a retry deadline, other errors and success are returned as they are", func(t *testing.T) {
		denied := &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "no"}
		api := &fakeAPI{batch: func(call int, _ []string) (*dynamodb.BatchWriteItemOutput, error) {
			if call == 1 {
				return nil, denied
			}
			return &dynamodb.BatchWriteItemOutput{}, nil
		}}
		d := NewDynamoDB(api, "t", "PK", "SK")
		d.Deadline = time.Hour
		if err := d.Write(ctx, items("a")); !errors.Is(err, denied) {
			t.Errorf("got %v, want the BatchWriteItem error", err)
		}
		if err := d.Write(ctx, items("a")); err != nil {
			t.Errorf("got %v, want nil", err)
		}
	})
	t.Run("cancellation during a backoff returns at once", func(t *testing.T) {
		api := &fakeAPI{batch: func(int, []string) (*dynamodb.BatchWriteItemOutput, error) { return unprocessed("a"), nil }}
		d := NewDynamoDB(api, "t", "PK", "SK")
		d.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Hour, nil })
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(20*time.Millisecond, cancel)
		if err := d.Write(cctx, items("a")); !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	})
}

// The write limit halves its rate when DynamoDB throttles and climbs back
// 10% (+1) a second up to its cap, on an injected clock.
func TestWriteLimitAdapts(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	d := NewDynamoDB(&fakeAPI{}, "t", "PK", "SK")
	d.limitWriteUnits(400, func(map[string]types.AttributeValue) int64 { return 1 }, clock)
	limit := func() float64 { return float64(d.limit.limiter.Limit()) }
	var got []string
	step := func(what string, f func()) {
		f()
		got = append(got, fmt.Sprintf("%s %.0f", what, limit()))
	}
	step("throttled", d.limit.throttled)
	step("throttled", d.limit.throttled)
	step("ok at once", d.limit.succeeded)
	clock.add(time.Second)
	step("ok a second later", d.limit.succeeded)
	for range 30 {
		clock.add(time.Second)
		d.limit.succeeded()
	}
	got = append(got, fmt.Sprintf("capped %.0f", limit()))
	want := []string{"throttled 200", "throttled 100", "ok at once 100", "ok a second later 111", "capped 400"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("limit (-want +got):\n%s", d)
	}

	d.limitWriteUnits(3, func(map[string]types.AttributeValue) int64 { return 1 }, clock)
	for range 3 {
		d.limit.throttled()
	}
	if lim := limit(); lim != 1 {
		t.Errorf("a limit of 3 throttled thrice is %v, want 1 (never below)", lim)
	}
}

// Written items are counted from the ConsumedCapacity DynamoDB reports.
func TestConsumedCapacityCounted(t *testing.T) {
	api := &fakeAPI{batch: func(int, []string) (*dynamodb.BatchWriteItemOutput, error) {
		return &dynamodb.BatchWriteItemOutput{ConsumedCapacity: []types.ConsumedCapacity{{TableName: aws.String("t"), CapacityUnits: aws.Float64(2.5)}}}, nil
	}}
	d := NewDynamoDB(api, "t", "PK", "SK")
	for range 2 {
		if err := d.Write(context.Background(), items("a", "b")); err != nil {
			t.Fatal(err)
		}
	}
	if s := d.Stats(); s.ConsumedWriteUnits != 5 {
		t.Errorf("consumed %v write units, want 5", s.ConsumedWriteUnits)
	}
}

// The write units consumed are asked for by default, not once
// CountWriteUnits(false), but still when a write limit needs them.
func TestCountWriteUnits(t *testing.T) {
	api := &fakeAPI{}
	d := NewDynamoDB(api, "t", "PK", "SK")
	write := func() {
		if err := d.Write(context.Background(), items("a")); err != nil {
			t.Fatal(err)
		}
	}
	write()
	d.CountWriteUnits(false)
	write()
	d.LimitWriteUnits(1000, func(map[string]types.AttributeValue) int64 { return 1 })
	write()
	want := []types.ReturnConsumedCapacity{types.ReturnConsumedCapacityTotal, types.ReturnConsumedCapacityNone, types.ReturnConsumedCapacityTotal}
	if d := cmp.Diff(want, api.rcc); d != "" {
		t.Errorf("ReturnConsumedCapacity (-want +got):\n%s", d)
	}
}

// fakeClock is a write limit's clock that moves only when told (add) or
// waited on: SleepUntil jumps to the time waited for at once, so that a
// test of rates takes no time. A frozen one never moves: its SleepUntil
// waits for the context. Safe for concurrent use.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	frozen bool
	// sleeping, when set, is called as each SleepUntil starts (a test
	// cancels the context there: cancellation during a wait, untimed).
	sleeping func()
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) SleepUntil(ctx context.Context, t time.Time) error {
	if c.sleeping != nil {
		c.sleeping()
	}
	if c.frozen {
		<-ctx.Done()
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	return nil
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// limited is a sink with a write limit of units per second whose clock
// stands still (frozen) at the returned time, each item estimated at
// estimate units.
func limited(api WriteAPI, units int, estimate int64) (*DynamoDB, *fakeClock, time.Time) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &fakeClock{now: now, frozen: true}
	d := NewDynamoDB(api, "t", "PK", "SK")
	d.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
	d.limitWriteUnits(units, func(map[string]types.AttributeValue) int64 { return estimate }, clock)
	return d, clock, now
}

// Write takes its estimate from the write limit before sending and the
// excess DynamoDB reports consumed after; UnprocessedItems halve the rate.
func TestWriteLimitInWrite(t *testing.T) {
	ctx := context.Background()
	t.Run("the estimate before, the reported excess after", func(t *testing.T) {
		api := &fakeAPI{batch: func(int, []string) (*dynamodb.BatchWriteItemOutput, error) {
			return &dynamodb.BatchWriteItemOutput{ConsumedCapacity: []types.ConsumedCapacity{{CapacityUnits: aws.Float64(7)}}}, nil
		}}
		d, _, now := limited(api, 10, 1)
		if err := d.Write(ctx, items("a", "b")); err != nil {
			t.Fatal(err)
		}
		if left := d.limit.limiter.TokensAt(now); left != 3 {
			t.Errorf("%v write units left of 10, want 3 (7 consumed)", left)
		}
	})
	t.Run("UnprocessedItems halve the rate", func(t *testing.T) {
		api := &fakeAPI{batch: func(call int, _ []string) (*dynamodb.BatchWriteItemOutput, error) {
			if call == 1 {
				return unprocessed("b"), nil
			}
			return &dynamodb.BatchWriteItemOutput{}, nil
		}}
		d, _, _ := limited(api, 40, 1)
		if err := d.Write(ctx, items("a", "b")); err != nil {
			t.Fatal(err)
		}
		if lim := float64(d.limit.limiter.Limit()); lim != 20 {
			t.Errorf("rate %v write units a second, want 20 (halved, not yet a second to climb)", lim)
		}
	})
	t.Run("cancellation while waiting for write units sends nothing", func(t *testing.T) {
		api := &fakeAPI{}
		d, clock, now := limited(api, 1, 5)
		cctx, cancel := context.WithCancel(ctx)
		clock.sleeping = cancel // as soon as it waits for the second unit
		if err := d.Write(cctx, items("a")); !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
		if len(api.batches) != 0 {
			t.Errorf("%d BatchWriteItem calls, want none", len(api.batches))
		}
		if left := d.limit.limiter.TokensAt(now); left != 0 {
			t.Errorf("%v write units left, want 0 (the cancelled step given back)", left)
		}
	})
	t.Run("a cancelled run sends nothing, write units to spare or not", func(t *testing.T) {
		api := &fakeAPI{}
		d, _, now := limited(api, 10, 1)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := d.Write(cctx, items("a")); !errors.Is(err, context.Canceled) || len(api.batches) != 0 {
			t.Fatalf("got %v and %d BatchWriteItem calls, want context.Canceled and none", err, len(api.batches))
		}
		if left := d.limit.limiter.TokensAt(now); left != 10 {
			t.Errorf("%v write units left, want 10 (the step given back)", left)
		}
	})
	t.Run("a wait past the retry deadline ends with the deadline's message", func(t *testing.T) {
		// Before the fix rate.Limiter.WaitN failed at once with "rate:
		// Wait(n=1) would exceed context deadline", which stopped the run
		// with a message naming neither the deadline nor its flag.
		api := &fakeAPI{}
		d, _, _ := limited(api, 1, 5)
		d.Deadline = 50 * time.Millisecond
		err := d.Write(ctx, items("a"))
		if err == nil || !strings.Contains(err.Error(), "after the retry deadline of 50ms") {
			t.Fatalf("got %v, want the deadline's message", err)
		}
	})
}

// meteredAPI is DynamoDB at the WriteAPI seam consuming perItem write
// units for each item put, as it reports in ConsumedCapacity, and
// recording the units of each request at the time on clock it was sent.
type meteredAPI struct {
	fakeAPI
	clock   *fakeClock
	perItem float64
	mu      sync.Mutex
	sent    []sentUnits
}

// sentUnits are the write units a request consumed, at the time it was sent.
type sentUnits struct {
	at    time.Time
	units float64
}

func (m *meteredAPI) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	units := m.perItem * float64(len(in.RequestItems["t"]))
	m.mu.Lock()
	m.sent = append(m.sent, sentUnits{m.clock.Now(), units})
	m.mu.Unlock()
	return &dynamodb.BatchWriteItemOutput{ConsumedCapacity: []types.ConsumedCapacity{{TableName: aws.String("t"), CapacityUnits: aws.Float64(units)}}}, nil
}

// The write limit holds the cap, by what was sent, on a clock that moves
// only as the limit waits: at no time have the requests sent consumed
// more than the cap times the time since the first, plus the bucket (50
// units), plus, when DynamoDB reports more than estimated, the excess of
// the last request of each writer (waited for only after it was sent);
// and the whole load takes no longer than the cap allows (the limit
// wastes nothing). The rate a real run reaches against dynalite is the
// bench's to measure: a test timing it on a busy machine measured the
// machine (issue 26: 411 of 500 write units a second).
func TestWriteLimitHoldsTheCap(t *testing.T) {
	const batches, perBatch = 200, MaxBatchItems
	for _, tc := range []struct {
		name    string
		cap     int
		writers int
		// estimate is what the limit expects an item to consume,
		// perItem what DynamoDB reports.
		estimate int64
		perItem  float64
	}{
		{"estimates exact, one writer", 500, 1, 1, 1},
		{"estimates exact, eight writers", 500, 8, 1, 1},
		{"DynamoDB reports twice the estimate, eight writers", 500, 8, 1, 2},
		{"DynamoDB reports half the estimate", 500, 4, 2, 1},
		{"a batch over the bucket, taken in steps", 20, 2, 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			clock := &fakeClock{now: start}
			api := &meteredAPI{clock: clock, perItem: tc.perItem}
			d := NewDynamoDB(api, "t", "PK", "SK")
			d.limitWriteUnits(tc.cap, func(map[string]types.AttributeValue) int64 { return tc.estimate }, clock)
			var next atomic.Int64
			var wg sync.WaitGroup
			for range tc.writers {
				wg.Go(func() {
					for b := next.Add(1); b <= batches; b = next.Add(1) {
						keys := make([]string, perBatch)
						for i := range keys {
							keys[i] = fmt.Sprintf("%d-%d", b, i)
						}
						if err := d.Write(context.Background(), items(keys...)); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()

			burst := float64(min(tc.cap, 50))
			excess := max(0, tc.perItem-float64(tc.estimate)) * perBatch * float64(tc.writers)
			slices.SortStableFunc(api.sent, func(a, b sentUnits) int { return a.at.Compare(b.at) })
			var total float64
			for i, s := range api.sent {
				total += s.units
				if i+1 < len(api.sent) && api.sent[i+1].at.Equal(s.at) {
					continue // all the requests sent at this instant first
				}
				allowed := float64(tc.cap)*s.at.Sub(start).Seconds() + burst + excess
				if total > allowed+1e-9 {
					t.Fatalf("%.0f write units sent in the first %s, over the %.0f allowed (%d a second, a bucket of %.0f, %.0f reported past the estimates)",
						total, s.at.Sub(start), allowed, tc.cap, burst, excess)
				}
			}
			if want := batches * perBatch * tc.perItem; len(api.sent) != batches || total != want {
				t.Fatalf("%d requests, %.0f write units; want %d and %.0f", len(api.sent), total, batches, want)
			}
			// Every unit, the estimated and the reported, goes through
			// the bucket: the clock ends where the cap allows, no later.
			reserved := math.Max(total, batches*perBatch*float64(tc.estimate))
			took := clock.Now().Sub(start)
			if most := time.Duration((reserved - burst) / float64(tc.cap) * float64(time.Second)); took > most+time.Millisecond {
				t.Errorf("the load took %s on the limit's clock, want at most %s ((%.0f − %.0f) write units at %d a second)", took, most, reserved, burst, tc.cap)
			}
			t.Logf("%.0f write units in %d requests over %s on the limit's clock: %.1f a second", total, len(api.sent), took, total/took.Seconds())
		})
	}
}

// Items marked Delete go as DeleteRequests in a batch, and alone as
// DeleteItem when DynamoDB refuses the batch as invalid; an unprocessed
// delete fails with its own index.
func TestDeletes(t *testing.T) {
	ctx := context.Background()
	batch := items("a", "b", "c")
	batch[1].Delete = true
	var sent []types.WriteRequest
	api := &fakeAPI{batch: func(call int, _ []string) (*dynamodb.BatchWriteItemOutput, error) {
		if call == 1 {
			return nil, errValidation
		}
		return unprocessedDelete("b"), nil
	}}
	record := &recordingAPI{fakeAPI: api, sent: &sent}
	var waits []int
	d := newSink(record, &waits)
	if err := d.Write(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if len(sent) != 3 || sent[1].DeleteRequest == nil || sent[0].PutRequest == nil || sent[2].PutRequest == nil {
		t.Errorf("requests %+v, want put, delete, put", sent)
	}
	if d := cmp.Diff([]string{"a", "c"}, api.puts); d != "" || !slices.Equal(api.deletes, []string{"b"}) {
		t.Errorf("after a ValidationException: puts %v, deletes %v; want a and c put, b deleted", api.puts, api.deletes)
	}
	if got := d.Stats().ConsumedWriteUnits; got != 3 {
		t.Errorf("consumed %v write units, want the 3 the item-by-item writes reported", got)
	}
	d.maxRounds = 1
	err := d.Write(ctx, batch)
	var be *BatchError
	if !errors.As(err, &be) || len(be.Failed) != 1 || be.Failed[0].Index != 1 {
		t.Errorf("error %v, want item 1 (the delete) still unprocessed", err)
	}
}

// recordingAPI records the write requests of each BatchWriteItem.
type recordingAPI struct {
	*fakeAPI
	sent *[]types.WriteRequest
}

func (r *recordingAPI) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	if len(*r.sent) == 0 {
		*r.sent = append(*r.sent, in.RequestItems["t"]...)
	}
	return r.fakeAPI.BatchWriteItem(ctx, in, o...)
}

// unprocessedDelete answers a BatchWriteItem leaving the deletes of keys
// unprocessed.
func unprocessedDelete(keys ...string) *dynamodb.BatchWriteItemOutput {
	var reqs []types.WriteRequest
	for _, it := range items(keys...) {
		reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: it.Attrs}})
	}
	return &dynamodb.BatchWriteItemOutput{UnprocessedItems: map[string][]types.WriteRequest{"t": reqs}}
}

// ClientConfig.WriteRetries counts the attempts of writes that the SDK
// repeated, and only those: a call that succeeds at once, a call that
// never reaches the network (its context cancelled, as when another
// writer of the run failed) and a read count none.
func TestWriteRetriesCounted(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".BatchWriteItem") && calls.Add(1) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"try again"}`)
			return
		}
		fmt.Fprint(w, `{}`)
	}))
	defer srv.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	var retries atomic.Int64
	client, err := NewClient(context.Background(), ClientConfig{Region: "us-east-1", EndpointURL: srv.URL, MaxAttempts: 3, WriteRetries: &retries})
	if err != nil {
		t.Fatal(err)
	}
	client = dynamodb.New(client.Options(), func(o *dynamodb.Options) {
		o.Retryer = retry.AddWithMaxBackoffDelay(o.Retryer, time.Millisecond)
	})
	sink := NewDynamoDB(client, "t", "PK", "")
	if err := sink.Write(context.Background(), items("a")); err != nil { // a 500, then written
		t.Fatal(err)
	}
	if err := sink.Write(context.Background(), items("b")); err != nil { // written at once
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sink.Write(cancelled, items("c")); !errors.Is(err, context.Canceled) {
		t.Fatalf("a write with its context cancelled: %v", err)
	}
	if _, err := client.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String("t")}); err != nil {
		t.Fatal(err)
	}
	if got, requests := retries.Load(), sink.Stats().Requests; got != 1 || requests != 3 {
		t.Errorf("%d retries counted of %d BatchWriteItem calls, want 1 of 3", got, requests)
	}
}

// Throttles counts the BatchWriteItem answers that throttled: each
// attempt the SDK retried after ProvisionedThroughputExceededException or
// ThrottlingException, and each answer with UnprocessedItems; not other
// errors the SDK retried (a 500), nor answers that wrote everything. A
// conditional delete's (DeleteIf) throttled attempts count too.
func TestThrottlesCounted(t *testing.T) {
	var calls atomic.Int64
	answers := []struct {
		status int
		body   string
	}{
		{400, `{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"slow down"}`},
		{400, `{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"slow down"}`},
		{500, `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"try again"}`},
		{200, `{"UnprocessedItems":{"t":[{"PutRequest":{"Item":{"PK":{"S":"a"}}}}]}}`},
		{200, `{}`}, // the re-send of a
		{200, `{}`}, // b
		{400, `{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"slow down"}`}, // DeleteIf
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, body := 200, `{}`
		if n := int(calls.Add(1)); n <= len(answers) {
			status, body = answers[n-1].status, answers[n-1].body
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(body))), 10))
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	defer srv.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	client, err := NewClient(context.Background(), ClientConfig{Region: "us-east-1", EndpointURL: srv.URL, MaxAttempts: 10})
	if err != nil {
		t.Fatal(err)
	}
	client = dynamodb.New(client.Options(), func(o *dynamodb.Options) {
		o.Retryer = retry.AddWithMaxBackoffDelay(o.Retryer, time.Millisecond)
	})
	sink := NewDynamoDB(client, "t", "PK", "")
	sink.Backoff = retry.NewExponentialJitterBackoff(time.Millisecond)
	var tc ThrottleCounter = sink
	// Two throttles and a 500 retried by the SDK, then UnprocessedItems
	// re-sent by the sink.
	if err := sink.Write(context.Background(), items("a")); err != nil {
		t.Fatal(err)
	}
	if got := tc.Throttles(); got != 3 {
		t.Errorf("%d throttles counted, want 3 (two errors the SDK retried, one UnprocessedItems)", got)
	}
	if err := sink.Write(context.Background(), items("b")); err != nil {
		t.Fatal(err)
	}
	if got := tc.Throttles(); got != 3 {
		t.Errorf("%d throttles after a write answered at once, want still 3", got)
	}
	if _, err := sink.DeleteIf(context.Background(), map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "c"}}, "type", "T"); err != nil {
		t.Fatal(err)
	}
	if got := tc.Throttles(); got != 4 {
		t.Errorf("%d throttles after a DeleteIf throttled once, want 4", got)
	}
}

// A request still throttled when the SDK's attempts run out counts as
// throttled, as every attempt the SDK retried after does.
func TestFinalThrottleCounts(t *testing.T) {
	throttled := &smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException", Message: "slow down"}
	api := &fakeAPI{batch: func(int, []string) (*dynamodb.BatchWriteItemOutput, error) { return nil, throttled }}
	var waits []int
	d := newSink(api, &waits)
	if err := d.Write(context.Background(), items("a")); !errors.Is(err, throttled) {
		t.Fatalf("Write: %v, want the throttling error", err)
	}
	if n := d.Throttles(); n != 1 {
		t.Errorf("%d throttled requests counted, want 1", n)
	}
}
