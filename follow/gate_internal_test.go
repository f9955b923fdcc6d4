package follow

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// A window's items of busy keys (the window before it writes them too)
// wait for its barrier, at most aheadItems of them; others are written at
// once; the barrier passes once; every item reaches the sink.
func TestGateHoldsItemsUntilTheBarrier(t *testing.T) {
	var mu sync.Mutex
	written := 0
	sink := load.SinkFunc(func(_ context.Context, batch []transform.Item) error {
		mu.Lock()
		defer mu.Unlock()
		written += len(batch)
		return nil
	})
	a := &Applier{sink: sink, keyAttrs: [2]string{"PK", "SK"}, Concurrency: 2}
	barriers, addedAtBarrier, heldAtBarrier := 0, 0, 0
	added := 0
	busyKey := [2]string{"BUSY", ""}
	g := &gate{busy: map[[2]string]bool{busyKey: true}, start: func() *pipeline.Group { return a.group(context.Background()) }}
	defer a.Close()
	g.barrier = func() error {
		barriers++
		addedAtBarrier, heldAtBarrier = added, len(g.held)
		return nil
	}
	const free, n = 30, aheadItems + 100
	for i := range free {
		k := [2]string{fmt.Sprint("FREE", i), ""}
		it := transform.Item{Attrs: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: k[0]}}}
		if err := g.add([][2]string{k}, []transform.Item{it}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		added = i + 1
		it := transform.Item{Attrs: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: busyKey[0]}}}
		if err := g.add([][2]string{busyKey}, []transform.Item{it}); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.open(); err != nil {
		t.Fatal(err)
	}
	if _, err := g.wr.Wait(); err != nil {
		t.Fatal(err)
	}
	if barriers != 1 || addedAtBarrier != aheadItems || heldAtBarrier != aheadItems || written != free+n {
		t.Errorf("barrier passed %d times, after %d busy items added and %d held (want 1, after %d, all held; the %d others not); %d of %d written in the end",
			barriers, addedAtBarrier, heldAtBarrier, aheadItems, free, written, free+n)
	}
}

// wal_sender_timeout as SHOW prints it.
func TestParseSetting(t *testing.T) {
	for in, want := range map[string]time.Duration{"0": 0, "500ms": 500 * time.Millisecond, "10s": 10 * time.Second, "1min": time.Minute, "2h": 2 * time.Hour, "1d": 24 * time.Hour, "60000": time.Minute} {
		if got, err := parseSetting(in); err != nil || got != want {
			t.Errorf("parseSetting(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := parseSetting("ten"); err == nil {
		t.Error(`parseSetting("ten"): want an error`)
	}
}
