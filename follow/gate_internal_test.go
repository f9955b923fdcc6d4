package follow

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// A window's items wait for its barrier (the window before it written),
// at most aheadItems of them; the barrier passes once; then every item
// reaches the sink, none before the barrier.
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
	barriers, addedAtBarrier, writtenAtBarrier := 0, 0, 0
	added := 0
	g := &gate{start: func() *writers { return a.startWriters(context.Background()) }}
	g.barrier = func() error {
		barriers++
		addedAtBarrier = added
		mu.Lock()
		writtenAtBarrier = written
		mu.Unlock()
		return nil
	}
	const n = aheadItems + 100
	for i := range n {
		added = i + 1
		it := transform.Item{Attrs: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "K"}}}
		if err := g.add(it); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.open(); err != nil {
		t.Fatal(err)
	}
	if err := g.wr.close(); err != nil {
		t.Fatal(err)
	}
	if barriers != 1 || addedAtBarrier != aheadItems || writtenAtBarrier != 0 || written != n {
		t.Errorf("barrier passed %d times, after %d items added (want 1, after %d) with %d written (want 0); %d of %d written in the end",
			barriers, addedAtBarrier, aheadItems, writtenAtBarrier, written, n)
	}
}
