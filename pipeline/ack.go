package pipeline

import (
	"slices"

	"github.com/pg2dynamo/pg2dynamo/transform"
)

type eventKind int

const (
	evStart eventKind = iota
	// evReject: rows is 1 when a reader rejected the row, 0 when a writer did
	// (its batch's evAck counts it).
	evReject
	evAck
	evReadDone
	evWriters
)

type event struct {
	kind      eventKind
	entity    int
	rows      int
	items     int
	reject    Reject
	part, seq int
	position  []string
}

// acknowledger alone calls Options' callbacks, in event order. A batch's
// rejects precede its acknowledgement, so after a crash every row the
// Checkpoint counts is written or listed. After a callback fails it only
// drains.
type acknowledger struct {
	opts  Options
	plans []*transform.Plan
	stats *stats
	stop  *stopper
	err   error
	// Per part: next batch to acknowledge, positions acked out of order, and
	// total batches once read (-1 before).
	parts    []part
	byEntity [][]int
	next     []int
	acked    []map[int][]string
	total    []int
}

func newAcknowledger(opts Options, plans []*transform.Plan, st *stats, stop *stopper, parts []part, byEntity [][]int) *acknowledger {
	a := &acknowledger{opts: opts, plans: plans, stats: st, stop: stop, parts: parts, byEntity: byEntity,
		next: make([]int, len(parts)), acked: make([]map[int][]string, len(parts)), total: make([]int, len(parts))}
	for i := range parts {
		a.acked[i] = map[int][]string{}
		a.total[i] = -1
	}
	return a
}

// run handles events until the channel is closed.
func (a *acknowledger) run(events <-chan event) {
	for ev := range events {
		if a.err != nil {
			continue
		}
		if err := a.handle(ev); err != nil {
			a.err = a.stop.fail(err)
		}
	}
}

func (a *acknowledger) handle(ev event) error {
	if ev.kind == evWriters {
		if wp, ok := a.opts.Progress.(WritersProgress); ok {
			wp.Writers(ev.rows)
		}
		return nil
	}
	name := a.plans[ev.entity].Entity().Name
	switch ev.kind {
	case evStart:
		if a.opts.Progress != nil {
			a.opts.Progress.Start(name)
		}
		return nil
	case evReject:
		a.advance(name, ev.rows, 0)
		if a.opts.OnReject == nil {
			return nil
		}
		return a.opts.OnReject(ev.reject)
	case evAck:
		a.advance(name, ev.rows, ev.items)
		return a.ack(ev.part, ev.seq, ev.position)
	case evReadDone:
		return a.readDone(ev.part, ev.seq)
	}
	return nil
}

func (a *acknowledger) advance(entity string, rows, items int) {
	if a.opts.Progress != nil && rows > 0 {
		a.opts.Progress.Advance(entity, rows, items)
	}
}

// ack moves part id's written prefix over the batches acknowledged in sequence.
func (a *acknowledger) ack(id, seq int, position []string) error {
	if a.opts.Checkpoint == nil {
		return nil
	}
	a.acked[id][seq] = position
	moved := false
	for {
		pos, ok := a.acked[id][a.next[id]]
		if !ok {
			break
		}
		delete(a.acked[id], a.next[id])
		a.next[id]++
		if pos != nil {
			a.parts[id].r.After = pos
		}
		moved = true
	}
	if !moved {
		return nil
	}
	a.parts[id].r.Done = a.next[id] == a.total[id]
	return a.record(a.parts[id].entity)
}

func (a *acknowledger) readDone(id, batches int) error {
	if a.opts.Checkpoint == nil {
		return nil
	}
	a.total[id] = batches
	if a.next[id] != batches {
		return nil
	}
	a.parts[id].r.Done = true
	return a.record(a.parts[id].entity)
}

// record writes entity's ranges into the Checkpoint and calls OnCheckpoint.
func (a *acknowledger) record(entity int) error {
	name := a.plans[entity].Entity().Name
	done := a.opts.Checkpoint.record(name, a.ranges(entity))
	if a.opts.OnCheckpoint == nil {
		return nil
	}
	return a.opts.OnCheckpoint(a.opts.Checkpoint, name, done)
}

// plan records every entity's ranges before the first read (OnCheckpoint's
// entity ""), so a resume reads the same ranges.
func (a *acknowledger) plan(skip []bool) error {
	if a.opts.Checkpoint == nil {
		return nil
	}
	for i, p := range a.plans {
		if !skip[i] {
			a.opts.Checkpoint.record(p.Entity().Name, a.ranges(i))
		}
	}
	if a.opts.OnCheckpoint == nil {
		return nil
	}
	return a.opts.OnCheckpoint(a.opts.Checkpoint, "", false)
}

func (a *acknowledger) ranges(entity int) []Range {
	rs := make([]Range, len(a.byEntity[entity]))
	for i, id := range a.byEntity[entity] {
		rs[i] = a.parts[id].r
		rs[i].After = slices.Clone(rs[i].After)
	}
	return rs
}
