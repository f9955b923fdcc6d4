// Package sinktest is the conformance suite every load.Sink passes (after
// golang-migrate's database/testing): a sink's tests call Test with a
// Harness; a capability the sink lacks is a nil field, and the subtests
// needing it are skipped naming the sink. It checks load.Sink's contract:
//   - Write returning nil means every item is in the destination once, as
//     written, for 1 to load.MaxBatchItems items and concurrent Writes.
//   - Refused items give a *load.BatchError with exactly their indexes; the
//     others are written.
//   - An unwritable destination gives an error that is not a *load.BatchError.
//   - A Write cancelled before or during the call returns within CancelWithin
//     with an error that errors.Is context.Canceled and is not a
//     *load.BatchError, or with nil and its items written.
package sinktest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// CancelWithin is how soon a cancelled Write must return: a bound on a Write
// that keeps retrying, not a measure of speed.
const CancelWithin = time.Minute

// readBackWait bounds reading the written items back.
const readBackWait = 5 * time.Minute

// Harness is one sink under test.
type Harness struct {
	// Name names the sink in messages, e.g. "load.DynamoDB".
	Name string
	// PartitionKey (required) and SortKey ("" for none) are the S keys.
	PartitionKey, SortKey string
	// New returns a sink on its own empty destination for one subtest,
	// cleaned up by t.Cleanup. Required.
	New func(t *testing.T) Target
	// Refusals turn a good item into one the destination refuses, by name; each
	// is a Rejects subtest. nil: Rejects is skipped.
	Refusals map[string]func(transform.Item) transform.Item
	// Unwritable returns a sink that cannot write (nil: skip PermanentError).
	Unwritable func(t *testing.T) load.Sink
}

// Target is a sink and the way to read back what it wrote.
type Target struct {
	Sink load.Sink
	// Read returns the items held under keys, in any order, each as often as
	// held. nil: nothing to read back (load.Null); only Write's result counts.
	Read func(ctx context.Context, keys []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error)
}

// Test runs the suite's subtests on the sink h describes.
func Test(t *testing.T, h Harness) {
	if h.New == nil || h.PartitionKey == "" {
		t.Fatalf("sinktest: harness %q needs New and PartitionKey", h.Name)
	}
	t.Run("Acknowledged", func(t *testing.T) { testAcknowledged(t, h) })
	t.Run("ConcurrentWrites", func(t *testing.T) { testConcurrent(t, h) })
	t.Run("Deletes", func(t *testing.T) { testDeletes(t, h) })
	t.Run("Rejects", func(t *testing.T) { testRejects(t, h) })
	t.Run("PermanentError", func(t *testing.T) { testPermanent(t, h) })
	t.Run("CancelledBefore", func(t *testing.T) { testCancelledBefore(t, h) })
	t.Run("CancelledDuring", func(t *testing.T) { testCancelledDuring(t, h) })
}

// Items returns n items keyed "<tag>#<i>" and "item", with an attribute of
// every DynamoDB type but sets.
func (h Harness) Items(tag string, n int) []transform.Item {
	out := make([]transform.Item, n)
	for i := range out {
		attrs := map[string]types.AttributeValue{
			h.PartitionKey: &types.AttributeValueMemberS{Value: fmt.Sprintf("%s#%d", tag, i)},
			"s":            &types.AttributeValueMemberS{Value: fmt.Sprintf("value %d", i)},
			"n":            &types.AttributeValueMemberN{Value: fmt.Sprintf("%d.5", i)},
			"b":            &types.AttributeValueMemberB{Value: []byte{byte(i), 0, 255}},
			"ok":           &types.AttributeValueMemberBOOL{Value: i%2 == 0},
			"none":         &types.AttributeValueMemberNULL{Value: true},
			"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{
				&types.AttributeValueMemberS{Value: "x"}, &types.AttributeValueMemberN{Value: fmt.Sprint(i)}}},
			"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
				"i": &types.AttributeValueMemberN{Value: fmt.Sprint(i)}}},
		}
		if h.SortKey != "" {
			attrs[h.SortKey] = &types.AttributeValueMemberS{Value: "item"}
		}
		out[i] = transform.Item{Attrs: attrs}
	}
	return out
}

// key is an item's primary key as Target.Read takes it.
func (h Harness) key(it transform.Item) map[string]types.AttributeValue {
	k := map[string]types.AttributeValue{h.PartitionKey: it.Attrs[h.PartitionKey]}
	if h.SortKey != "" {
		k[h.SortKey] = it.Attrs[h.SortKey]
	}
	return k
}

// expectHeld fails t unless the destination holds exactly want, once each,
// under asked's keys.
func (h Harness) expectHeld(t *testing.T, tg Target, asked, want []transform.Item) {
	t.Helper()
	keys := make([]map[string]types.AttributeValue, len(asked))
	for i, it := range asked {
		keys[i] = h.key(it)
	}
	ctx, cancel := context.WithTimeout(context.Background(), readBackWait)
	defer cancel()
	got, err := tg.Read(ctx, keys)
	if err != nil {
		t.Fatalf("%s: reading back the %d items written: %v", h.Name, len(keys), err)
	}
	wantItems := make([]map[string]types.AttributeValue, len(want))
	for i, it := range want {
		wantItems[i] = it.Attrs
	}
	w, g := testenv.CanonicalItems(wantItems), testenv.CanonicalItems(got)
	slices.Sort(w)
	slices.Sort(g)
	if d := cmp.Diff(w, g); d != "" {
		t.Errorf("%s: items held (-want +got):\n%s", h.Name, d)
	}
}

// skipRead skips t when the destination cannot be read back.
func (h Harness) skipRead(t *testing.T, tg Target, checked string) {
	t.Helper()
	if tg.Read == nil {
		t.Skipf("%s keeps nothing to read back: only %s was checked", h.Name, checked)
	}
}

func testAcknowledged(t *testing.T, h Harness) {
	tg := h.New(t)
	var all []transform.Item
	for _, n := range []int{1, 2, load.MaxBatchItems} {
		batch := h.Items(fmt.Sprintf("ack%d", n), n)
		if err := tg.Sink.Write(context.Background(), batch); err != nil {
			t.Fatalf("%s: Write of %d items: %v, want nil", h.Name, n, err)
		}
		all = append(all, batch...)
	}
	h.skipRead(t, tg, "that Write returned nil")
	h.expectHeld(t, tg, all, all)
}

// testDeletes: items marked Delete are gone once Write returns nil, also
// mixed with puts; deleting a missing key is no error.
func testDeletes(t *testing.T, h Harness) {
	tg := h.New(t)
	items := h.Items("del", 6)
	if err := tg.Sink.Write(context.Background(), items); err != nil {
		t.Fatalf("%s: Write: %v, want nil", h.Name, err)
	}
	batch := append(h.Items("del.new", 1), h.Items("del.never", 1)...)
	for _, it := range []transform.Item{items[1], items[4], batch[1]} {
		batch = append(batch, transform.Item{Attrs: h.key(it), Delete: true})
	}
	batch = slices.Delete(batch, 1, 2) // "del.never" only as a delete
	if err := tg.Sink.Write(context.Background(), batch); err != nil {
		t.Fatalf("%s: Write of puts and deletes: %v, want nil", h.Name, err)
	}
	h.skipRead(t, tg, "that Write returned nil")
	kept := []transform.Item{items[0], items[2], items[3], items[5], batch[0]}
	asked := append(append([]transform.Item{}, items...), batch[0], batch[len(batch)-1]) // each key once
	h.expectHeld(t, tg, asked, kept)
}

func testConcurrent(t *testing.T, h Harness) {
	const writers, batches = 8, 3
	tg := h.New(t)
	var wg sync.WaitGroup
	errs := make([]error, writers*batches)
	all := make([]transform.Item, 0, writers*batches*load.MaxBatchItems)
	for w := range writers {
		for b := range batches {
			all = append(all, h.Items(fmt.Sprintf("w%d.b%d", w, b), load.MaxBatchItems)...)
		}
	}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				i := w*batches + b
				errs[i] = tg.Sink.Write(context.Background(), all[i*load.MaxBatchItems:(i+1)*load.MaxBatchItems])
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("%s: concurrent Write %d: %v, want nil", h.Name, i, err)
		}
	}
	h.skipRead(t, tg, "that every Write returned nil")
	h.expectHeld(t, tg, all, all)
}

func testRejects(t *testing.T, h Harness) {
	if h.Refusals == nil {
		t.Skipf("%s refuses no item: it declares no Refusals", h.Name)
	}
	names := make([]string, 0, len(h.Refusals))
	for name := range h.Refusals {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			tg := h.New(t)
			good := h.Items("rejects", 5)
			batch := slices.Clone(good)
			bad := []int{1, 3}
			for _, i := range bad {
				batch[i] = h.Refusals[name](good[i])
			}
			err := tg.Sink.Write(context.Background(), batch)
			var be *load.BatchError
			if !errors.As(err, &be) {
				t.Fatalf("%s: Write of a batch with items %v refused (%s): %v, want a *load.BatchError", h.Name, bad, name, err)
			}
			var failed []int
			for _, f := range be.Failed {
				failed = append(failed, f.Index)
				if f.Err == nil {
					t.Errorf("%s: item %d failed without a reason", h.Name, f.Index)
				}
			}
			slices.Sort(failed)
			if d := cmp.Diff(bad, failed); d != "" {
				t.Errorf("%s: failed indexes (-want +got):\n%s", h.Name, d)
			}
			h.skipRead(t, tg, "the failed indexes")
			h.expectHeld(t, tg, good, []transform.Item{good[0], good[2], good[4]})
		})
	}
}

func testPermanent(t *testing.T, h Harness) {
	if h.Unwritable == nil {
		t.Skipf("%s has no destination that cannot be written: it declares no Unwritable", h.Name)
	}
	err := h.Unwritable(t).Write(context.Background(), h.Items("permanent", 2))
	var be *load.BatchError
	switch {
	case err == nil:
		t.Fatalf("%s: Write to an unwritable destination returned nil", h.Name)
	case errors.As(err, &be):
		t.Fatalf("%s: Write to an unwritable destination returned a *load.BatchError (%v); want an error that stops the run", h.Name, err)
	case errors.Is(err, context.Canceled):
		t.Fatalf("%s: Write to an unwritable destination returned a cancellation (%v)", h.Name, err)
	}
}

// checkCancelled fails t unless err suits a cancelled Write; it reports
// whether the batch was acknowledged.
func (h Harness) checkCancelled(t *testing.T, err error, took time.Duration) bool {
	t.Helper()
	if took > CancelWithin {
		t.Errorf("%s: a cancelled Write returned after %s, want within %s", h.Name, took, CancelWithin)
	}
	var be *load.BatchError
	switch {
	case err == nil:
		return true
	case errors.As(err, &be):
		t.Errorf("%s: a cancelled Write returned a *load.BatchError (%v): its items would be recorded as rejected", h.Name, err)
	case !errors.Is(err, context.Canceled):
		t.Errorf("%s: a cancelled Write returned %v, want an error wrapping context.Canceled", h.Name, err)
	}
	return false
}

func testCancelledBefore(t *testing.T, h Harness) {
	tg := h.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	batch := h.Items("cancelled", 3)
	start := time.Now()
	err := tg.Sink.Write(ctx, batch)
	if !h.checkCancelled(t, err, time.Since(start)) {
		return
	}
	h.skipRead(t, tg, "that Write returned in time")
	h.expectHeld(t, tg, batch, batch)
}

// testCancelledDuring cancels while full batches are written: every batch
// acknowledged is held, and the first not acknowledged returned a cancellation.
func testCancelledDuring(t *testing.T, h Harness) {
	const maxBatches = 40
	tg := h.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var acked []transform.Item
	var cancelledAt time.Time
	time.AfterFunc(5*time.Millisecond, func() {
		cancelledAt = time.Now()
		cancel()
	})
	for b := range maxBatches {
		batch := h.Items(fmt.Sprintf("during%d", b), load.MaxBatchItems)
		err := tg.Sink.Write(ctx, batch)
		var took time.Duration
		if ctx.Err() != nil {
			took = time.Since(cancelledAt)
		}
		if !h.checkCancelled(t, err, took) {
			t.Logf("%s: %d batches acknowledged, then %v", h.Name, b, err)
			break
		}
		acked = append(acked, batch...)
		if ctx.Err() != nil {
			break
		}
	}
	h.skipRead(t, tg, "what each Write returned")
	h.expectHeld(t, tg, acked, acked)
}
