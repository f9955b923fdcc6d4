package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// mixFloor is (h°), the server's own rate for the saturation burst's mix
// of item writes: measured on (h)'s dynalite just after the follow applied
// the burst (the follow idle), by a minimal writer like (b)'s (conc
// goroutines, BatchWriteItem of up to 25 requests, UnprocessedItems
// re-sent, nothing else). One timed round, shuffled, of as many requests
// of each kind as the burst made:
//   - an overwrite of each item of a ticket the burst updated, its
//     updated_at changed, and so every GSI key attribute that holds it
//     (as the burst's update moves them);
//   - a delete of each item of a ticket the burst inserted;
//   - a put of a copy of each of those under a new sort key.
//
// An untimed round then puts the table back as the source has it (the
// overwritten and deleted items as derived, the copies deleted). With a
// sparse index on updated_at, the burst's deletes would remove index
// entries the floor's do not (the inserted tickets' updated_at is NULL),
// so the floor would, if anything, run a little fast.
type mixFloor struct {
	overwrites, deletes, puts int64
	wall                      time.Duration
	dynCPU                    time.Duration // dynalite's CPU over wall
}

func (f mixFloor) items() int64 { return f.overwrites + f.deletes + f.puts }

// measureMixFloor runs (h°) for the burst w recorded (workload.burstUpdated,
// burstInserted), its items derived by migrate's code path.
func measureMixFloor(ctx context.Context, client *dynamodb.Client, conc, dynPID int, srcURL string, m *mapping.Mapping, w *workload) (mixFloor, error) {
	var f mixFloor
	var indexKeys []string
	for _, g := range m.Table.GSIs {
		indexKeys = append(indexKeys, g.PartitionKey, g.SortKey)
	}
	updated, err := ticketItems(ctx, srcURL, m, w.burstUpdated)
	if err != nil {
		return f, err
	}
	inserted, err := ticketItems(ctx, srcURL, m, w.burstInserted)
	if err != nil {
		return f, err
	}
	pk, sk := m.Table.PartitionKey, m.Table.SortKey
	key := func(it map[string]types.AttributeValue) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{pk: it[pk], sk: it[sk]}
	}
	copyOf := func(it map[string]types.AttributeValue) map[string]types.AttributeValue {
		c := maps.Clone(it)
		c[sk] = &types.AttributeValueMemberS{Value: it[sk].(*types.AttributeValueMemberS).Value + "#FLOOR"}
		return c
	}
	var timed, restore []types.WriteRequest
	for _, it := range updated {
		c := maps.Clone(it)
		if u, ok := it["updated_at"].(*types.AttributeValueMemberS); ok {
			c["updated_at"] = &types.AttributeValueMemberS{Value: u.Value + "~"}
			for _, a := range indexKeys {
				if v, ok := it[a].(*types.AttributeValueMemberS); ok && strings.Contains(v.Value, u.Value) {
					c[a] = &types.AttributeValueMemberS{Value: strings.Replace(v.Value, u.Value, u.Value+"~", 1)}
				}
			}
		}
		timed = append(timed, types.WriteRequest{PutRequest: &types.PutRequest{Item: c}})
		restore = append(restore, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
	}
	for _, it := range inserted {
		timed = append(timed, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: key(it)}},
			types.WriteRequest{PutRequest: &types.PutRequest{Item: copyOf(it)}})
		restore = append(restore, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}},
			types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: key(copyOf(it))}})
	}
	f.overwrites, f.deletes, f.puts = int64(len(updated)), int64(len(inserted)), int64(len(inserted))
	rand.New(rand.NewPCG(14, 0)).Shuffle(len(timed), func(i, j int) { timed[i], timed[j] = timed[j], timed[i] })

	cpu0 := threadCPU(dynPID)
	start := time.Now()
	if err := writeRequests(ctx, client, m.Table.Name, timed, conc); err != nil {
		return f, fmt.Errorf("(h°): %w", err)
	}
	f.wall = time.Since(start)
	f.dynCPU = threadCPU(dynPID) - cpu0
	if err := writeRequests(ctx, client, m.Table.Name, restore, conc); err != nil {
		return f, fmt.Errorf("(h°) restoring the table: %w", err)
	}
	log.Printf("(h°) the server's rate for the burst's mix: %s overwrites, %s deletes, %s puts in %s: %.0f items/s",
		num(f.overwrites), num(f.deletes), num(f.puts), f.wall.Round(time.Millisecond), float64(f.items())/f.wall.Seconds())
	return f, nil
}

// ticketItems derives the items of the tickets ids that exist, by
// migrate's code path (pipeline.Prepare, Source.Stream, Plan.Items).
func ticketItems(ctx context.Context, srcURL string, m *mapping.Mapping, ids []int64) ([]map[string]types.AttributeValue, error) {
	src, plans, err := prepare(ctx, srcURL, m)
	if err != nil {
		return nil, err
	}
	defer src.Close(ctx)
	if err := src.Begin(ctx); err != nil {
		return nil, err
	}
	defer src.End(ctx)
	i := slices.IndexFunc(plans, func(p *transform.Plan) bool { return p.Entity().Name == "Ticket" })
	if i < 0 {
		return nil, errors.New("the mapping has no Ticket entity")
	}
	p := plans[i]
	if n := len(p.Query().OrderBy); n != 1 {
		return nil, fmt.Errorf("the primary key of Ticket has %d columns, want 1 (ticket_id)", n)
	}
	var out []map[string]types.AttributeValue
	for chunk := range slices.Chunk(ids, 5000) {
		q := p.Query()
		vals := make([][]*string, len(chunk))
		for j, id := range chunk {
			text := strconv.FormatInt(id, 10)
			vals[j] = []*string{&text}
		}
		q.Match = &extract.Match{Columns: q.OrderBy, Values: vals}
		err := src.Stream(ctx, p.Entity().Name, q, func(values []any) error {
			items, err := p.Items(values, nil)
			if err != nil {
				return err
			}
			for _, it := range items {
				out = append(out, it.Attrs)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// writeRequests sends reqs to table with BatchWriteItem, up to 25 a
// request, conc requests at a time (writeBatches).
func writeRequests(ctx context.Context, client *dynamodb.Client, table string, reqs []types.WriteRequest, conc int) error {
	var next atomic.Int64
	return writeBatches(ctx, client, table, slices.Collect(slices.Chunk(reqs, load.MaxBatchItems)), conc, &next)
}

// writeBatches is the minimal loader of (b) and (h°): conc goroutines
// send batches with BatchWriteItem, each re-sending its UnprocessedItems
// and nothing else. next counts the batches taken (progress).
func writeBatches(ctx context.Context, client *dynamodb.Client, table string, batches [][]types.WriteRequest, conc int, next *atomic.Int64) error {
	g, gctx := errgroup.WithContext(ctx)
	for range conc {
		g.Go(func() error {
			for {
				i := next.Add(1) - 1
				if i >= int64(len(batches)) {
					return nil
				}
				for b := batches[i]; len(b) > 0; {
					out, err := client.BatchWriteItem(gctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: b}})
					if err != nil {
						return err
					}
					b = out.UnprocessedItems[table]
				}
			}
		})
	}
	return g.Wait()
}
