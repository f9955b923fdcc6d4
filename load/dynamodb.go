package load

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"golang.org/x/time/rate"

	"github.com/pg2dynamo/pg2dynamo/transform"
)

// ClientConfig says how to reach DynamoDB; empty fields default as for the CLI.
type ClientConfig struct {
	Region      string
	Profile     string
	EndpointURL string
	// MaxAttempts bounds the SDK's attempts per request (0 means 10).
	MaxAttempts int
	// WriteRetries, if not nil, counts write attempts past each call's first.
	WriteRetries *atomic.Int64
}

// retryCounter counts attempts numbered past 1: a call never sent counts 0.
type retryCounter struct {
	inner aws.HTTPClient
	n     *atomic.Int64
}

func (c retryCounter) Do(r *http.Request) (*http.Response, error) {
	switch r.Header.Get("X-Amz-Target") {
	case "DynamoDB_20120810.BatchWriteItem", "DynamoDB_20120810.PutItem", "DynamoDB_20120810.DeleteItem":
		if attemptNumber(r.Header.Get("Amz-Sdk-Request")) > 1 {
			c.n.Add(1)
		}
	}
	return c.inner.Do(r)
}

func attemptNumber(h string) int {
	for part := range strings.SplitSeq(h, ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "attempt="); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// NewClient builds a DynamoDB client without retry quotas (a long run must not
// fail on old throttling); it fails fast without region or credentials.
func NewClient(ctx context.Context, cc ClientConfig) (*dynamodb.Client, error) {
	attempts := cc.MaxAttempts
	if attempts <= 0 {
		attempts = 10
	}
	opts := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = attempts
				o.MaxBackoff = 20 * time.Second
				o.RateLimiter = ratelimit.None
				// A truncated response is retried: every call is a read or idempotent.
				o.Retryables = append(o.Retryables, retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
					var de *smithy.DeserializationError
					if errors.As(err, &de) {
						return aws.TrueTernary
					}
					return aws.UnknownTernary
				}))
			})
		}),
	}
	cfg, err := AWSConfig(ctx, cc.Region, cc.Profile, opts...)
	if err != nil {
		return nil, err
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if cc.EndpointURL != "" {
			o.BaseEndpoint = aws.String(cc.EndpointURL)
		}
		if cc.WriteRetries != nil {
			o.HTTPClient = retryCounter{inner: o.HTTPClient, n: cc.WriteRetries}
		}
	}), nil
}

// AWSConfig loads every client's AWS configuration (default chain and opts).
// It fails fast, naming the settings, when no region or credentials are found.
func AWSConfig(ctx context.Context, region, profile string, opts ...func(*config.LoadOptions) error) (aws.Config, error) {
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	if profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(profile))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return cfg, fmt.Errorf("aws config: %w", err)
	}
	if cfg.Region == "" {
		return cfg, errors.New("no AWS region: set --region, AWS_REGION or a region in the AWS profile")
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		return cfg, fmt.Errorf("no AWS credentials (set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, --profile or another source of the default chain; any values work for DynamoDB Local): %w", err)
	}
	return cfg, nil
}

// WriteAPI is what the DynamoDB sink calls: *dynamodb.Client, or a test fake.
type WriteAPI interface {
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// DynamoDB is a Sink that writes with BatchWriteItem.
type DynamoDB struct {
	client WriteAPI
	table  string
	keys   [2]string
	// Backoff gives the wait before the nth UnprocessedItems re-send (≤ 20 s).
	Backoff retry.BackoffDelayer
	// maxRounds bounds how often one batch's UnprocessedItems are re-sent.
	maxRounds int

	requests   atomic.Int64
	unprocRetr atomic.Int64
	// throttled counts throttled write requests (Throttles).
	throttled atomic.Int64
	consumed  atomic.Int64 // write units DynamoDB reported, ×10 (it reports tenths)
	// uncounted: ask for no ConsumedCapacity (CountWriteUnits).
	uncounted atomic.Bool

	limit *writeLimit

	// Deadline, when above 0, bounds one batch's time, retries included; past
	// it the batch fails and the run stops.
	Deadline time.Duration
}

// CountWriteUnits says whether BatchWriteItem asks for consumed write units
// (default on; always for LimitWriteUnits): the answer costs emulators CPU.
func (d *DynamoDB) CountWriteUnits(on bool) { d.uncounted.Store(!on) }

// writeLimit caps write units a second, halving on throttles, regaining 10%/s.
type writeLimit struct {
	cap      float64
	limiter  *rate.Limiter
	estimate func(map[string]types.AttributeValue) int64
	mu       sync.Mutex
	lastRise time.Time
	clock    clock
}

type clock interface {
	Now() time.Time
	// SleepUntil blocks until t, or returns ctx.Err() when ctx is done first.
	SleepUntil(ctx context.Context, t time.Time) error
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) SleepUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// LimitWriteUnits caps the sink at units (> 0) reported write units a second,
// bucket min(units, 50): estimate's units are awaited before sending, the rest
// after. Waits end when ctx is done or Deadline passes.
func (d *DynamoDB) LimitWriteUnits(units int, estimate func(map[string]types.AttributeValue) int64) {
	d.limitWriteUnits(units, estimate, wallClock{})
}

func (d *DynamoDB) limitWriteUnits(units int, estimate func(map[string]types.AttributeValue) int64, c clock) {
	burst := min(units, 50)
	d.limit = &writeLimit{cap: float64(units), limiter: rate.NewLimiter(rate.Limit(units), burst), estimate: estimate, clock: c}
}

// wait blocks until n write units may be consumed, in bucket-sized steps, or
// returns ctx.Err(). Not WaitN: it fails at once when the wait outlasts ctx's
// deadline, which Deadline must end then. The clock is read under l.mu, or the
// limiter would count a stale time as a pause and pay its tokens twice.
func (l *writeLimit) wait(ctx context.Context, n int64) error {
	for n > 0 {
		step := min(n, int64(l.limiter.Burst()))
		now, r := l.reserve(int(step))
		if delay := r.DelayFrom(now); delay > 0 {
			if err := l.clock.SleepUntil(ctx, now.Add(delay)); err != nil {
				l.cancel(r)
				return err
			}
		} else if err := ctx.Err(); err != nil {
			l.cancel(r)
			return err
		}
		n -= step
	}
	return nil
}

// reserve reserves n write units at the clock's now, which it returns.
func (l *writeLimit) reserve(n int) (time.Time, *rate.Reservation) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	return now, l.limiter.ReserveN(now, n)
}

// cancel gives back what r reserved and is still to come.
func (l *writeLimit) cancel(r *rate.Reservation) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r.CancelAt(l.clock.Now())
}

func (l *writeLimit) throttled() {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	l.limiter.SetLimitAt(now, max(1, l.limiter.Limit()/2))
	l.lastRise = now
}

func (l *writeLimit) succeeded() {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	if lim := float64(l.limiter.Limit()); lim < l.cap && now.Sub(l.lastRise) >= time.Second {
		l.limiter.SetLimitAt(now, rate.Limit(min(l.cap, lim*1.1+1)))
		l.lastRise = now
	}
}

// NewDynamoDB returns a sink writing to table, keyed by partitionKey, sortKey.
func NewDynamoDB(client WriteAPI, table, partitionKey, sortKey string) *DynamoDB {
	return &DynamoDB{
		client:    client,
		table:     table,
		keys:      [2]string{partitionKey, sortKey},
		Backoff:   retry.NewExponentialJitterBackoff(20 * time.Second),
		maxRounds: 20,
	}
}

// Stats are counters of a DynamoDB sink.
type Stats struct {
	// Requests counts BatchWriteItem and PutItem calls (SDK retries aside).
	Requests int64
	// UnprocessedRetries is the number of UnprocessedItems re-sends.
	UnprocessedRetries int64
	// Retries is the HTTP attempts the SDK repeated (from WriteRetries).
	Retries int64
	// ConsumedWriteUnits is the write capacity BatchWriteItem reported used.
	ConsumedWriteUnits float64
}

// Stats returns the sink's counters so far.
func (d *DynamoDB) Stats() Stats {
	return Stats{Requests: d.requests.Load(), UnprocessedRetries: d.unprocRetr.Load(),
		ConsumedWriteUnits: float64(d.consumed.Load()) / 10}
}

// Write puts batch with BatchWriteItem (deleting items marked Delete) and
// re-sends UnprocessedItems up to 20 rounds; items left are a *BatchError. A
// request DynamoDB rejects whole (ValidationException: an item over 400 KB, a
// key of the wrong type) is written item by item, so only invalid items fail,
// each ItemError with DynamoDB's code and message. Other errors stop the run.
// Write blocks for the write limit (LimitWriteUnits), requests and backoffs; a
// cancelled ctx ends it with ctx.Err(), past Deadline with the deadline's
// message.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html
func (d *DynamoDB) Write(ctx context.Context, batch []transform.Item) error {
	if d.Deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, d.Deadline,
			fmt.Errorf("a batch was still being retried after the retry deadline of %s (DynamoDB throttling or unreachable)", d.Deadline))
		defer cancel()
		err := d.write(ctx, batch)
		if err != nil && ctx.Err() != nil {
			return context.Cause(ctx) // the deadline's message, or the run's own stop
		}
		return err
	}
	return d.write(ctx, batch)
}

func (d *DynamoDB) write(ctx context.Context, batch []transform.Item) error {
	reqs := make([]types.WriteRequest, len(batch))
	for i, it := range batch {
		reqs[i] = writeRequest(it)
	}
	for round := 1; ; round++ {
		var estimate int64
		if d.limit != nil {
			for _, r := range reqs {
				estimate += d.limit.estimate(requestItem(r))
			}
			if err := d.limit.wait(ctx, estimate); err != nil {
				return err
			}
		}
		d.requests.Add(1)
		out, err := d.client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
			RequestItems:           map[string][]types.WriteRequest{d.table: reqs},
			ReturnConsumedCapacity: d.returnCapacity(),
		}, d.countThrottles)
		if err != nil {
			if isValidation(err) {
				return d.putEach(ctx, batch)
			}
			d.lastThrottle(err)
			return fmt.Errorf("BatchWriteItem on table %s: %w", d.table, err)
		}
		var used float64
		for _, c := range out.ConsumedCapacity {
			used += aws.ToFloat64(c.CapacityUnits)
		}
		d.consumed.Add(int64(used * 10))
		reqs = out.UnprocessedItems[d.table]
		if len(reqs) > 0 {
			d.throttled.Add(1)
		}
		if d.limit != nil {
			if extra := int64(used) - estimate; extra > 0 {
				if err := d.limit.wait(ctx, extra); err != nil {
					return err
				}
			}
			if len(reqs) > 0 {
				d.limit.throttled()
			} else {
				d.limit.succeeded()
			}
		}
		if len(reqs) == 0 {
			return nil
		}
		if round == d.maxRounds {
			return d.unprocessed(batch, reqs, round)
		}
		d.unprocRetr.Add(1)
		delay, _ := d.Backoff.BackoffDelay(round, nil)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Throttles counts write requests DynamoDB throttled so far (each attempt).
func (d *DynamoDB) Throttles() int64 { return d.throttled.Load() }

// returnCapacity is what a write asks DynamoDB to report of the capacity it
// consumed: nothing when uncounted and no write limit needs it.
func (d *DynamoDB) returnCapacity() types.ReturnConsumedCapacity {
	if d.uncounted.Load() && d.limit == nil {
		return types.ReturnConsumedCapacityNone
	}
	return types.ReturnConsumedCapacityTotal
}

// lastThrottle counts err, a request's final error, when it is a throttling
// error: the retryer counts only the attempts it retried after.
func (d *DynamoDB) lastThrottle(err error) {
	if throttles.IsErrorThrottle(err) == aws.TrueTernary {
		d.throttled.Add(1)
	}
}

// countThrottles is a call option counting throttling retries into d.throttled.
func (d *DynamoDB) countThrottles(o *dynamodb.Options) {
	if o.Retryer != nil {
		o.Retryer = throttleCounter{RetryerV2: asRetryerV2(o.Retryer), n: &d.throttled}
	}
}

// throttleCounter is a retryer counting the throttling errors it retries after.
type throttleCounter struct {
	aws.RetryerV2
	n *atomic.Int64
}

var throttles = retry.IsErrorThrottles(retry.DefaultThrottles)

func (t throttleCounter) RetryDelay(attempt int, err error) (time.Duration, error) {
	if throttles.IsErrorThrottle(err) == aws.TrueTernary {
		t.n.Add(1)
	}
	return t.RetryerV2.RetryDelay(attempt, err)
}

func asRetryerV2(r aws.Retryer) aws.RetryerV2 {
	if v2, ok := r.(aws.RetryerV2); ok {
		return v2
	}
	return retryerV2{r}
}

type retryerV2 struct{ aws.Retryer }

func (r retryerV2) GetAttemptToken(context.Context) (func(error) error, error) {
	return r.GetInitialToken(), nil
}

func (d *DynamoDB) unprocessed(batch []transform.Item, left []types.WriteRequest, rounds int) error {
	index := make(map[[2]string]int, len(batch))
	for i, it := range batch {
		index[d.keyOf(it.Attrs)] = i
	}
	be := &BatchError{}
	for _, r := range left {
		item := requestItem(r)
		if item == nil {
			continue
		}
		be.Failed = append(be.Failed, ItemError{
			Index: index[d.keyOf(item)],
			Err:   fmt.Errorf("still in UnprocessedItems after %d BatchWriteItem rounds", rounds),
		})
	}
	return be
}

func (d *DynamoDB) keyOf(item map[string]types.AttributeValue) [2]string {
	return transform.ItemKey(item, d.keys)
}

// putEach writes items one by one with PutItem to single out the invalid.
func (d *DynamoDB) putEach(ctx context.Context, batch []transform.Item) error {
	be := &BatchError{}
	rcc := d.returnCapacity()
	for i, it := range batch {
		d.requests.Add(1)
		var err error
		var used *types.ConsumedCapacity
		if it.Delete {
			var out *dynamodb.DeleteItemOutput
			out, err = d.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(d.table), Key: it.Attrs,
				ReturnConsumedCapacity: rcc}, d.countThrottles)
			if err == nil {
				used = out.ConsumedCapacity
			}
		} else {
			var out *dynamodb.PutItemOutput
			out, err = d.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(d.table), Item: it.Attrs,
				ReturnConsumedCapacity: rcc}, d.countThrottles)
			if err == nil {
				used = out.ConsumedCapacity
			}
		}
		switch {
		case err == nil:
			if used != nil {
				d.consumed.Add(int64(aws.ToFloat64(used.CapacityUnits) * 10))
			}
		case isValidation(err):
			be.Failed = append(be.Failed, ItemError{Index: i, Err: apiMessage(err)})
		default:
			d.lastThrottle(err)
			return fmt.Errorf("PutItem on table %s: %w", d.table, err)
		}
	}
	if len(be.Failed) > 0 {
		return be
	}
	return nil
}

func isValidation(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "ValidationException"
}

// apiMessage keeps DynamoDB's message and code, without the SDK's decoration.
func apiMessage(err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return fmt.Errorf("DynamoDB %s: %s", ae.ErrorCode(), ae.ErrorMessage())
	}
	return err
}

// writeRequest is it as a BatchWriteItem request: a put, or its key's delete.
func writeRequest(it transform.Item) types.WriteRequest {
	if it.Delete {
		return types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: it.Attrs}}
	}
	return types.WriteRequest{PutRequest: &types.PutRequest{Item: it.Attrs}}
}

func requestItem(r types.WriteRequest) map[string]types.AttributeValue {
	switch {
	case r.PutRequest != nil:
		return r.PutRequest.Item
	case r.DeleteRequest != nil:
		return r.DeleteRequest.Key
	}
	return nil
}
