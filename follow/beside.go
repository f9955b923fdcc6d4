package follow

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Beside is a comparison run beside the follow at a snapshot of its own
// (a new version of the mapping compared with the table) whose writes the
// follow makes between two windows, as it makes the audit's repairs (the
// file comment of audit.go gives the argument): Applier.Beside begins
// recording every key the follow writes, once every window begun before is
// written, and the caller takes its snapshot after it; Put and Delete hand
// the comparison's writes to the follow in chunks, of which Run leaves out
// every key the follow wrote since Beside began (its item derives from a
// state at least as new as the snapshot's). The later windows' writes of a
// key of the chunk wait for the chunk's, so no stream change is lost or
// overwritten by the snapshot's older state. A Beside is used from one
// goroutine; Close ends the recording.
type Beside struct {
	a     *Applier
	rec   *recording
	chunk []transform.Item
	// size is the items the next chunk holds (besideChunkTime).
	size int
	// sent are the chunks handed to the follow and not yet known written.
	sent []*repairReq
	// Handed counts the items handed (puts and deletes); SkippedPuts and
	// SkippedDeletes those the follow left out (it wrote their key since
	// Beside began). Final once Flush has returned.
	Handed, SkippedPuts, SkippedDeletes int64
}

// A Beside's chunks are sized by time: the follow takes a chunk between
// two windows, up to maxSides in flight, and writes it beside the windows
// that follow, whose writes the writers take first (a window writing a
// key of the chunk waits for it). Each chunk aims at besideChunkTime of
// writes, at the pace the chunk before was written, within besideChunkMin
// and besideChunkMax items: long enough that the writers have the next
// chunk queued when they end one, short enough that a window meeting one
// of its keys waits that long at most.
const (
	besideChunkTime                = time.Second
	besideChunkMin, besideChunkMax = 200, 20_000
)

// Beside begins a comparison beside the follow a applies (see Beside):
// it returns once every write of the follow is recorded. The follow must
// run (Run) for Flush to return.
func (a *Applier) Beside(ctx context.Context) (*Beside, error) {
	rec, seq := a.keys.record(nil)
	if err := a.keys.waitWindows(ctx, seq); err != nil {
		a.keys.stop(rec)
		return nil, err
	}
	return &Beside{a: a, rec: rec, size: besideChunkMin}, nil
}

// Put hands item, derived by the mapping's entity named entity, to be
// put; it may return before it is written (Flush), and blocks while the
// follow has not taken the chunk before.
func (b *Beside) Put(ctx context.Context, entity string, item map[string]types.AttributeValue) error {
	e := slices.IndexFunc(b.a.m.Entities, func(me *mapping.Entity) bool { return me.Name == entity })
	if e < 0 {
		return fmt.Errorf("put: entity %q is not the follow's mapping's", entity)
	}
	return b.add(ctx, transform.Item{Entity: e, Attrs: item})
}

// Delete hands the delete of the item of key (partition and sort key
// values) to the follow, as Put.
func (b *Beside) Delete(ctx context.Context, key [2]string) error {
	return b.add(ctx, b.a.deleteItem(key))
}

func (b *Beside) add(ctx context.Context, it transform.Item) error {
	b.chunk = append(b.chunk, it)
	if len(b.chunk) < b.size {
		return nil
	}
	return b.send(ctx)
}

// send hands the chunk to the follow, once the chunks handed before
// are taken, and collects the outcome of those already written.
func (b *Beside) send(ctx context.Context) error {
	if len(b.chunk) == 0 {
		return nil
	}
	n := int64(len(b.chunk))
	req := &repairReq{items: b.chunk, done: make(chan error, 1), skip: func(k [2]string) bool { return b.a.keys.wrote(b.rec, k) }}
	b.chunk = nil
	select {
	case b.a.side <- req:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	b.Handed += n
	b.sent = append(b.sent, req)
	for len(b.sent) > 0 {
		select {
		case err := <-b.sent[0].done:
			if err := b.written(b.sent[0], err); err != nil {
				return err
			}
			b.sent = b.sent[1:]
			continue
		default:
		}
		break
	}
	return nil
}

// written counts req's items left out once it is written, and returns
// its error.
func (b *Beside) written(req *repairReq, err error) error {
	if err != nil {
		return fmt.Errorf("the follow's writes of the comparison: %w", err)
	}
	b.SkippedPuts += req.skipped[0]
	b.SkippedDeletes += req.skipped[1]
	if req.paced > 0 && req.took > 0 {
		b.size = min(besideChunkMax, max(besideChunkMin, int(float64(req.paced)*besideChunkTime.Seconds()/req.took.Seconds())))
	}
	return nil
}

// Flush hands the items held to the follow and waits until every one
// handed is written.
func (b *Beside) Flush(ctx context.Context) error {
	if err := b.send(ctx); err != nil {
		return err
	}
	for _, req := range b.sent {
		select {
		case err := <-req.done:
			if err := b.written(req, err); err != nil {
				return err
			}
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	b.sent = nil
	return nil
}

// Close ends the recording of the follow's keys.
func (b *Beside) Close() { b.a.keys.stop(b.rec) }
