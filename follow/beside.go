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

// Beside is a comparison at its own snapshot (a new mapping version against
// the table) whose writes the follow makes between windows, like the audit's
// repairs: keys the follow wrote since Applier.Beside are left out, and
// later windows' writes of a chunk's keys wait for it, so the older snapshot
// never overwrites a stream change. Use from one goroutine.
type Beside struct {
	a     *Applier
	rec   *recording
	chunk []transform.Item
	// size is the items the next chunk holds (besideChunkTime).
	size int
	// sent are the chunks handed to the follow and not yet known written.
	sent []*repairReq
	// Handed counts the items handed (puts and deletes); SkippedPuts and
	// SkippedDeletes those the follow left out. Final once Flush returns.
	Handed, SkippedPuts, SkippedDeletes int64
}

// Chunks aim at besideChunkTime of writes at the previous chunk's pace, within
// besideChunkMin and besideChunkMax items: the time a window may wait on one.
const (
	besideChunkTime                = time.Second
	besideChunkMin, besideChunkMax = 200, 20_000
)

// Beside begins a comparison beside the follow a applies, returning once
// every follow write is recorded. Run must be running for Flush to return.
func (a *Applier) Beside(ctx context.Context) (*Beside, error) {
	rec, seq := a.keys.record()
	if err := a.keys.waitWindows(ctx, seq); err != nil {
		a.keys.stop(rec)
		return nil, err
	}
	return &Beside{a: a, rec: rec, size: besideChunkMin}, nil
}

// Put hands item, derived by entity, to be put; it may return before the
// write (Flush), and blocks while the follow has not taken the previous chunk.
func (b *Beside) Put(ctx context.Context, entity string, item map[string]types.AttributeValue) error {
	e := slices.IndexFunc(b.a.m.Entities, func(me *mapping.Entity) bool { return me.Name == entity })
	if e < 0 {
		return fmt.Errorf("put: entity %q is not the follow's mapping's", entity)
	}
	return b.add(ctx, transform.Item{Entity: e, Attrs: item})
}

// Delete hands the delete of the item of key (partition, sort) to the follow,
// as Put.
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

// send hands the chunk over once earlier ones are taken, collecting those
// written.
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

// written counts req's items left out once written, and returns its error.
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

// Flush hands the held items over and waits until all handed are written.
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
