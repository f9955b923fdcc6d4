package pipeline

import (
	"context"

	"github.com/pg2dynamo/pg2dynamo/load"
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
	w.auto.begin(w.index)
	if err := w.auto.pace.WaitN(w.stop.writing, len(b.items)); err != nil {
		if w.stop.writing.Err() != nil {
			return context.Cause(w.stop.writing)
		}
		return w.stop.fail(err)
	}
	err := w.writeBatch(b)
	w.auto.end(w.index, len(b.items))
	return err
}

func (w *writer) writeBatch(b batch) error {
	failed, err := writeBatch(w.stop.writing, w.sink, b.items)
	if err != nil {
		if w.stop.writing.Err() != nil {
			return context.Cause(w.stop.writing)
		}
		return w.stop.fail(err)
	}
	written, rejected, items := settleRows(b, failed, nil, w.plans, w.keyAttrs, func(r Reject) {
		w.events <- event{kind: evReject, entity: b.entity, reject: r}
	})
	w.stats.finished(b.entity, written, rejected, items)
	w.events <- event{kind: evAck, entity: b.entity, rows: rowCount(b), items: int(items), part: b.part, seq: b.seq, position: b.position}
	return nil
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
