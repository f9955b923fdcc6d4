package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// writeAPI is DynamoDB at load.WriteAPI's seam: BatchWriteItem refuses
// the whole request when it holds a key in invalid (so that the sink puts
// each item alone, and PutItem refuses that one), or fails with err;
// DeleteItem's condition fails for the keys in retyped. It records the
// size of every batch and every delete.
type writeAPI struct {
	mu      sync.Mutex
	invalid map[string]bool
	retyped map[string]bool
	// taken are keys an item of type Other holds: a conditional PutItem
	// of them fails, returning that item.
	taken map[string]bool
	err   error
	// gate, if set, holds every BatchWriteItem until closed; each tells
	// entered first.
	gate, entered chan struct{}
	batches       []int
	deletes       []string
	// guarded are the conditional PutItems, each as its key and its
	// condition with the names and values put in.
	guarded []string
}

var errInvalid = &smithy.GenericAPIError{Code: "ValidationException", Message: "Item size has exceeded the maximum allowed size"}

func (f *writeAPI) BatchWriteItem(_ context.Context, in *dynamodb.BatchWriteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	if f.gate != nil {
		f.entered <- struct{}{}
		<-f.gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	var n int
	for _, reqs := range in.RequestItems {
		for _, r := range reqs {
			n++
			if f.invalid[str(r.PutRequest.Item["PK"])] {
				return nil, errInvalid
			}
		}
	}
	f.batches = append(f.batches, n)
	return &dynamodb.BatchWriteItemOutput{}, nil
}

func (f *writeAPI) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if f.invalid[str(in.Item["PK"])] {
		return nil, errInvalid
	}
	if in.ConditionExpression != nil {
		f.mu.Lock()
		defer f.mu.Unlock()
		cond := aws.ToString(in.ConditionExpression)
		for k, v := range in.ExpressionAttributeNames {
			cond = strings.ReplaceAll(cond, k, v)
		}
		for k, v := range in.ExpressionAttributeValues {
			cond = strings.ReplaceAll(cond, k, str(v))
		}
		pk := str(in.Item["PK"])
		f.guarded = append(f.guarded, pk+": "+cond)
		if f.taken[pk] {
			return nil, &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed"),
				Item: map[string]types.AttributeValue{"PK": in.Item["PK"], "SK": in.Item["SK"], "type": &types.AttributeValueMemberS{Value: "Other"}}}
		}
	}
	return &dynamodb.PutItemOutput{}, nil
}

func (f *writeAPI) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pk := str(in.Key["PK"])
	f.deletes = append(f.deletes, pk)
	if f.retyped[pk] {
		return nil, &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	}
	return &dynamodb.DeleteItemOutput{}, nil
}

func put(i int) verify.Write {
	pk := fmt.Sprintf("P#%d", i)
	return verify.Write{ItemRef: outcome.ItemRef{PK: pk, SK: "S", Type: "T"}, Entity: "E", WriteUnits: 2,
		Item: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: "S"}}}
}

// The applier puts in batches of 25 through the sink, counts what was
// acknowledged and the write units of it, turns the items DynamoDB
// refuses into rejects naming their key, and deletes conditionally,
// counting a failed condition as skipped; Wait may be called more than
// once, with writes between.
func TestTableApplier(t *testing.T) {
	ctx := context.Background()
	api := &writeAPI{invalid: map[string]bool{"P#30": true}, retyped: map[string]bool{"D#1": true}}
	var rejects []pipeline.Reject
	var mu sync.Mutex
	a := newTableApplier(load.NewDynamoDB(api, "t", "PK", "SK"), "type", [2]string{"PK", "SK"}, [2]string{"S", "S"}, entityE(t), pipeline.WritesOptions{Concurrency: 3}, func(r pipeline.Reject) error {
		mu.Lock()
		defer mu.Unlock()
		rejects = append(rejects, r)
		return nil
	})
	defer a.close()
	for i := range 60 {
		if err := a.Put(ctx, put(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := a.Delete(ctx, verify.Write{ItemRef: outcome.ItemRef{PK: fmt.Sprintf("D#%d", i), SK: "S", Type: "T"}, WriteUnits: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, n := range api.batches {
		sum += n
		if n > load.MaxBatchItems {
			t.Errorf("a batch of %d items", n)
		}
	}
	if sum != 35 || len(api.deletes) != 3 { // the batch with P#30 was put item by item
		t.Errorf("%d items in BatchWriteItems %v, %d deletes; want 35 and 3", sum, api.batches, len(api.deletes))
	}
	s := &a.stats
	if s.written.Load() != 59 || s.rejected.Load() != 1 || s.deleted.Load() != 2 || s.skipped.Load() != 1 || s.units.Load() != 59*2+2 {
		t.Errorf("written %d, rejected %d, deleted %d, skipped %d, units %d; want 59, 1, 2, 1, 120",
			s.written.Load(), s.rejected.Load(), s.deleted.Load(), s.skipped.Load(), s.units.Load())
	}
	if len(rejects) != 1 || rejects[0].Entity != "E" || rejects[0].ItemKey["PK"] != "P#30" || rejects[0].Reason != "DynamoDB ValidationException: Item size has exceeded the maximum allowed size" {
		t.Errorf("rejects %+v; want P#30's, with DynamoDB's message", rejects)
	} else if line, err := json.Marshal(rejects[0]); err != nil || string(line) !=
		`{"entity":"E","source_key":null,"item_key":{"PK":"P#30","SK":"S"},"reason":"DynamoDB ValidationException: Item size has exceeded the maximum allowed size"}` {
		t.Errorf("reject line %s (%v): want no source key, as before the applier wrote through pipeline.Writes", line, err)
	}
	if got := a.deletedByType(); got["T"] != 2 {
		t.Errorf("deleted by type %v", got)
	}
}

// A write that fails stops the applier: a later Put or Wait returns the
// error, and no writer is left running.
func TestTableApplierStopsOnError(t *testing.T) {
	ctx := context.Background()
	denied := &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "no"}
	a := newTableApplier(load.NewDynamoDB(&writeAPI{err: denied}, "t", "PK", "SK"), "type", [2]string{"PK", "SK"}, [2]string{"S", "S"}, entityE(t), pipeline.WritesOptions{Concurrency: 2}, nil)
	defer a.close()
	var err error
	for i := 0; i < 10_000 && err == nil; i++ {
		err = a.Put(ctx, put(i))
	}
	if err == nil {
		err = a.Wait(ctx)
	}
	if !errors.Is(err, denied) {
		t.Fatalf("got %v, want the write's error", err)
	}
	if a.g != nil {
		t.Error("writes left running")
	}
	if err := a.Wait(ctx); err != nil {
		t.Errorf("Wait after the error: %v", err)
	}
}

// While DynamoDB holds the writes, Put waits once one batch a writer is
// queued: the applier holds two batches a writer of items, not what a
// comparison finds ahead of the writes.
func TestTableApplierBoundsItemsHeld(t *testing.T) {
	ctx := context.Background()
	const writers = 2
	api := &writeAPI{gate: make(chan struct{}), entered: make(chan struct{}, 1000)}
	a := newTableApplier(load.NewDynamoDB(api, "t", "PK", "SK"), "type", [2]string{"PK", "SK"}, [2]string{"S", "S"}, entityE(t), pipeline.WritesOptions{Concurrency: writers}, nil)
	defer a.close()
	var returned atomic.Int64
	putting := make(chan error, 1)
	go func() {
		for i := range 2_000 {
			if err := a.Put(ctx, put(i)); err != nil {
				putting <- err
				return
			}
			returned.Add(1)
		}
		putting <- a.Wait(ctx)
	}()
	for range writers {
		<-api.entered
	}
	// In flight, queued, and the batch being filled, whose last Put waits to
	// queue it.
	limit := int64((writers + writers + 1) * load.MaxBatchItems)
	// On one P, a yield runs every runnable goroutine first: once many in a
	// row see no Put return, the putter is blocked, whatever the bound.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	held := returned.Load()
	for still := 0; still < 100; still++ {
		runtime.Gosched()
		if n := returned.Load(); n != held {
			held, still = n, 0
		}
	}
	close(api.gate)
	if err := <-putting; err != nil {
		t.Fatal(err)
	}
	if held != limit-1 {
		t.Errorf("%d Puts returned while DynamoDB held the writes; want %d", held, limit-1)
	}
	if got := a.stats.written.Load(); got != 2_000 {
		t.Errorf("%d items written, want 2000", got)
	}
}

// entityE is the plans of a mapping of one entity, E, over a source table t (id
// integer primary key), compiled without a database.
func entityE(t *testing.T) []*transform.Plan {
	t.Helper()
	m, err := mapping.Parse("m.yaml", []byte("table: {name: applied}\nentities:\n  E: {source: {table: t}, pk: \"P#${id}\", sk: \"S\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := transform.Compile(m, 0, transform.Sources{Columns: []extract.Column{{Name: "id", Type: "int4", PrimaryKey: true, KeyPos: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	return []*transform.Plan{p}
}

func str(av types.AttributeValue) string {
	if s, ok := av.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// With guard (a comparison that reads only some types' items), an item
// found missing is put alone on the condition that no item of another
// type holds its key; one that does is kept, and the put is a reject
// naming the type that holds the key. Changed items are batched as
// ever.
func TestTableApplierGuarded(t *testing.T) {
	ctx := context.Background()
	api := &writeAPI{taken: map[string]bool{"P#1": true}}
	var rejects []pipeline.Reject
	a := newTableApplier(load.NewDynamoDB(api, "t", "PK", "SK"), "type", [2]string{"PK", "SK"}, [2]string{"S", "S"}, entityE(t), pipeline.WritesOptions{Concurrency: 1}, func(r pipeline.Reject) error {
		rejects = append(rejects, r)
		return nil
	})
	a.guard = []string{"T", "U"}
	defer a.close()
	for i := range 5 {
		w := put(i)
		w.Missing = i < 3
		if err := a.Put(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	slices.Sort(api.guarded)
	want := []string{
		"P#0: (attribute_not_exists (PK)) OR (type IN (T, U))",
		"P#1: (attribute_not_exists (PK)) OR (type IN (T, U))",
		"P#2: (attribute_not_exists (PK)) OR (type IN (T, U))",
	}
	if !slices.Equal(api.guarded, want) || !slices.Equal(api.batches, []int{2}) {
		t.Errorf("conditional puts %q and batches %v; want %q and one batch of the 2 changed items", api.guarded, api.batches, want)
	}
	if s := &a.stats; s.written.Load() != 4 || s.rejected.Load() != 1 || s.units.Load() != 8 {
		t.Errorf("written %d, rejected %d, units %d; want 4, 1, 8", s.written.Load(), s.rejected.Load(), s.units.Load())
	}
	if len(rejects) != 1 || rejects[0].ItemKey["PK"] != "P#1" || rejects[0].Entity != "E" ||
		!strings.Contains(rejects[0].Reason, "duplicate primary key") || !strings.Contains(rejects[0].Reason, "an item of type Other") {
		t.Errorf("rejects %+v; want P#1's, a duplicate key held by an item of type Other", rejects)
	}
}
