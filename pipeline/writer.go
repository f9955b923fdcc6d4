package pipeline

import (
	"context"
	"errors"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// writer hands batches to the sink, one at a time, until the channel is
// closed: it counts the rows written, turns the items the sink reports as
// failed (a *load.BatchError) into rejects of their rows, and acknowledges
// each batch. Any other error from the sink stops the run.
type writer struct {
	*run
	sink load.Sink
	// index is the writer's number (from 0); an Autoscale run lets only
	// the first of them write (auto.gate), and each measures itself
	// (auto.meters[index]).
	index int
}

func (w *writer) loop(batches <-chan batch) error {
	for {
		if w.auto != nil && !w.auto.gate.wait(w.index, w.readDone) {
			return nil
		}
		b, ok := <-batches
		if !ok {
			return nil
		}
		if err := w.write(b); err != nil {
			return err
		}
	}
}

func (w *writer) write(b batch) error {
	if w.auto == nil {
		return w.writeBatch(b)
	}
	m := &w.auto.meters[w.index]
	m.begin(w.auto.now())
	if err := w.auto.pace.WaitN(w.stop.writing, len(b.items)); err != nil {
		if w.stop.writing.Err() != nil {
			return context.Cause(w.stop.writing)
		}
		return w.stop.fail(err)
	}
	err := w.writeBatch(b)
	m.end(w.auto.now(), len(b.items))
	return err
}

func (w *writer) writeBatch(b batch) error {
	err := w.sink.Write(w.stop.writing, b.items)
	var failed map[int]error // nil when every item was written
	var be *load.BatchError
	switch {
	case err == nil:
	case errors.As(err, &be):
		failed = make(map[int]error, len(be.Failed))
		for _, f := range be.Failed {
			failed[f.Index] = f.Err
		}
	case w.stop.writing.Err() != nil:
		return context.Cause(w.stop.writing)
	default:
		return w.stop.fail(err)
	}
	items := w.settle(b, failed)
	w.events <- event{kind: evAck, entity: b.entity, rows: rowCount(b), items: int(items), part: b.part, seq: b.seq, position: b.position}
	return nil
}

// settle counts b's rows written and rejects those with an item in
// failed (by index in the batch), naming the first failed item's key and
// error. It returns the number of items written.
func (w *writer) settle(b batch, failed map[int]error) int64 {
	var written, rejected, items int64
	var rowErr error
	var rowKey map[string]string
	for idx, it := range b.items {
		if ferr, bad := failed[idx]; !bad {
			items++
		} else if rowErr == nil {
			rowErr, rowKey = ferr, ItemKeyMap(transform.ItemKey(it.Attrs, w.keyAttrs), w.keyAttrs)
		}
		if !b.rowEnd[idx] {
			continue
		}
		if rowErr == nil {
			written++
			continue
		}
		p := w.plans[it.Entity]
		rejected++
		w.events <- event{kind: evReject, entity: b.entity, reject: Reject{Entity: p.Entity().Name,
			SourceKey: p.SourceKey(it.Row), ItemKey: rowKey, Reason: rowErr.Error()}}
		rowErr = nil
	}
	w.stats.finished(b.entity, written, rejected, items)
	return items
}

// rowCount is the number of rows in b.
func rowCount(b batch) int {
	n := 0
	for _, end := range b.rowEnd {
		if end {
			n++
		}
	}
	return n
}
