package pipeline

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/pg2dynamo/pg2dynamo/transform"
)

// stats counts per entity what readers and writers did, in atomics.
type stats struct {
	totals   []int64
	entities []entityState
}

type entityState struct {
	rows, written, rejected, items atomic.Int64
	start, lastAck                 atomic.Int64 // unix nanoseconds
	started                        sync.Once
}

func newStats(totals []int64) *stats {
	return &stats{totals: totals, entities: make([]entityState, len(totals))}
}

// begin reports whether this is entity i's first part (Progress.Start is due).
func (s *stats) begin(i int) bool {
	first := false
	s.entities[i].started.Do(func() {
		s.entities[i].start.Store(time.Now().UnixNano())
		first = true
	})
	return first
}

func (s *stats) finished(i int, written, rejected, items int64) {
	st := &s.entities[i]
	st.written.Add(written)
	st.rejected.Add(rejected)
	st.items.Add(items)
	st.lastAck.Store(time.Now().UnixNano())
}

func (s *stats) summary(plans []*transform.Plan, started time.Time) *Summary {
	sum := &Summary{Elapsed: time.Since(started)}
	for i, p := range plans {
		st := &s.entities[i]
		es := EntityStats{Name: p.Entity().Name, Total: s.totals[i], Rows: st.rows.Load(),
			Written: st.written.Load(), Rejected: st.rejected.Load(), Items: st.items.Load()}
		es.NotWritten = es.Rows - es.Written - es.Rejected
		if b, l := st.start.Load(), st.lastAck.Load(); b > 0 && l > b {
			es.Elapsed = time.Duration(l - b)
		}
		sum.Entities = append(sum.Entities, es)
	}
	return sum
}
