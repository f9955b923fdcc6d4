package follow

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
	"weak"

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
	a := &Applier{sink: sink, keyAttrs: [2]string{"PK", "SK"}, Writers: pipeline.WritesOptions{Concurrency: 2}}
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

// An item of a key of the chunks written beside the windows (gate.side)
// is held until the barrier and the wait for those chunks have passed,
// once; an item of another key is written at once; once open, a row or a
// delete of a side key not yet waited for waits for the chunks first.
func TestGateWaitsForTheChunksBesideOnTheirKeys(t *testing.T) {
	var mu sync.Mutex
	var written []string
	sink := load.SinkFunc(func(_ context.Context, batch []transform.Item) error {
		mu.Lock()
		defer mu.Unlock()
		for _, it := range batch {
			written = append(written, transform.ItemKey(it.Attrs, [2]string{"PK", ""})[0])
		}
		return nil
	})
	a := &Applier{sink: sink, keyAttrs: [2]string{"PK", ""}, Writers: pipeline.WritesOptions{Concurrency: 1}}
	defer a.Close()
	item := func(pk string) []transform.Item {
		return []transform.Item{{Attrs: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}}}}
	}
	key := func(pk string) [][2]string { return [][2]string{{pk, ""}} }
	writtenNow := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), written...)
	}
	var events []string
	newGate := func() *gate {
		g := &gate{start: func() *pipeline.Group { return a.group(context.Background()) }}
		g.barrier = func() error { events = append(events, "barrier"); return nil }
		g.side = beside{keys: func(k [2]string) bool { return k[0] == "SIDE" || k[0] == "SIDE2" },
			await: func() error {
				if g.wr != nil { // what the window wrote before: never a side key
					if _, err := g.wr.Wait(); err != nil {
						return err
					}
					g.wr = a.group(context.Background())
				}
				events = append(events, fmt.Sprintf("await after %v", writtenNow()))
				return nil
			}}
		return g
	}

	g := newGate()
	for _, pk := range []string{"FREE", "SIDE", "FREE2"} {
		if err := g.add(key(pk), item(pk)); err != nil {
			t.Fatal(err)
		}
	}
	if len(g.held) != 1 || !g.needSide {
		t.Fatalf("%d items held (needSide %v), want the side key's", len(g.held), g.needSide)
	}
	if err := g.open(); err != nil {
		t.Fatal(err)
	}
	if err := g.add(key("SIDE2"), item("SIDE2")); err != nil { // passed already: no second wait
		t.Fatal(err)
	}
	if _, err := g.wr.Wait(); err != nil {
		t.Fatal(err)
	}
	want := []string{"barrier", "await after [FREE FREE2]"}
	if fmt.Sprint(events) != fmt.Sprint(want) || len(writtenNow()) != 4 {
		t.Errorf("events %q, written %v; want %q and the 4 items", events, writtenNow(), want)
	}

	// Open with no side key met: a later row, then a delete, of one waits.
	events, written = nil, nil
	g = newGate()
	if err := g.add(key("FREE"), item("FREE")); err != nil {
		t.Fatal(err)
	}
	if err := g.open(); err != nil {
		t.Fatal(err)
	}
	if err := g.add(key("SIDE"), item("SIDE")); err != nil {
		t.Fatal(err)
	}
	if err := g.passSide([2]string{"SIDE2", ""}); err != nil { // a delete's: passed already
		t.Fatal(err)
	}
	if _, err := g.wr.Wait(); err != nil {
		t.Fatal(err)
	}
	want = []string{"barrier", "await after [FREE]"}
	if fmt.Sprint(events) != fmt.Sprint(want) {
		t.Errorf("events %q, want %q", events, want)
	}
	g = newGate()
	events = nil
	if err := g.open(); err != nil {
		t.Fatal(err)
	}
	if err := g.passSide([2]string{"FREE", ""}); err != nil {
		t.Fatal(err)
	}
	if err := g.passSide([2]string{"SIDE", ""}); err != nil {
		t.Fatal(err)
	}
	want = []string{"barrier", "await after [FREE SIDE]"}
	if fmt.Sprint(events) != fmt.Sprint(want) {
		t.Errorf("a delete of a side key: events %q, want %q", events, want)
	}
}

// A chunk beside the windows is paced alone when the one before it was
// written by the time it was taken, and with that one when the writers
// wrote the two back to back: the first's last batch slow, the second
// ends 60 ms after it, which alone would read as 85,000 items a second.
func TestSidePaceOverChunksBackToBack(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	first := &sideFlight{items: 5000, began: at(0), ended: at(1800)}
	for _, tc := range []struct {
		name   string
		before *sideFlight
		s      *sideFlight
		took   time.Duration
		paced  int64
	}{
		{"alone", nil, &sideFlight{items: 2000, began: at(0), ended: at(1000)}, time.Second, 2000},
		{"after the one before", first, &sideFlight{items: 2000, began: at(2000), ended: at(3000)}, time.Second, 2000},
		{"back to back", first, &sideFlight{items: 5100, began: at(900), ended: at(1860)}, 1860 * time.Millisecond, 10100},
		{"ending first", first, &sideFlight{items: 100, began: at(900), ended: at(1700)}, 1800 * time.Millisecond, 5100},
	} {
		took, paced := tc.s.pace(tc.before)
		if took != tc.took || paced != tc.paced {
			t.Errorf("%s: paced %d items over %s, want %d over %s", tc.name, paced, took, tc.paced, tc.took)
		}
	}
}

// A window's gate claims the side chunk's keys: a key whose batch no writer
// has taken is left out of the chunk and the window does not wait for it; a
// key whose batch is being written holds the window's row until that batch
// is written, and the row is written after it.
func TestWindowClaimsTheSideChunksKeys(t *testing.T) {
	var mu sync.Mutex
	var written []string
	sideS1 := make(chan struct{}) // closed as the sink begins the side's S1
	release := make(chan struct{})
	first := true
	sink := load.SinkFunc(func(_ context.Context, batch []transform.Item) error {
		for _, it := range batch {
			pk := transform.ItemKey(it.Attrs, [2]string{"PK", ""})[0]
			if pk == "S1" && first {
				first = false
				close(sideS1)
				<-release
			}
			mu.Lock()
			written = append(written, pk)
			mu.Unlock()
		}
		return nil
	})
	a := &Applier{sink: sink, keyAttrs: [2]string{"PK", ""}, Writers: pipeline.WritesOptions{Concurrency: 1}}
	defer a.Close()
	item := func(pk string) []transform.Item {
		return []transform.Item{{Attrs: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}}}}
	}
	claims := &sideClaims{keyAttrs: a.keyAttrs, taken: map[[2]string]chan struct{}{}, left: map[[2]string]bool{}}
	side := a.group(context.Background())
	side.Behind()
	side.OnTake(claims.take)
	for _, pk := range []string{"S1", "S2"} { // a batch each
		if err := side.Add(item(pk)); err != nil {
			t.Fatal(err)
		}
		if err := side.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	<-sideS1 // the one writer holds S1's batch; S2's waits, not taken

	g := &gate{start: func() *pipeline.Group { return a.group(context.Background()) }, claims: true}
	g.side = beside{keys: func(k [2]string) bool { return k[0] == "S1" || k[0] == "S2" },
		await: func() error { t.Error("a window's gate awaited the whole chunk"); return nil },
		claim: func(k [2]string) []<-chan struct{} {
			if ch := claims.claim(k); ch != nil {
				return []<-chan struct{}{ch}
			}
			return nil
		}}
	for _, pk := range []string{"S2", "S1"} {
		if err := g.add([][2]string{{pk, ""}}, item(pk)); err != nil {
			t.Fatal(err)
		}
	}
	if len(g.held) != 1 || g.held[0][0].Attrs["PK"].(*types.AttributeValueMemberS).Value != "S1" {
		t.Fatalf("held %v, want S1's row alone", g.held)
	}
	opened := make(chan error, 1)
	go func() { opened <- g.open() }()
	close(release)
	if err := <-opened; err != nil {
		t.Fatal(err)
	}
	if _, err := g.wr.Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := side.Wait(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(written) != "[S1 S2 S1]" || claims.leftOut != [2]int64{1, 0} {
		t.Errorf("written %v, left out %v; want [S1 S2 S1] (the side's S1, the window's S2 and S1) and one put", written, claims.leftOut)
	}
}

// A side chunk, once written and collected, is let go while the chunks
// started after it are in flight: each chunk's gate met the chunks before it
// (to hold their keys), and a gate kept past its use would chain every chunk
// of a comparison live until the last (a comparison of 1M items held about
// 1 KB an item). Chunk 1 is written while chunks 2 and 3 start beside it;
// chunk 2 is then written and chunk 3 held: chunk 1 must be unreachable.
func TestSideChunksAreLetGoOnceWritten(t *testing.T) {
	release := map[string]chan struct{}{"C1": make(chan struct{}), "C2": make(chan struct{}), "C3": make(chan struct{})}
	sink := load.SinkFunc(func(_ context.Context, batch []transform.Item) error {
		for _, it := range batch {
			<-release[transform.ItemKey(it.Attrs, [2]string{"PK", ""})[0][:2]]
		}
		return nil
	})
	a := &Applier{sink: sink, keyAttrs: [2]string{"PK", ""}, Writers: pipeline.WritesOptions{Concurrency: 3}, side: make(chan *repairReq, 1)}
	defer a.Close()
	p := &pipe{}
	ctx := context.Background()
	take := func(chunk string) weak.Pointer[repairReq] {
		req := &repairReq{done: make(chan error, 1), skip: func([2]string) bool { return false }}
		for i := range 3 {
			req.items = append(req.items, transform.Item{Attrs: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: fmt.Sprint(chunk, "-", i)}}})
		}
		a.side <- req
		if err := p.takeRepair(ctx, a); err != nil {
			t.Fatal(err)
		}
		return weak.Make(req)
	}
	first := take("C1")
	take("C2") // beside chunk 1
	close(release["C1"])
	<-p.sides[0].written
	take("C3") // collects chunk 1, starts beside chunk 2
	if len(p.sides) != 2 {
		t.Fatalf("%d chunks in flight, want chunks 2 and 3", len(p.sides))
	}
	close(release["C2"])
	<-p.sides[0].written
	runtime.GC()
	if first.Value() != nil {
		t.Error("chunk 1, written and collected, is still reachable from the chunks after it")
	}
	close(release["C3"])
	if err := p.collectSides(true); err != nil {
		t.Fatal(err)
	}
}
