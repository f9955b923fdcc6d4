package pipeline

import (
	"context"
	"hash/fnv"
	"slices"

	"github.com/pg2dynamo/pg2dynamo/transform"
)

func ungrouped(n int) []int {
	of := make([]int, n)
	for i := range of {
		of[i] = -1
	}
	return of
}

// collisionGroups groups, in mapping order, the entities not proven unique with
// those whose keys may meet theirs, transitively; of[i] is -1 for none.
func collisionGroups(plans []*transform.Plan, unique []bool) (groups [][]int, of []int) {
	of = ungrouped(len(plans))
	for i := range plans {
		if unique[i] || of[i] >= 0 {
			continue
		}
		g := len(groups)
		of[i] = g
		members := []int{i}
		for next := 0; next < len(members); next++ {
			for j := range plans {
				if of[j] < 0 && transform.KeysMayMeet(plans[members[next]], plans[j]) {
					of[j] = g
					members = append(members, j)
				}
			}
		}
		slices.Sort(members)
		groups = append(groups, members)
	}
	return groups, of
}

// task is one part of an ungrouped entity, or a whole collision group read in
// mapping, range and key order, so the earlier row keeps a key, in migrate and
// verify alike.
type task struct {
	parts []part
	seen  *keySet
	owner map[int]int
}

// schedule turns the entities into parts (by id, and byEntity in range order)
// and tasks, in mapping order. A resumed group first replays what was written
// to rebuild its key set. totals[i] becomes the rows this run reads.
func schedule(ctx context.Context, src RowSource, plans []*transform.Plan, totals []int64, res resume,
	readers int, minRangeRows int64, shard Shard, groups [][]int, groupOf []int) (parts []part, byEntity [][]int, tasks []task, err error) {
	byEntity = make([][]int, len(plans))
	grouped := make([]task, len(groups))
	for g, members := range groups {
		grouped[g] = task{seen: newKeySet(members), owner: map[int]int{}}
		for k, i := range members {
			grouped[g].owner[i] = k
		}
	}
	taskOf := make([]int, len(groups)) // index in tasks of each group's task + 1
	for i, p := range plans {
		skip := res.skipped(i)
		g := groupOf[i]
		if skip && g < 0 {
			continue
		}
		rs, err := planRanges(ctx, src, p, &totals[i], res, i, readers, minRangeRows, shard, g >= 0)
		if err != nil {
			return nil, nil, nil, err
		}
		for k, r := range rs {
			if skip {
				r.Done = true // written whole: replayed whole when grouped
			}
			live := part{entity: i, id: len(parts), r: r}
			if !skip {
				parts = append(parts, live)
				byEntity[i] = append(byEntity[i], live.id)
			}
			switch {
			case g >= 0:
				if taskOf[g] == 0 {
					tasks = append(tasks, task{})
					taskOf[g] = len(tasks)
				}
				if done := replayed(i, lower(rs, k), r); done != nil {
					grouped[g].parts = append(grouped[g].parts, *done)
				}
				if !r.Done {
					grouped[g].parts = append(grouped[g].parts, live)
				}
			case !r.Done:
				tasks = append(tasks, task{parts: []part{live}})
			}
		}
	}
	for g, at := range taskOf {
		if at == 0 {
			continue
		}
		t := grouped[g]
		for len(t.parts) > 0 && t.parts[len(t.parts)-1].replay {
			t.parts = t.parts[:len(t.parts)-1]
		}
		tasks[at-1] = t
	}
	return parts, byEntity, slices.DeleteFunc(tasks, func(t task) bool { return len(t.parts) == 0 }), nil
}

// planRanges returns plan i's ranges, those recorded or new ones, and sets
// *total to the rows left in them.
func planRanges(ctx context.Context, src RowSource, p *transform.Plan, total *int64, res resume, i int,
	readers int, minRangeRows int64, shard Shard, grouped bool) (rs []Range, err error) {
	switch {
	case len(res.recorded(i)) > 0:
		if res.skipped(i) {
			return res.recorded(i), nil
		}
		*total, err = leftIn(ctx, src, p, res.recorded(i))
		return res.recorded(i), err
	case res.skipped(i) && shard.On():
		return nil, nil
	case res.skipped(i):
		return []Range{{Done: true}}, nil
	case shard.On():
		rs, *total, err = shardRanges(ctx, src, p, *total, shard)
	default:
		n := readers
		if grouped {
			n = 1 // read one after another anyway
		}
		rs, err = split(ctx, src, p, *total, n, minRangeRows)
	}
	for k := range rs {
		rs[k].From = rs[k].After
	}
	return rs, err
}

// replayed is the part of r an earlier run wrote, or nil.
func replayed(i int, start []string, r Range) *part {
	switch {
	case r.Done:
		return &part{entity: i, id: -1, r: Range{After: start, Until: r.Until}, replay: true}
	case len(r.After) > 0 && !slices.Equal(r.After, start):
		return &part{entity: i, id: -1, r: Range{After: start, Until: r.After}, replay: true}
	}
	return nil
}

type part struct {
	entity int // index in plans
	id     int // index in the run's parts; -1 for a replay
	r      Range
	// replay: read only to claim keys, as the earlier run did.
	replay bool
}

// leftIn counts p's rows in the ranges not done.
func leftIn(ctx context.Context, src RowSource, p *transform.Plan, rs []Range) (int64, error) {
	var n int64
	for _, r := range rs {
		if r.Done {
			continue
		}
		q := p.Query()
		q.After, q.Until = r.After, r.Until
		k, err := src.CountRange(ctx, p.Entity().Name, q)
		if err != nil {
			return 0, err
		}
		n += k
	}
	return n, nil
}

// shardRanges returns sh's range of p (none or one) and its row count.
func shardRanges(ctx context.Context, src RowSource, p *transform.Plan, rows int64, sh Shard) ([]Range, int64, error) {
	if !p.Ordered() {
		h := fnv.New32a()
		h.Write([]byte(p.Entity().Name))
		if int(h.Sum32()%uint32(sh.Count)) != sh.Index-1 {
			return nil, 0, nil
		}
		return []Range{{}}, rows, nil
	}
	first, last := cut(rows, sh.Index-1, sh.Count), cut(rows, sh.Index, sh.Count)
	if first == last { // fewer rows than shards
		return nil, 0, nil
	}
	at := []int64{first, 0}
	if sh.Index < sh.Count {
		at[1] = last
	}
	pos, err := src.Positions(ctx, p.Query(), at)
	if err != nil {
		return nil, 0, err
	}
	var r Range
	if first > 0 {
		if pos[0] == nil { // the snapshot holds fewer rows than counted
			return nil, 0, nil
		}
		r.After = pos[0]
	}
	r.Until = pos[1]
	return []Range{r}, last - first, nil
}

// cut is ⌊rows·k/n⌋, the rows before range k of n equal ranges.
func cut(rows int64, k, n int) int64 { return rows * int64(k) / int64(n) }

// split returns one range per reader when p is ordered and large enough.
func split(ctx context.Context, src RowSource, p *transform.Plan, rows int64, readers int, minRows int64) ([]Range, error) {
	n := int(min(int64(readers), rows/minRows))
	if !p.Ordered() || n < 2 {
		return []Range{{}}, nil
	}
	at := make([]int64, 0, n-1)
	for k := 1; k < n; k++ {
		at = append(at, cut(rows, k, n))
	}
	bounds, err := src.Positions(ctx, p.Query(), at)
	if err != nil {
		return nil, err
	}
	rs := make([]Range, 0, n)
	var after []string
	for _, b := range bounds {
		if b == nil { // past the last row
			break
		}
		rs = append(rs, Range{After: after, Until: b})
		after = b
	}
	return append(rs, Range{After: after}), nil
}
