package pipeline

import (
	"errors"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// reader reads tasks, one at a time and each whole, with its own
// RowSource: it converts each row to items, checks their keys, and packs
// the rows into batches for the writers. Rows that cannot become items,
// and rows whose keys are taken, become rejects. One goroutine uses a
// reader.
type reader struct {
	*run
	src   RowSource
	items *transform.Builder
	buf   []transform.Item // the items of the row being converted
	check *keyCheck
}

func newReader(r *run, src RowSource) *reader {
	return &reader{run: r, src: src, items: transform.NewBuilder(), check: newKeyCheck(r.keyAttrs)}
}

// readTask reads every part of t in order: replays (claims only) and reads.
func (r *reader) readTask(t *task) error {
	for _, pt := range t.parts {
		var err error
		if pt.replay {
			err = r.replay(t, pt)
		} else {
			err = r.read(t, pt)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// rangeQuery is p's Query bounded to range rg (when p reads in order).
func rangeQuery(p *transform.Plan, rg Range) (q extract.Query) {
	q = p.Query()
	if p.Ordered() {
		q.After, q.Until = rg.After, rg.Until
	}
	return q
}

// read reads part pt of task t and hands its rows to the writers. Whatever
// stops the reading, the rows read go to the writers if they still run.
func (r *reader) read(t *task, pt part) error {
	i, p := pt.entity, r.plans[pt.entity]
	if r.stats.begin(i) {
		r.events <- event{kind: evStart, entity: i}
	}
	b := newBatcher(r.batches, r.stop.writing, p, pt, r.stats)
	r.check.newBatch()
	owner := t.owner[i] // in its collision group, if it has one
	err := r.src.Stream(r.stop.reading, p.Entity().Name, rangeQuery(p, pt.r), func(values []any) error {
		return r.row(b, t.seen, owner, i, values)
	})
	if ferr := r.flush(b); err == nil {
		err = ferr
	}
	if err == nil {
		r.events <- event{kind: evReadDone, entity: i, part: pt.id, seq: b.sent()}
	}
	return err
}

// row converts one row of entity i and adds it to b, or rejects it.
// seen and owner are its collision group's key set and its owner index.
func (r *reader) row(b *batcher, seen *keySet, owner, i int, values []any) error {
	b.read++
	p := r.plans[i]
	var err error
	r.buf, err = r.items.Items(p, values, r.buf[:0])
	if err != nil {
		var re *transform.RowError
		if !errors.As(err, &re) {
			return err
		}
		return r.rejectRow(i, RowReject(re))
	}
	if !b.cur.fits(len(r.buf)) {
		if err := r.flush(b); err != nil {
			return err
		}
	}
	// BatchWriteItem refuses two puts of one key, and writing them in
	// turn would silently keep only the last: the batch is always
	// checked, and a collision group's run-wide set too (keys proven
	// unique by transform.KeysUnique cannot meet any other item's, so
	// they are not remembered).
	if d, dup := r.check.check(r.buf, seen, owner); dup {
		return r.rejectRow(i, Reject{Entity: p.Entity().Name, SourceKey: p.SourceKey(values),
			ItemKey: ItemKeyMap(d.key, r.keyAttrs), Reason: d.reason(r.plans, b.cur.items, r.keyAttrs)})
	}
	r.check.accept()
	if b.cur.add(r.buf) {
		return r.flush(b)
	}
	return nil
}

// flush hands b's batch to the writers; the next batch starts with no keys.
func (r *reader) flush(b *batcher) error {
	err := b.flush()
	r.check.newBatch()
	return err
}

// rejectRow counts and reports a row of entity i rejected while reading.
func (r *reader) rejectRow(i int, rej Reject) error {
	r.stats.finished(i, 0, 1, 0)
	r.events <- event{kind: evReject, entity: i, rows: 1, reject: rej}
	return nil
}

// replay reads part pt of task t (a range of an entity that an earlier run
// wrote), converts its rows and claims their keys in t's key set in the
// order that run did (primary-key order), so the rows that run rejected as
// duplicates are rejected again and the others hold their keys. Nothing is
// written, counted or listed.
func (r *reader) replay(t *task, pt part) error {
	p := r.plans[pt.entity]
	owner := t.owner[pt.entity]
	// No batch: the set alone holds every claim, those of rows that
	// shared a batch too, so it rejects what the batch check rejected.
	r.check.newBatch()
	return r.src.Stream(r.stop.reading, p.Entity().Name, rangeQuery(p, pt.r), func(values []any) error {
		var err error
		r.buf, err = r.items.Items(p, values, r.buf[:0])
		var re *transform.RowError
		if errors.As(err, &re) {
			return nil
		}
		if err != nil {
			return err
		}
		r.check.check(r.buf, t.seen, owner)
		return nil
	})
}
