package pipeline

import (
	"context"
	"hash/fnv"
	"slices"

	"github.com/pg2dynamo/pg2dynamo/transform"
)

// ungrouped is collisionGroups' of for n entities in no group.
func ungrouped(n int) []int {
	of := make([]int, n)
	for i := range of {
		of[i] = -1
	}
	return of
}

// collisionGroups returns the entities the run-wide duplicate check
// covers, in groups: the entities whose keys transform.KeysUnique does not
// prove unique, each with every entity whose keys may meet its own
// (transform.KeysMayMeet), transitively. Keys of different groups never
// meet. Groups, and the entities in each, are in mapping order; of[i] is
// entity i's group, or -1 when it is in none.
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

// task is what one reader reads, part after part: one part of an entity
// outside any collision group, or a whole collision group, its entities in
// mapping order, each entity's ranges in order and each range's rows in
// primary-key order. So the row that keeps a key is always the earlier in
// that order, whatever the parallel readers do, and the same in migrate
// and verify.
type task struct {
	parts []part
	// seen holds the keys the group claimed; nil outside a group.
	seen *keySet
	// owner maps an entity (index in plans) to its index in the group.
	owner map[int]int
}

// schedule turns the entities into parts and the parts into tasks, in
// mapping order (a group's task where its first entity is). parts and
// byEntity are the parts written (by id, and each entity's in range
// order), for progress. A group's entities are read in one range each;
// a resumed group (res) first replays, without writing,
// what the earlier run recorded as written, so that its key set is as the
// earlier run left it. On a shard, or resuming entity i from recorded
// ranges, totals[i] becomes the number of rows of entity i this run reads.
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
		var rs []Range
		switch {
		case len(res.recorded(i)) > 0:
			rs = res.recorded(i)
			if totals[i], err = leftIn(ctx, src, p, rs); err != nil {
				return nil, nil, nil, err
			}
		case skip:
			rs = []Range{{Done: true}}
		case shard.On():
			if rs, totals[i], err = shardRanges(ctx, src, p, totals[i], shard); err != nil {
				return nil, nil, nil, err
			}
		default:
			n := readers
			if g >= 0 {
				n = 1 // read one after another anyway
			}
			if rs, err = split(ctx, src, p, totals[i], n, minRangeRows); err != nil {
				return nil, nil, nil, err
			}
		}
		var start []string
		for _, r := range rs {
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
				if done := replayed(i, start, r); done != nil {
					grouped[g].parts = append(grouped[g].parts, *done)
				}
				if !r.Done {
					grouped[g].parts = append(grouped[g].parts, live)
				}
			case !r.Done:
				tasks = append(tasks, task{parts: []part{live}})
			}
			start = r.Until
		}
	}
	for g, at := range taskOf {
		if at == 0 {
			continue
		}
		t := grouped[g]
		// Claims after the last part read change nothing.
		for len(t.parts) > 0 && t.parts[len(t.parts)-1].replay {
			t.parts = t.parts[:len(t.parts)-1]
		}
		tasks[at-1] = t
	}
	return parts, byEntity, slices.DeleteFunc(tasks, func(t task) bool { return len(t.parts) == 0 }), nil
}

// replayed returns the part of range r (of entity i, starting after start)
// that an earlier run wrote, to be replayed: the whole range when it is
// done, up to its After when it has one past start, else nil.
func replayed(i int, start []string, r Range) *part {
	switch {
	case r.Done:
		return &part{entity: i, id: -1, r: Range{After: start, Until: r.Until}, replay: true}
	case len(r.After) > 0 && !slices.Equal(r.After, start):
		return &part{entity: i, id: -1, r: Range{After: start, Until: r.After}, replay: true}
	}
	return nil
}

// part is one range of one entity, read by one reader.
type part struct {
	entity int // index in plans
	id     int // index in the run's parts; -1 for a replay
	r      Range
	// replay: the range was written by an earlier run; its rows are read
	// only to claim their keys in the group's key set, as that run did.
	replay bool
}

// leftIn returns the number of rows of p in the ranges rs not done: what a
// resumed run reads of it.
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

// shardRanges returns the range of p's rows (rows of them) that shard sh
// reads (see Shard), none or one, and the number of rows it holds. Shard
// i of N reads the rows numbered after ⌊rows·(i−1)/N⌋ up to and including
// ⌊rows·i/N⌋ (in primary-key order, from 1): it needs the positions of
// those two rows only, read in one statement.
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
	// Row first ends the shard before; row last ends this one (the last
	// shard reads to the end).
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

// cut is the number of rows, of rows in all, before range k of n equal
// ranges (0 ≤ k ≤ n): ⌊rows·k/n⌋.
func cut(rows int64, k, n int) int64 { return rows * int64(k) / int64(n) }

// split returns the ranges of p's read: one per reader when p reads in
// primary-key order and holds at least minRows rows a range, else one.
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
