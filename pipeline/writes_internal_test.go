package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/time/rate"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

func keyItem(pk string, del bool) transform.Item {
	return transform.Item{Entity: -1, Attrs: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}}, Delete: del}
}

// A delete the sink refuses stops its Group with an error naming the key
// (the window is not applied); a second Group of the same Writes goes on
// and is counted.
func TestWritesRefusedDeleteStopsItsGroup(t *testing.T) {
	sink := load.SinkFunc(func(_ context.Context, batch []transform.Item) error {
		be := &load.BatchError{}
		for i, it := range batch {
			if it.Delete && transform.ItemKey(it.Attrs, [2]string{"PK", ""})[0] == "GONE#2" {
				be.Failed = append(be.Failed, load.ItemError{Index: i, Err: errors.New("refused")})
			}
		}
		if len(be.Failed) > 0 {
			return be
		}
		return nil
	})
	w := NewWrites(sink, [2]string{"PK", ""}, WritesOptions{Concurrency: 2})
	defer w.Close()
	bad := w.Group(context.Background(), nil)
	for i := range 3 {
		if err := bad.Add([]transform.Item{keyItem(fmt.Sprint("GONE#", i), true)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bad.Wait(); err == nil || !strings.Contains(err.Error(), "GONE#2") {
		t.Fatalf("Wait after a refused delete: %v; want an error naming its key", err)
	}
	good := w.Group(context.Background(), nil)
	for i := range 60 {
		if err := good.Add([]transform.Item{keyItem(fmt.Sprint("OK#", i), true)}); err != nil {
			t.Fatal(err)
		}
	}
	if rejects, err := good.Wait(); err != nil || len(rejects) != 0 {
		t.Fatalf("the next group: %v, %d rejects", err, len(rejects))
	}
	if n := w.Written(); n != 60 {
		t.Errorf("Written() = %d, want the 60 deletes of the second group (the first's batch was refused)", n)
	}
}

// AddThen tells each row's callback whether the sink wrote the row (nil)
// or refused it (the first refused item's error, for a row of two items
// too), so that a caller counts exactly what was acknowledged; a row of
// items with no source row (Row nil) is a reject with no source_key, the
// same JSON line as before the Writes took those rows. A row added with
// Add in the same batch has no callback and is settled alike.
func TestWritesAddThenToldOfEachRow(t *testing.T) {
	plans, _ := compilePlans(t, oneEntity)
	keyAttrs := [2]string{"PK", "SK"}
	sink := load.SinkFunc(func(_ context.Context, batch []transform.Item) error {
		be := &load.BatchError{}
		for i, it := range batch {
			if strings.HasPrefix(transform.ItemKey(it.Attrs, keyAttrs)[0], "BAD#") {
				be.Failed = append(be.Failed, load.ItemError{Index: i, Err: errors.New("refused")})
			}
		}
		if len(be.Failed) > 0 {
			return be
		}
		return nil
	})
	item := func(pk string) transform.Item {
		return transform.Item{Entity: 0, Attrs: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: "S"}}}
	}
	w := NewWrites(sink, keyAttrs, WritesOptions{Concurrency: 3})
	defer w.Close()
	g := w.Group(context.Background(), plans)
	var mu sync.Mutex
	var units int64
	var refused []string
	for i := range 100 {
		row := []transform.Item{item(fmt.Sprint("OK#", i))}
		switch {
		case i%10 == 3:
			row = []transform.Item{item(fmt.Sprint("BAD#", i))}
		case i%10 == 7: // a row of two items, the second refused
			row = append(row, item(fmt.Sprint("BAD#", i)))
		case i%10 == 9: // no callback
			if err := g.Add(row); err != nil {
				t.Fatal(err)
			}
			continue
		}
		err := g.AddThen(row, func(err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				refused = append(refused, fmt.Sprint(i, ": ", err))
				return
			}
			units += int64(i)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	rejects, err := g.Wait()
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for i := range 100 {
		if i%10 != 3 && i%10 != 7 && i%10 != 9 {
			want += int64(i)
		}
	}
	if units != want || len(refused) != 20 || !slices.Contains(refused, "17: refused") {
		t.Errorf("units of the rows written %d, want %d; refused %v, want the 20 rows 3, 7, 13, 17, …", units, want, refused)
	}
	if len(rejects) != 20 || w.Written() != 80+10 {
		t.Errorf("%d rejects, %d items written; want 20 and 90", len(rejects), w.Written())
	}
	i := slices.IndexFunc(rejects, func(r Reject) bool { return r.ItemKey["PK"] == "BAD#3" })
	if i < 0 {
		t.Fatalf("no reject of BAD#3 in %+v", rejects)
	}
	line, err := json.Marshal(rejects[i])
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(line), `{"entity":"P","source_key":null,"item_key":{"PK":"BAD#3","SK":"S"},"reason":"refused"}`; got != want {
		t.Errorf("reject line\n got %s\nwant %s", got, want)
	}
}

// OnBatch is told of each batch written, numbered in the order the
// batches were handed (Batches, Pending and Flush show them), with its
// rows written and refused and its last item, after the batch's rejects
// reached StreamRejects; OnStop is told of a failed write, not of Cancel.
func TestWritesOnBatchAndOnStop(t *testing.T) {
	keyAttrs := [2]string{"PK", ""}
	down := errors.New("table deleted")
	sink := load.SinkFunc(func(_ context.Context, batch []transform.Item) error {
		be := &load.BatchError{}
		for i, it := range batch {
			switch pk := transform.ItemKey(it.Attrs, keyAttrs)[0]; {
			case pk == "DOWN":
				return down
			case strings.HasPrefix(pk, "BAD#"):
				be.Failed = append(be.Failed, load.ItemError{Index: i, Err: errors.New("refused")})
			}
		}
		if len(be.Failed) > 0 {
			return be
		}
		return nil
	})
	plans, _ := compilePlans(t, oneEntity)
	item := func(pk string) transform.Item {
		it := keyItem(pk, false)
		it.Entity = 0
		return it
	}
	w := NewWrites(sink, keyAttrs, WritesOptions{Concurrency: 3})
	defer w.Close()
	var mu sync.Mutex
	var log []string // "reject BAD#i" and "ack seq"
	acks := map[int]BatchAck{}
	var stops []error
	onStop := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		stops = append(stops, err)
	}
	g := w.Group(context.Background(), plans)
	g.StreamRejects(func(r Reject) error {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, "reject "+r.ItemKey["PK"])
		return nil
	})
	g.OnBatch(func(a BatchAck) {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, fmt.Sprint("ack ", a.Seq))
		acks[a.Seq] = a
	})
	g.OnStop(onStop)
	for i := range 60 {
		pk := fmt.Sprint("OK#", i)
		if i%10 == 5 {
			pk = fmt.Sprint("BAD#", i)
		}
		if err := g.Add([]transform.Item{item(pk)}); err != nil {
			t.Fatal(err)
		}
	}
	if g.Batches() != 2 || len(g.Pending()) != 10 {
		t.Fatalf("after 60 rows: %d batches handed, %d items pending; want 2 and 10", g.Batches(), len(g.Pending()))
	}
	if err := g.Flush(); err != nil || g.Batches() != 3 || len(g.Pending()) != 0 {
		t.Fatalf("Flush: %v, %d batches handed, %d pending; want 3 and none", err, g.Batches(), len(g.Pending()))
	}
	if _, err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	for seq, want := range []struct {
		written, rejected int64
		last              string
	}{{23, 2, "OK#24"}, {22, 3, "OK#49"}, {9, 1, "OK#59"}} {
		a, ok := acks[seq]
		last := ""
		if ok {
			last = transform.ItemKey(a.Last.Attrs, keyAttrs)[0]
		}
		if !ok || a.Written != want.written || a.Rejected != want.rejected || a.Items != want.written || last != want.last {
			t.Errorf("batch %d: acknowledged %v %+v (last %s); want %d rows written, %d refused, last %s", seq, ok, a, last, want.written, want.rejected, want.last)
		}
	}
	for i := 5; i < 60; i += 10 {
		r, a := slices.Index(log, fmt.Sprint("reject BAD#", i)), slices.Index(log, fmt.Sprint("ack ", i/25))
		if r < 0 || a < r {
			t.Errorf("reject of row %d at %d, its batch's acknowledgement at %d; want the reject first (%v)", i, r, a, log)
		}
	}
	if len(acks) != 3 || len(stops) != 0 {
		t.Errorf("%d batches acknowledged, OnStop told %v; want 3, nothing", len(acks), stops)
	}

	failed := w.Group(context.Background(), plans)
	failed.OnStop(onStop)
	if err := failed.Add([]transform.Item{item("DOWN")}); err != nil {
		t.Fatal(err)
	}
	if _, err := failed.Wait(); !errors.Is(err, down) || len(stops) != 1 || !errors.Is(stops[0], down) {
		t.Errorf("a failed write: Wait %v, OnStop told %v; want the sink's error, told once", err, stops)
	}
	cancelled := w.Group(context.Background(), plans)
	cancelled.OnStop(onStop)
	cancelled.Cancel()
	if _, err := cancelled.Wait(); !errors.Is(err, context.Canceled) || len(stops) != 1 {
		t.Errorf("Cancel: Wait %v, OnStop told %v; want cancelled, not told", err, stops)
	}
}

// Do runs tasks on the writers of the pool, with the Group's context; a
// task's error stops its Group (Wait returns it, a later Add too), and the
// pool goes on writing for the next Group.
func TestWritesDoRunsOnThePool(t *testing.T) {
	var written atomic.Int64
	sink := load.SinkFunc(func(_ context.Context, batch []transform.Item) error {
		written.Add(int64(len(batch)))
		return nil
	})
	w := NewWrites(sink, [2]string{"PK", ""}, WritesOptions{Concurrency: 2})
	defer w.Close()

	var ran, running, most atomic.Int64
	g := w.Group(context.Background(), nil)
	for i := range 50 {
		err := g.Do(func(ctx context.Context) error {
			for n := running.Add(1); ; {
				if m := most.Load(); n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			defer running.Add(-1)
			time.Sleep(time.Millisecond)
			ran.Add(1)
			return ctx.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Add([]transform.Item{keyItem(fmt.Sprint("K#", i), false)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if ran.Load() != 50 || most.Load() > 2 || written.Load() != 50 || w.Written() != 50 {
		t.Errorf("%d tasks ran, at most %d at once, %d items written (Written %d); want 50, 2 or fewer, 50, 50 (a task is not counted)",
			ran.Load(), most.Load(), written.Load(), w.Written())
	}

	boom := errors.New("boom")
	bad := w.Group(context.Background(), nil)
	if err := bad.Do(func(context.Context) error { return boom }); err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Wait(); !errors.Is(err, boom) {
		t.Fatalf("Wait after a failed task: %v, want the task's error", err)
	}
	if err := bad.Add([]transform.Item{keyItem("LATE", false)}); !errors.Is(err, boom) {
		t.Errorf("Add after a failed task: %v, want the task's error", err)
	}

	next := w.Group(context.Background(), nil)
	if err := next.Add([]transform.Item{keyItem("NEXT", false)}); err != nil {
		t.Fatal(err)
	}
	if _, err := next.Wait(); err != nil || written.Load() != 51 {
		t.Errorf("the next group: %v, %d items written; want 51", err, written.Load())
	}
}

// StreamRejects hands each reject to its function as its batch is
// written, and none to Wait; the function's error stops the Group.
func TestWritesStreamRejects(t *testing.T) {
	plans, _ := compilePlans(t, oneEntity)
	keyAttrs := [2]string{"PK", "SK"}
	sink := load.SinkFunc(func(_ context.Context, batch []transform.Item) error {
		be := &load.BatchError{}
		for i := range batch {
			be.Failed = append(be.Failed, load.ItemError{Index: i, Err: errors.New("refused")})
		}
		return be
	})
	item := func(i int) []transform.Item {
		return []transform.Item{{Entity: 0, Attrs: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: fmt.Sprint("K#", i)}, "SK": &types.AttributeValueMemberS{Value: "S"}}}}
	}
	w := NewWrites(sink, keyAttrs, WritesOptions{Concurrency: 2})
	defer w.Close()
	var mu sync.Mutex
	var streamed []string
	g := w.Group(context.Background(), plans)
	g.StreamRejects(func(r Reject) error {
		mu.Lock()
		defer mu.Unlock()
		streamed = append(streamed, r.ItemKey["PK"])
		return nil
	})
	for i := range 30 {
		if err := g.Add(item(i)); err != nil {
			t.Fatal(err)
		}
	}
	if rejects, err := g.Wait(); err != nil || len(rejects) != 0 || len(streamed) != 30 {
		t.Fatalf("Wait: %d rejects, %v; %d streamed; want 0, nil, 30", len(rejects), err, len(streamed))
	}
	full := errors.New("rejects file full")
	g = w.Group(context.Background(), plans)
	g.StreamRejects(func(Reject) error { return full })
	for i := range 30 {
		if err := g.Add(item(i)); err != nil {
			break // stopped by the first batch's reject
		}
	}
	if _, err := g.Wait(); !errors.Is(err, full) {
		t.Errorf("Wait after the reject function failed: %v, want its error", err)
	}
}

// A Group started with Behind gives way: with one writer busy with the
// first of its batches, a batch of another Group handed after the rest of
// them is written next, before them; both Groups' items are all written,
// each Group's batches in the order handed; and Close drains both queues.
func TestWritesBehindGivesWay(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var order []string // the first key of each batch, as written
	sink := load.SinkFunc(func(_ context.Context, batch []transform.Item) error {
		mu.Lock()
		order = append(order, transform.ItemKey(batch[0].Attrs, [2]string{"PK", ""})[0])
		first := len(order) == 1
		mu.Unlock()
		if first {
			close(started)
			<-release
		}
		return nil
	})
	w := NewWrites(sink, [2]string{"PK", ""}, WritesOptions{Concurrency: 1})
	addBatch := func(g *Group, name string) {
		for i := range load.MaxBatchItems { // a full batch: handed at once
			if err := g.Add([]transform.Item{keyItem(fmt.Sprintf("%s#%d", name, i), false)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmp := w.Group(context.Background(), nil)
	cmp.Behind()
	addBatch(cmp, "C0")
	<-started // the writer holds C0
	for _, name := range []string{"C1", "C2", "C3"} {
		addBatch(cmp, name)
	}
	win := w.Group(context.Background(), nil)
	addBatch(win, "W0")
	close(release)
	if _, err := win.Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := cmp.Wait(); err != nil {
		t.Fatal(err)
	}
	late := w.Group(context.Background(), nil)
	late.Behind()
	addBatch(late, "L0")
	w.Close() // writes L0 before it returns
	want := []string{"C0#0", "W0#0", "C1#0", "C2#0", "C3#0", "L0#0"}
	if !slices.Equal(order, want) {
		t.Errorf("batches written in the order %v, want %v (the window's batch before the comparison's queued ahead of it)", order, want)
	}
	if n := w.Written(); n != 6*load.MaxBatchItems {
		t.Errorf("Written() = %d, want %d", n, 6*load.MaxBatchItems)
	}
}

// tableSink is a sink at a seam whose latency and capacity a test sets:
// each Write takes latency; with a capacity (items/s, a token bucket of
// one batch), a write the bucket refuses counts a throttled request and
// is tried again after latency, as the SDK retries a throttled request.
// It records each key written and the most writes in flight at once.
type tableSink struct {
	latency   time.Duration
	mu        sync.Mutex
	capacity  *rate.Limiter
	written   map[string]int
	inFlight  int
	most      int
	throttles atomic.Int64
}

func (s *tableSink) Throttles() int64 { return s.throttles.Load() }

// set gives the table a latency and a capacity of itemsPerSec (0: none)
// from now on.
func (s *tableSink) set(latency time.Duration, itemsPerSec float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency, s.capacity = latency, nil
	if itemsPerSec > 0 {
		s.capacity = rate.NewLimiter(rate.Limit(itemsPerSec), load.MaxBatchItems)
	}
}

// flight moves the writes in flight by d and returns the most so far.
func (s *tableSink) flight(d int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight += d
	s.most = max(s.most, s.inFlight)
	return s.most
}

func (s *tableSink) Write(ctx context.Context, batch []transform.Item) error {
	s.flight(1)
	defer s.flight(-1)
	for {
		s.mu.Lock()
		latency, capacity := s.latency, s.capacity
		s.mu.Unlock()
		time.Sleep(latency)
		if capacity == nil || capacity.AllowN(time.Now(), len(batch)) {
			break
		}
		s.throttles.Add(1)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, it := range batch {
		s.written[transform.ItemKey(it.Attrs, [2]string{"PK", ""})[0]]++
	}
	return ctx.Err()
}

var _ load.ThrottleCounter = (*tableSink)(nil)

// With Auto, a Writes adds writers while a sink whose every request takes
// 20 ms writes more items/s with more of them (the sink sees 16 or more
// writes at once, where a fixed Writes has DefaultConcurrency), and halves
// them when the sink, given a capacity below that rate, throttles; every
// row is written once throughout.
func TestWritesAutoscaleUpOnLatencyDownOnThrottling(t *testing.T) {
	const latency = 20 * time.Millisecond
	sink := &tableSink{latency: latency, written: map[string]int{}}
	var mu sync.Mutex
	var told []int
	lastTold := func() (last, peak int) {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range told {
			peak = max(peak, n)
		}
		return told[len(told)-1], peak
	}
	w := NewWrites(sink, [2]string{"PK", ""}, WritesOptions{
		Auto: &Autoscale{Start: 2, Max: 32, Interval: 50 * time.Millisecond},
		OnWriters: func(n int) {
			mu.Lock()
			defer mu.Unlock()
			told = append(told, n)
		}})
	g := w.Group(t.Context(), nil)
	stop, fed := make(chan struct{}), make(chan error, 1)
	var rows int
	go func() {
		for ; ; rows++ {
			select {
			case <-stop:
				fed <- nil
				return
			default:
			}
			if err := g.Add([]transform.Item{keyItem(fmt.Sprint("K#", rows), false)}); err != nil {
				fed <- err
				return
			}
		}
	}()
	if err := testenv.Poll("16 writes in flight at once", 30*time.Second, fed, func() bool { return sink.flight(0) >= 16 }); err != nil {
		t.Fatal(err)
	}
	_, peak := lastTold()
	sink.set(latency, float64(peak)*load.MaxBatchItems/latency.Seconds()/4)
	if err := testenv.Poll("fewer writers once throttled", 30*time.Second, fed, func() bool { last, peak := lastTold(); return last < peak }); err != nil {
		t.Fatal(err)
	}
	sink.set(0, 0) // the rows queued are written at once
	close(stop)
	if err := <-fed; err != nil {
		t.Fatal(err)
	}
	if _, err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if len(sink.written) != rows {
		t.Errorf("%d keys written of %d rows", len(sink.written), rows)
	}
	for k, n := range sink.written {
		if n != 1 {
			t.Fatalf("%s written %d times, want once", k, n)
		}
	}
	as := w.Autoscale()
	t.Logf("writers told %v; %d rows", told, rows)
	if as == nil || as.Halvings < 1 || as.Max < 16 || as.Last >= as.Max || as.Decisions[0].Writers != 2 {
		t.Errorf("autoscale summary %+v; want 2 writers at first, 16 or more, then a halving", as)
	}
	if sink.Throttles() == 0 {
		t.Error("the sink throttled no request")
	}
}

// OnTake's left-out items are not written: a row of two keeps the other and is
// written whole; a row left empty is told nil and counted neither way; the
// written func runs once each batch is written, and the sink never sees a
// batch left empty.
func TestWritesOnTakeLeavesOut(t *testing.T) {
	keyAttrs := [2]string{"PK", ""}
	var mu sync.Mutex
	var sunk []string
	sink := load.SinkFunc(func(_ context.Context, batch []transform.Item) error {
		mu.Lock()
		defer mu.Unlock()
		if len(batch) == 0 {
			t.Error("an empty batch reached the sink")
		}
		for _, it := range batch {
			sunk = append(sunk, transform.ItemKey(it.Attrs, keyAttrs)[0])
		}
		return nil
	})
	w := NewWrites(sink, keyAttrs, WritesOptions{Concurrency: 2})
	defer w.Close()
	g := w.Group(context.Background(), nil)
	var taken, written atomic.Int64
	g.OnTake(func(items []transform.Item) ([]bool, func()) {
		taken.Add(1)
		leave := make([]bool, len(items))
		for i, it := range items {
			leave[i] = strings.HasPrefix(transform.ItemKey(it.Attrs, keyAttrs)[0], "OUT#")
		}
		return leave, func() { written.Add(1) }
	})
	told := map[string]error{}
	add := func(name string, row ...transform.Item) {
		if err := g.AddThen(row, func(err error) { mu.Lock(); told[name] = err; mu.Unlock() }); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 { // two batches: 25 rows and 5
		switch i % 3 {
		case 0:
			add(fmt.Sprint("kept", i), keyItem(fmt.Sprint("IN#", i), false))
		case 1:
			add(fmt.Sprint("half", i), keyItem(fmt.Sprint("IN#", i), false), keyItem(fmt.Sprint("OUT#", i), false))
		case 2:
			add(fmt.Sprint("gone", i), keyItem(fmt.Sprint("OUT#", i), true))
		}
	}
	if _, err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(sunk)
	if len(sunk) != 20 || slices.ContainsFunc(sunk, func(k string) bool { return strings.HasPrefix(k, "OUT#") }) {
		t.Errorf("written %v: want the 20 IN# keys alone", sunk)
	}
	if len(told) != 30 || taken.Load() != written.Load() || taken.Load() < 2 {
		t.Errorf("%d rows told, %d batches taken, %d written: want 30 and at least 2 each, equal", len(told), taken.Load(), written.Load())
	}
	if w.Written() != 20 {
		t.Errorf("Written() = %d, want 20", w.Written())
	}
}
