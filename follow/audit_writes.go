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
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// The writes made beside the follow's stream: the keys each window
// writes, recorded while a comparison at a snapshot of its own runs
// (keyLog: the audit's slices, Beside), and that comparison's writes,
// made by the follow between two windows (repairReq).

// keyLog counts the follow's windows and, while recordings are under way
// (a slice of the audit, a Beside comparison), records in each the keys
// they write that fall in it. Its methods are safe for concurrent use
// (the follow's goroutine writes, the comparisons read) and do nothing
// on a nil keyLog.
type keyLog struct {
	on atomic.Int32 // recordings under way: len(recs)
	mu sync.Mutex
	// started counts the windows (Applier.Start, repairs) begun, finished
	// the first ones whose writes are all done (Flight.Wait), up to the
	// first not done; ahead holds the numbers above it done already (a
	// repair is written beside the windows, and may end after the
	// windows begun after it).
	started, finished uint64
	ahead             map[uint64]bool
	// moved is closed when finished moves (nil while nobody waits).
	moved chan struct{}
	recs  map[*recording]struct{}
}

// recording is one comparison's record of the keys the follow wrote
// since it began.
type recording struct {
	// in accepts the partition keys recorded (nil: every key).
	in   func(pk string) bool
	keys map[string]struct{}
}

// window counts a window begun and returns its number.
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

// add records the keys written in each recording that accepts them.
func (l *keyLog) add(keys ...[2]string) {
	if l == nil || l.on.Load() == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for r := range l.recs {
		for _, k := range keys {
			if r.in == nil || r.in(k[0]) {
				r.keys[itemKeyString(k)] = struct{}{}
			}
		}
	}
}

// record begins a recording of the keys written whose partition key in
// accepts (nil: all), and returns it with the number of windows begun
// so far (waitWindows).
func (l *keyLog) record(in func(pk string) bool) (*recording, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := &recording{in: in, keys: map[string]struct{}{}}
	if l.recs == nil {
		l.recs = map[*recording]struct{}{}
	}
	l.recs[r] = struct{}{}
	l.on.Store(int32(len(l.recs)))
	return r, l.started
}

// stop ends recording r and lets go of its keys.
func (l *keyLog) stop(r *recording) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.recs, r)
	r.keys = nil
	l.on.Store(int32(len(l.recs)))
}

// wrote reports whether key k was written since r began.
func (l *keyLog) wrote(r *recording, k [2]string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := r.keys[itemKeyString(k)]
	return ok
}

// waitWindows waits until the windows up to seq have written everything:
// after it, every write of the follow is recorded (a window begun later
// records its keys before it hands them to the writers).
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

// repairReq is a chunk of the audit's repairs for the follow to write
// between two windows: items to put as derived, and deletes (Delete set,
// key attributes only). The follow leaves out the key of an item it has
// written since the slice began recording (skip): its item is newer than
// the snapshot's. done receives the outcome once written (buffered: the
// follow never waits on it).
type repairReq struct {
	items []transform.Item
	skip  func([2]string) bool
	done  chan error
	// skipped counts the puts and the deletes skip left out; took is how
	// long the writers took to write paced items, the rest of this chunk
	// and, when they wrote it back to back with the chunk before, that
	// one's too (sideFlight.pace): their pace, whatever the windows' (set
	// before done).
	skipped [2]int64
	taken   time.Time
	took    time.Duration
	paced   int64
}

// repairChunk is the most items one repair request holds: the audit
// derives again, from the slice's snapshot, only the items to repair,
// and holds at most this many of them at once.
const repairChunk = 500

// repair has the follow write out's drifted items, marking repaired those
// the table then holds as the source: missing and changed items are
// derived again in src's snapshot (the slice's) and put, stale ones
// deleted.
func (au *Auditor) repair(ctx context.Context, src *extract.Source, plans []*transform.Plan, out []drifted, repaired []bool) error {
	need := map[string]int{}
	var stale []int
	for j, d := range out {
		if d.kind == DriftStale {
			stale = append(stale, j)
		} else {
			need[itemKeyString(d.key)] = j
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
		// One writer: the sink is called from one goroutine.
		sink := load.SinkFunc(func(_ context.Context, batch []transform.Item) error {
			for _, it := range batch {
				ks := itemKeyString(transform.ItemKey(it.Attrs, au.keyAttrs))
				j, ok := need[ks]
				if !ok {
					continue
				}
				delete(need, ks)
				chunk, slots = append(chunk, transform.Item{Entity: it.Entity, Attrs: it.Attrs}), append(slots, j)
				if len(chunk) >= repairChunk {
					if err := flush(); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if _, err := pipeline.Run(ctx, pipeline.Postgres(src), au.m, plans, sink, pipeline.Options{Concurrency: 1}); err != nil {
			return err
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

// send hands items to the follow (Run takes them between two windows)
// and waits until they are written.
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

// maxSides is the most chunks written beside the windows at once
// (pipe.sides): one written while the next waits in the writers' queue
// behind it, so that the writers have the comparison's next chunk as
// they end one, whenever the follow takes it.
const maxSides = 2

// The chunks in flight beside the windows are handed to the writers
// without waiting (pipeline.BehindItems): taking one never holds up the
// windows. (An array of negative length does not compile.)
var _ [pipeline.BehindItems - maxSides*max(besideChunkMax, repairChunk)]struct{}

// sideFlight is a chunk of the writes beside the stream (an audit's
// repair, a Beside comparison's writes) being written beside the
// windows: written is closed once its writes are done, with their
// Group's rejects and error.
type sideFlight struct {
	f        *Flight
	written  chan struct{}
	rejected []pipeline.Reject
	err      error
	// items are the chunk's items written (those skip left out aside);
	// began is when the writers could begin them (the request taken, or
	// the chunk queued before it written), ended when its writes ended;
	// set before written is closed.
	items        int64
	began, ended time.Time
}

// pace is how long the writers took to write how many items, measured
// over s (repairReq.took, paced), given before, the chunk queued ahead of
// it (nil: none), both written. When before was still being written as
// s was taken, the writers wrote the two back to back, and their batches
// overlap at the seam: s alone, from before's end to its own, can measure
// a few batches in a few milliseconds (before's last batch slow, s's
// written beside it), a pace far above theirs, and the chunk sized on it
// would hold the windows meeting its keys for seconds. The two are then
// measured together, from before's beginning to the later end.
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

// takeRepair starts the writes of a chunk a comparison beside the stream
// hands over (an audit's repair, a Beside's writes), if one waits and
// fewer than maxSides are in flight, beside the windows (pipe.sides):
// its writes give way to the windows' (pipeline.Group.Behind), and the
// windows after it hold the items and deletes of its keys until it is
// written (Applier.start's side). It first collects the chunks written.
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

// beside is what the windows and chunks started next meet of the chunks
// in flight (Applier.start's side): their keys, and the wait for their
// writes (collectSides).
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
	}
}

// collectSides tells the comparisons of their chunks written, oldest
// first, and counts them done (keyLog.done): all of them, waiting for
// their writes, with wait; else those written already. It returns the
// first chunk's error (its comparison is told too).
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
		_, err := s.f.settle(s.rejected, s.err)
		s.f.repair.done <- err
		if err != nil {
			return fmt.Errorf("writes beside the stream (an audit's repair, a comparison's): %w", err)
		}
	}
	return nil
}

// abandonSides stops the writes of the chunks in flight at their next
// batch and waits for them; their comparisons are not told (they stop
// with the run's ctx).
func (p *pipe) abandonSides() {
	for _, s := range p.sides {
		s.f.wr.Cancel()
		<-s.written
		s.f.a.keys.done(s.f.seq)
	}
	p.sides = nil
}

// startRepair hands req's items to the write stage, as Start does a
// window's, in a Group that gives way to the windows' (Behind): an item
// of a key busy waits for barrier, the deletes come after it, and an
// item or delete of a key of the chunks in flight before it (side) waits
// for them. barrier is called exactly once, unless it fails.
func (a *Applier) startRepair(ctx context.Context, req *repairReq, busy map[[2]string]bool, barrier func() error, side beside) (*Flight, error) {
	g := &gate{barrier: barrier, busy: busy, side: side, start: func() *pipeline.Group {
		wr := a.group(ctx)
		wr.Behind()
		return wr
	}}
	req.taken = time.Now()
	f := &Flight{a: a, seq: a.keys.window(), repair: req}
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
	return f, nil
}

// boolIndex is 1 for true, 0 for false.
func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}
