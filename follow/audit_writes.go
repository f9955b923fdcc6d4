package follow

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// The writes beside the follow's stream: keys windows write, recorded for
// comparisons at their own snapshot (keyLog), and their writes (repairReq).

// keyLog counts the follow's windows and records, per recording under way, the
// keys written that fall in it. Safe for concurrent use; nil does nothing.
type keyLog struct {
	on atomic.Int32 // recordings under way: len(recs)
	mu sync.Mutex
	// started counts windows begun, finished those done in order; ahead holds
	// later ones done already (a repair may end out of order).
	started, finished uint64
	ahead             map[uint64]bool
	// moved is closed when finished moves (nil while nobody waits).
	moved chan struct{}
	recs  map[*recording]struct{}
}

// recording is one comparison's record of the keys the follow wrote.
type recording struct {
	keys map[[2]string]struct{}
}

func (l *keyLog) window() uint64 {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.started++
	return l.started
}

// done records that window seq's writes are all done (or abandoned).
func (l *keyLog) done(seq uint64) {
	if l == nil || seq == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if seq <= l.finished {
		return
	}
	if seq > l.finished+1 {
		if l.ahead == nil {
			l.ahead = map[uint64]bool{}
		}
		l.ahead[seq] = true
		return
	}
	for l.finished = seq; l.ahead[l.finished+1]; l.finished++ {
		delete(l.ahead, l.finished+1)
	}
	if l.moved != nil {
		close(l.moved)
		l.moved = nil
	}
}

func (l *keyLog) add(keys ...[2]string) {
	if l == nil || l.on.Load() == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for r := range l.recs {
		for _, k := range keys {
			r.keys[k] = struct{}{}
		}
	}
}

// record begins a recording of the keys written from now on, returning it
// with the number of windows begun so far (waitWindows).
func (l *keyLog) record() (*recording, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := &recording{keys: map[[2]string]struct{}{}}
	if l.recs == nil {
		l.recs = map[*recording]struct{}{}
	}
	l.recs[r] = struct{}{}
	l.on.Store(int32(len(l.recs)))
	return r, l.started
}

func (l *keyLog) stop(r *recording) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.recs, r)
	r.keys = nil
	l.on.Store(int32(len(l.recs)))
}

func (l *keyLog) wrote(r *recording, k [2]string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := r.keys[k]
	return ok
}

// waitWindows waits until windows up to seq are written: then every follow
// write is recorded (a later window records its keys before writing them).
func (l *keyLog) waitWindows(ctx context.Context, seq uint64) error {
	for {
		l.mu.Lock()
		if l.finished >= seq {
			l.mu.Unlock()
			return nil
		}
		if l.moved == nil {
			l.moved = make(chan struct{})
		}
		moved := l.moved
		l.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-moved:
		}
	}
}

// repairReq is a chunk of the audit's repairs for the follow to write between
// windows: puts, and deletes (key attributes only). Keys the follow wrote
// since the slice began are skipped (newer). done is buffered: never waited on.
type repairReq struct {
	items []transform.Item
	skip  func([2]string) bool
	done  chan error
	// skipped counts the puts and deletes skipped; took the writers' pace.
	skipped [2]int64
	taken   time.Time
	took    time.Duration
	paced   int64
}

// repairChunk is the most repairs one request holds (bounding memory).
const repairChunk = 500

// repair has the follow put the items of out's missing and changed keys, and
// delete the stale ones, marking those repaired. The items are derived again,
// from the entities they belong to only, in a snapshot of src begun now, not
// the pass's: the follow leaves out a repair of a key it has written since the
// pass began (Applier's side writes), and applies after the repair every
// change it has not applied yet, so each key ends as the follow leaves it. A
// key that snapshot no longer derives was taken away by such a change: it is
// marked gone and not written.
func (au *Auditor) repair(ctx context.Context, src *extract.Source, out []drifted, repaired, gone []bool) error {
	need := map[[2]string]int{}
	var stale []int
	entities := map[int]bool{}
	for j, d := range out {
		if d.kind == DriftStale {
			stale = append(stale, j)
		} else {
			need[d.key] = j
			entities[d.entity] = true
		}
	}
	var chunk []transform.Item
	var slots []int
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		err := au.send(ctx, chunk)
		if err == nil {
			for _, j := range slots {
				repaired[j] = true
			}
		}
		chunk, slots = nil, nil
		return err
	}
	if len(need) > 0 {
		if err := src.Begin(ctx); err != nil {
			return err
		}
		defer src.End(context.WithoutCancel(ctx))
		sub, plans, index, err := au.entitySubset(ctx, src, entities)
		if err != nil {
			return err
		}
		// One writer: the sink is called from one goroutine.
		sink := load.SinkFunc(func(_ context.Context, batch []transform.Item) error {
			for _, it := range batch {
				k := transform.ItemKey(it.Attrs, au.keyAttrs)
				j, ok := need[k]
				if !ok {
					continue
				}
				delete(need, k)
				chunk, slots = append(chunk, transform.Item{Entity: index[it.Entity], Attrs: it.Attrs}), append(slots, j)
				if len(chunk) >= repairChunk {
					if err := flush(); err != nil {
						return err
					}
				}
			}
			return nil
		})
		sum, err := pipeline.Run(ctx, pipeline.Postgres(src), sub, plans, sink, pipeline.Options{Concurrency: 1})
		if err != nil {
			return err
		}
		if err := src.End(ctx); err != nil {
			return err
		}
		au.update(func(st *AuditStatus) { st.RepairRows += sum.Total().Rows })
		for _, j := range need {
			gone[j] = true
		}
	}
	for _, j := range stale {
		chunk, slots = append(chunk, au.a.deleteItem(out[j].key)), append(slots, j)
		if len(chunk) >= repairChunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// entitySubset is the audit's mapping restricted to entities (indexes in
// it, mapping.Mapping.Only), its plans compiled in src's snapshot, and for
// each of its entities the index of the same entity in the audit's mapping.
func (au *Auditor) entitySubset(ctx context.Context, src *extract.Source, entities map[int]bool) (*mapping.Mapping, []*transform.Plan, []int, error) {
	m, index := au.m.Only(func(i int, _ *mapping.Entity) bool { return entities[i] })
	plans, err := pipeline.Prepare(ctx, src, m)
	return m, plans, index, err
}

// send hands items to the follow and waits until they are written.
func (au *Auditor) send(ctx context.Context, items []transform.Item) error {
	rec := au.rec
	req := &repairReq{items: items, skip: func(k [2]string) bool { return au.a.keys.wrote(rec, k) }, done: make(chan error, 1)}
	select {
	case au.a.side <- req:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// maxSides is the most side chunks in flight: one written, one queued.
const maxSides = 2

// Side chunks fit behind the windows without waiting (pipeline.BehindItems);
// a negative array length fails the build.
var _ [pipeline.BehindItems - maxSides*max(besideChunkMax, repairChunk)]struct{}

// sideFlight is a side chunk being written beside the windows.
type sideFlight struct {
	f *Flight
	// written is closed once the writes are done, rejected and err set.
	written  chan struct{}
	rejected []pipeline.Reject
	err      error
	// items are the chunk's items written, from began to ended; all three set
	// before written is closed.
	items        int64
	began, ended time.Time
}

// pace is the writers' time and item count for s. When before, the chunk
// queued ahead, was still writing as s was taken, their batches overlap and s
// alone would measure too fast a pace, so the two are measured together.
func (s *sideFlight) pace(before *sideFlight) (time.Duration, int64) {
	if before == nil || !before.ended.After(s.began) {
		return s.ended.Sub(s.began), s.items
	}
	end := s.ended
	if before.ended.After(end) {
		end = before.ended
	}
	return end.Sub(before.began), before.items + s.items
}

// takeRepair starts a waiting side chunk when fewer than maxSides are in
// flight: its writes give way to the windows' (pipeline.Group.Behind), and
// later windows hold its keys until it is written.
func (p *pipe) takeRepair(ctx context.Context, a *Applier) error {
	if err := p.collectSides(false); err != nil {
		return err
	}
	if len(p.sides) >= maxSides {
		return nil
	}
	var req *repairReq
	select {
	case req = <-a.side:
	default:
		return nil
	}
	var busy map[[2]string]bool
	if p.flight != nil {
		busy = p.flight.Keys()
	}
	f, err := a.startRepair(ctx, req, busy, func() error { return p.finish(ctx) }, p.beside())
	if err != nil {
		req.done <- err
		return err
	}
	s := &sideFlight{f: f, written: make(chan struct{}), began: req.taken, items: int64(len(req.items)) - req.skipped[0] - req.skipped[1]}
	var before *sideFlight // queued ahead of s
	if len(p.sides) > 0 {
		before = p.sides[len(p.sides)-1]
	}
	go func() {
		defer close(s.written)
		s.rejected, s.err = f.wr.Wait()
		s.ended = time.Now()
		if before != nil {
			<-before.written
		}
		req.took, req.paced = s.pace(before)
		if before != nil && before.ended.After(s.began) && before.ended.Before(s.ended) {
			s.began = before.ended
		}
	}()
	p.sides = append(p.sides, s)
	return nil
}

// beside is what later windows and chunks meet of the chunks in flight.
func (p *pipe) beside() beside {
	if len(p.sides) == 0 {
		return beside{}
	}
	sides := slices.Clone(p.sides)
	return beside{
		keys: func(k [2]string) bool {
			return slices.ContainsFunc(sides, func(s *sideFlight) bool { return s.f.w.seen[k] })
		},
		await: func() error { return p.collectSides(true) },
		claim: func(k [2]string) (waits []<-chan struct{}) {
			for _, s := range sides {
				if s.f.w.seen[k] {
					if ch := s.f.claims.claim(k); ch != nil {
						waits = append(waits, ch)
					}
				}
			}
			return waits
		},
	}
}

// sideClaims settles a side chunk's keys against later windows', which write
// newer items at them: a key whose batch no writer has taken yet is left out
// of the chunk (the window's write is the one the table needs); a window
// writing a key already taken waits for that batch alone.
type sideClaims struct {
	keyAttrs [2]string
	mu       sync.Mutex
	// taken holds, by key, a channel closed once the batch holding it is
	// written; left the keys claimed before any writer took them.
	taken map[[2]string]chan struct{}
	left  map[[2]string]bool
	// leftOut counts the puts and deletes left out, as repairReq.skipped.
	leftOut [2]int64
}

// claim claims k for a window: nil when the chunk will not write it, else the
// channel of the batch writing it.
func (c *sideClaims) claim(k [2]string) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.taken[k]; ok {
		return ch
	}
	c.left[k] = true
	return nil
}

// take is the chunk's pipeline.Group OnTake: it leaves out the claimed keys
// and marks the others taken.
func (c *sideClaims) take(items []transform.Item) ([]bool, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var leave []bool
	written := make(chan struct{})
	for i, it := range items {
		k := transform.ItemKey(it.Attrs, c.keyAttrs)
		if c.left[k] {
			if leave == nil {
				leave = make([]bool, len(items))
			}
			leave[i] = true
			c.leftOut[boolIndex(it.Delete)]++
			continue
		}
		c.taken[k] = written
	}
	return leave, func() { close(written) }
}

// collectSides tells the comparisons of their written chunks, oldest first,
// and returns the first chunk's error.
func (p *pipe) collectSides(wait bool) error {
	for len(p.sides) > 0 {
		s := p.sides[0]
		if !wait {
			select {
			case <-s.written:
			default:
				return nil
			}
		}
		<-s.written
		p.sides = p.sides[1:]
		s.f.claims.mu.Lock()
		for i, n := range s.f.claims.leftOut {
			s.f.repair.skipped[i] += n
		}
		s.f.claims.mu.Unlock()
		_, err := s.f.settle(s.rejected, s.err)
		s.f.repair.done <- err
		if err != nil {
			return fmt.Errorf("writes beside the stream (an audit's repair, a comparison's): %w", err)
		}
	}
	return nil
}

// abandonSides stops the chunks in flight and waits for them.
func (p *pipe) abandonSides() {
	for _, s := range p.sides {
		s.f.wr.Cancel()
		<-s.written
		s.f.a.keys.done(s.f.seq)
	}
	p.sides = nil
}

// startRepair hands req's items to the write stage as Start does, behind the
// windows'. barrier is called exactly once, unless it fails.
func (a *Applier) startRepair(ctx context.Context, req *repairReq, busy map[[2]string]bool, barrier func() error, side beside) (*Flight, error) {
	claims := &sideClaims{keyAttrs: a.keyAttrs, taken: map[[2]string]chan struct{}{}, left: map[[2]string]bool{}}
	g := &gate{barrier: barrier, busy: busy, side: side, start: func() *pipeline.Group {
		wr := a.group(ctx)
		wr.Behind()
		wr.OnTake(claims.take)
		return wr
	}}
	req.taken = time.Now()
	f := &Flight{a: a, seq: a.keys.window(), repair: req, claims: claims}
	f.w = &work{seen: map[[2]string]bool{}, out: g}
	var err error
	for _, it := range req.items {
		k := transform.ItemKey(it.Attrs, a.keyAttrs)
		if f.w.seen[k] {
			continue
		}
		if req.skip(k) {
			req.skipped[boolIndex(it.Delete)]++
			continue
		}
		f.w.seen[k] = true
		if it.Delete {
			f.w.deletes = append(f.w.deletes, k)
			continue
		}
		f.w.puts++
		if err = g.add([][2]string{k}, []transform.Item{it}); err != nil {
			break
		}
	}
	if oerr := g.open(); oerr != nil {
		if g.wr != nil {
			g.wr.Cancel()
			g.wr.Wait()
		}
		a.keys.done(f.seq)
		return nil, oerr
	}
	f.wr = g.wr
	for _, k := range f.w.deletes {
		if err != nil {
			break
		}
		if err = g.passSide(k); err == nil {
			err = f.wr.Add([]transform.Item{a.deleteItem(k)})
		}
	}
	if err != nil {
		f.abort()
		return nil, err
	}
	g.handed()
	return f, nil
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}
