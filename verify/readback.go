package verify

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify/outcome"
)

// BatchGetItem's limit of keys a request.
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html
const batchGetKeys = 100

// readBackRounds bounds the re-asks of UnprocessedKeys before the read-back
// fails, with full-jitter backoff from readBackBaseDelay doubling to
// readBackMaxDelay.
const (
	readBackRounds    = 20
	readBackBaseDelay = 50 * time.Millisecond
	readBackMaxDelay  = 2 * time.Second
)

// readBack re-reads an applyRun's journaled keys, batchGetKeys per strongly
// consistent BatchGetItem.
type readBack struct {
	client   dynamodb.BatchGetItemAPIClient
	table    string
	keyAttrs [2]string
	// keyTypes are the types of keyAttrs (mapping.Table.KeyTypes).
	keyTypes [2]string
	typeAttr string
	// keysOnly reads only the key attributes and typeAttr, eventually
	// consistent: half the read units, and no other attribute sent.
	keysOnly bool
	// parallel is how many chunks are read at once (0 or 1: one after another).
	parallel int
}

// run reads back every key of j (stale ones only when deleted) into out's
// counts, counting apart the puts refused (when not nil) says the table
// refused; the rest are listed in unapplied.
func (rb *readBack) run(ctx context.Context, j *journal, out *outcome.Applied, deleted bool, unapplied *outcome.ListBuilder[outcome.ItemRef], refused Refusals) error {
	keep := func(e journalEntry) bool { return e.kind != journalStale || deleted }
	return rb.each(ctx, j, keep, func(e journalEntry, got map[string]types.AttributeValue) error {
		typ, _ := got[rb.typeAttr].(*types.AttributeValueMemberS)
		switch {
		case e.kind == journalPut && got != nil && sha256.Sum256(ddbjson.Canonical(got)) == e.sum:
			out.Matched++
		case e.kind == journalStale && got == nil:
			out.Gone++
		case e.kind == journalStale && (typ == nil || typ.Value != e.typ):
			out.Retyped++
		case e.kind == journalPut && refused != nil && refused.Refused(splitItemKey(e.key)):
			out.Refused++
		default:
			return unapplied.Add(e.key, itemRef(e.key, e.typ))
		}
		return nil
	})
}

// held counts, by holder type ("(none)" without one), keys of j held by an item
// of a type not in compared.
func (rb *readBack) held(ctx context.Context, j *journal, compared []string, held map[string]int64) error {
	var mu sync.Mutex
	visit := func(_ journalEntry, got map[string]types.AttributeValue) error {
		if got == nil {
			return nil
		}
		typ := "(none)"
		if v, ok := got[rb.typeAttr].(*types.AttributeValueMemberS); ok {
			typ = v.Value
		}
		if !slices.Contains(compared, typ) {
			mu.Lock()
			held[typ]++
			mu.Unlock()
		}
		return nil
	}
	return rb.each(ctx, j, func(journalEntry) bool { return true }, visit)
}

// each reads the keys of j's entries keep accepts in BatchGetItem chunks,
// rb.parallel at a time, calling visit with each entry and item; visit runs in
// journal order from one goroutine only when chunks run one after another.
func (rb *readBack) each(ctx context.Context, j *journal, keep func(journalEntry) bool, visit func(journalEntry, map[string]types.AttributeValue) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(rb.parallel, 1))
	var chunk []journalEntry
	flush := func() {
		c := chunk
		chunk = nil
		g.Go(func() error { return rb.chunk(gctx, c, visit) })
	}
	err := j.each(func(e journalEntry) error {
		if !keep(e) {
			return nil
		}
		if chunk = append(chunk, e); len(chunk) == batchGetKeys {
			flush()
		}
		return gctx.Err()
	})
	if err == nil && len(chunk) > 0 {
		flush()
	}
	// A chunk's error ends the walk with gctx's: it is the cause.
	if werr := g.Wait(); werr != nil {
		return werr
	}
	return err
}

// chunk reads entries' keys (at most batchGetKeys, distinct) and calls visit
// with each and its item, nil when absent; UnprocessedKeys are re-asked after a
// backoff.
func (rb *readBack) chunk(ctx context.Context, entries []journalEntry, visit func(journalEntry, map[string]types.AttributeValue) error) error {
	byKey := make(map[string]journalEntry, len(entries))
	keys := make([]map[string]types.AttributeValue, 0, len(entries))
	for _, e := range entries {
		byKey[e.key] = e
		keys = append(keys, rb.key(e.key))
	}
	ka := types.KeysAndAttributes{ConsistentRead: aws.Bool(true)}
	if rb.keysOnly {
		ka = types.KeysAndAttributes{ConsistentRead: aws.Bool(false), ProjectionExpression: aws.String("#k0, #t"),
			ExpressionAttributeNames: map[string]string{"#k0": rb.keyAttrs[0], "#t": rb.typeAttr}}
		if rb.keyAttrs[1] != "" {
			ka.ProjectionExpression = aws.String("#k0, #k1, #t")
			ka.ExpressionAttributeNames["#k1"] = rb.keyAttrs[1]
		}
	}
	for round := 1; len(keys) > 0; round++ {
		ka.Keys = keys
		out, err := rb.client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{rb.table: ka}})
		if err != nil {
			return fmt.Errorf("read back: BatchGetItem on table %s: %w", rb.table, err)
		}
		for _, it := range out.Responses[rb.table] {
			k := itemKey(it, rb.keyAttrs)
			e, ok := byKey[k]
			if !ok {
				continue
			}
			delete(byKey, k)
			if err := visit(e, it); err != nil {
				return err
			}
		}
		keys = out.UnprocessedKeys[rb.table].Keys
		if len(keys) == 0 {
			break
		}
		if round == readBackRounds {
			return fmt.Errorf("read back: %d keys still in UnprocessedKeys after %d BatchGetItem rounds on table %s", len(keys), round, rb.table)
		}
		if err := rb.wait(ctx, round); err != nil {
			return err
		}
	}
	for _, e := range entries { // in journal order
		if _, absent := byKey[e.key]; absent {
			if err := visit(e, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// key is the primary key of itemKey k, as DynamoDB takes it.
func (rb *readBack) key(k string) map[string]types.AttributeValue {
	ref := itemRef(k, "")
	return transform.KeyMap(rb.keyAttrs, rb.keyTypes, [2]string{ref.PK, ref.SK})
}

// wait sleeps the backoff of round (from 1), or until ctx is done.
func (rb *readBack) wait(ctx context.Context, round int) error {
	d := time.Duration(rand.Int64N(int64(min(readBackMaxDelay, readBackBaseDelay<<min(round-1, 10))) + 1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}
