package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// copyFloor is (a): each entity's query, exactly as migrate sends it
// (Plan.Query: its columns, in primary-key order), run as COPY (…) TO
// STDOUT into io.Discard.
func copyFloor(ctx context.Context, srcURL string, m *mapping.Mapping) (result, error) {
	src, plans, err := prepare(ctx, srcURL, m)
	if err != nil {
		return result{}, err
	}
	defer src.Close(ctx)
	var rows int64
	start := time.Now()
	for _, p := range plans {
		q := p.Query()
		if len(q.Args()) > 0 {
			return result{}, fmt.Errorf("entity %s: its query takes parameters; COPY cannot", p.Entity().Name)
		}
		tag, err := src.Conn().PgConn().CopyTo(ctx, io.Discard, "COPY ("+q.SQL()+") TO STDOUT")
		if err != nil {
			return result{}, fmt.Errorf("COPY %s: %w", p.Entity().Name, err)
		}
		rows += tag.RowsAffected()
	}
	return result{key: "a", items: rows, wall: time.Since(start)}, nil
}

func prepare(ctx context.Context, srcURL string, m *mapping.Mapping) (*extract.Source, []*transform.Plan, error) {
	src, err := extract.Connect(ctx, srcURL)
	if err != nil {
		return nil, nil, err
	}
	plans, err := pipeline.Prepare(ctx, src, m)
	if err != nil {
		src.Close(ctx)
		return nil, nil, err
	}
	return src, plans, nil
}

// floorItems are the items of (b), built before its clock starts by the
// code path migrate runs (pipeline.Prepare, Source.Stream, Plan.Items), in
// batches of up to 25 items of one entity, as migrate sends them.
type floorItems struct {
	batches  [][]types.WriteRequest
	items    int64
	bytes    int64 // transform.ItemSize of all items
	entities []entitySize
	rejected int64 // rows Plan.Items refused (migrate would reject them too)
	build    time.Duration
	heapMB   float64 // Go heap in use once they are built
}

type entitySize struct {
	name         string
	items, bytes int64
}

func buildItems(ctx context.Context, srcURL string, m *mapping.Mapping) (*floorItems, error) {
	start := time.Now()
	src, plans, err := prepare(ctx, srcURL, m)
	if err != nil {
		return nil, err
	}
	defer src.Close(ctx)
	if err := src.Begin(ctx); err != nil {
		return nil, err
	}
	fi := &floorItems{}
	for _, p := range plans {
		es := entitySize{name: p.Entity().Name}
		var cur []types.WriteRequest
		flush := func() {
			if len(cur) > 0 {
				fi.batches = append(fi.batches, cur)
				cur = nil
			}
		}
		err := src.Stream(ctx, es.name, p.Query(), func(values []any) error {
			items, err := p.Items(values, nil)
			if err != nil {
				var re *transform.RowError
				if errors.As(err, &re) {
					fi.rejected++
					return nil
				}
				return err
			}
			if len(cur)+len(items) > load.MaxBatchItems {
				flush()
			}
			if cur == nil {
				cur = make([]types.WriteRequest, 0, load.MaxBatchItems)
			}
			for _, it := range items {
				cur = append(cur, types.WriteRequest{PutRequest: &types.PutRequest{Item: it.Attrs}})
				es.items++
				es.bytes += int64(transform.ItemSize(it.Attrs))
			}
			if len(cur) == load.MaxBatchItems {
				flush()
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		flush()
		fi.entities = append(fi.entities, es)
		fi.items += es.items
		fi.bytes += es.bytes
	}
	fi.build = time.Since(start)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fi.heapMB = float64(ms.HeapAlloc) / (1 << 20)
	return fi, nil
}

// loadFloor is (b): conc writers send the pre-built batches with
// BatchWriteItem to a fresh dynalite, re-sending UnprocessedItems, and
// nothing else. Only that loop is timed (and profiled, into profilePath
// if not empty).
func loadFloor(ctx context.Context, root string, m *mapping.Mapping, fi *floorItems, conc int, profilePath string) (result, error) {
	d, err := startDynalite(ctx, root)
	if err != nil {
		return result{}, err
	}
	stopped := false
	defer func() {
		if !stopped {
			d.stop()
		}
	}()
	client, err := load.NewClient(ctx, load.ClientConfig{EndpointURL: d.endpoint})
	if err != nil {
		return result{}, err
	}
	if _, err := load.EnsureTable(ctx, client, m, true); err != nil {
		return result{}, err
	}
	table := m.Table.Name
	var prof *os.File
	if profilePath != "" {
		if prof, err = os.Create(profilePath); err != nil {
			return result{}, err
		}
		defer prof.Close()
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0 := selfCPU()
	if prof != nil {
		if err := pprof.StartCPUProfile(prof); err != nil {
			return result{}, err
		}
	}
	var next atomic.Int64
	start := time.Now()
	stopLog := logEvery(30*time.Second, func(elapsed time.Duration) {
		n := min(next.Load(), int64(len(fi.batches)))
		log.Printf("  (b) %d of %d batches sent (%s)", n, len(fi.batches), elapsed.Round(time.Second))
	})
	err = writeBatches(ctx, client, table, fi.batches, conc, &next)
	wall := time.Since(start)
	stopLog()
	if prof != nil {
		pprof.StopCPUProfile()
	}
	cpu := selfCPU() - cpu0
	runtime.ReadMemStats(&ms1)
	stopped = true
	dynCPU := d.stop()
	if err != nil {
		return result{}, err
	}
	log.Printf("(b) %d items in %s; %d GC cycles during the loop", fi.items, wall.Round(time.Millisecond), ms1.NumGC-ms0.NumGC)
	return result{key: "b", items: fi.items, wall: wall, cpu: cpu, dynCPU: dynCPU, profile: profilePath,
		gcCycles: int(ms1.NumGC - ms0.NumGC)}, nil
}

// selfCPU is this process's CPU time so far (user + system).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// logEvery calls fn every interval until the returned function is called;
// that function returns once fn is no longer running.
func logEvery(interval time.Duration, fn func(elapsed time.Duration)) (stop func()) {
	start := time.Now()
	done, exited := make(chan struct{}), make(chan struct{})
	t := time.NewTicker(interval)
	go func() {
		defer close(exited)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fn(time.Since(start))
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}
