package pipeline

import (
	"errors"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// reader reads tasks whole with its own RowSource, converting rows and checking
// keys, and hands each part's rows to a Group. One goroutine uses it.
type reader struct {
	*run
	src    RowSource
	items  *transform.Builder
	buf    []transform.Item // the items of the row being converted
	check  *keyCheck
	groups []*Group
}

func newReader(r *run, src RowSource) *reader {
	return &reader{run: r, src: src, items: transform.NewBuilder(), check: newKeyCheck(r.keyAttrs)}
}

// readTask reads t's parts in order: replays (claims only) and reads.
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

func rangeQuery(p *transform.Plan, rg Range) (q extract.Query) {
	q = p.Query()
	if p.Ordered() {
		q.After, q.Until = rg.After, rg.Until
	}
	return q
}

// read reads pt into a Group of its own; rows read go to the writers even if
// reading stops.
func (r *reader) read(t *task, pt part) error {
	i, p := pt.entity, r.plans[pt.entity]
	if r.stats.begin(i) {
		r.events <- event{kind: evStart, entity: i}
	}
	g := r.group(pt)
	owner := t.owner[i] // in its collision group, if it has one
	var read int64
	err := r.src.Stream(r.stop.reading, p.Entity().Name, rangeQuery(p, pt.r), func(values []any) error {
		read++
		return r.row(g, t.seen, owner, i, values)
	})
	// Counted once a part, so readers do not contend on every row.
	r.stats.entities[i].rows.Add(read)
	if ferr := g.Flush(); err == nil {
		err = ferr
	}
	if err == nil {
		r.events <- event{kind: evReadDone, entity: i, part: pt.id, seq: g.Batches()}
	}
	return err
}

// group starts pt's Group, reporting to the acknowledger; its failure stops the
// run.
func (r *reader) group(pt part) *Group {
	g := r.writes.Group(r.stop.writing, r.plans)
	g.StreamRejects(func(rej Reject) error {
		r.events <- event{kind: evReject, entity: pt.entity, reject: rej}
		return nil
	})
	g.OnBatch(func(a BatchAck) {
		r.stats.finished(pt.entity, a.Written, a.Rejected, a.Items)
		ev := event{kind: evAck, entity: pt.entity, rows: int(a.Written + a.Rejected), items: int(a.Items), part: pt.id, seq: a.Seq}
		if r.positions {
			ev.position = r.plans[pt.entity].Position(a.Last.Row)
		}
		r.events <- ev
	})
	g.OnStop(func(err error) { r.stop.fail(err) })
	r.groups = append(r.groups, g)
	return g
}

// row converts a row of entity i and adds it to g, or rejects it.
func (r *reader) row(g *Group, seen *keySet, owner, i int, values []any) error {
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
	if len(g.Pending())+len(r.buf) > load.MaxBatchItems {
		if err := g.Flush(); err != nil {
			return err
		}
	}
	if len(g.Pending()) == 0 {
		r.check.newBatch() // the row starts a batch
	}
	// BatchWriteItem refuses two puts of one key, and separate writes would
	// silently keep the last: check the batch, and a collision group's keys
	// run-wide.
	if d, dup := r.check.check(r.buf, seen, owner); dup {
		return r.rejectRow(i, Reject{Entity: p.Entity().Name, SourceKey: p.SourceKey(values),
			ItemKey: ItemKeyMap(d.key, r.keyAttrs, r.keyTypes), Reason: d.reason(r.plans, g.Pending(), r.keyAttrs)})
	}
	r.check.accept()
	return g.Add(r.buf)
}

func (r *reader) rejectRow(i int, rej Reject) error {
	r.stats.finished(i, 0, 1, 0)
	r.events <- event{kind: evReject, entity: i, rows: 1, reject: rej}
	return nil
}

// replay claims the keys of a range an earlier run wrote, in its order, so its
// duplicates are rejected again. Nothing is written, counted or listed.
func (r *reader) replay(t *task, pt part) error {
	p := r.plans[pt.entity]
	owner := t.owner[pt.entity]
	// No batch: the set alone rejects what the batch check rejected.
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
