package engine

import (
	"fmt"
)

// beginSnapshot begins s's snapshot: Snapshot's, or a new one.
func beginSnapshot(j *job, s *session) error {
	if name := j.ld.Snapshot; name != "" {
		return s.src.BeginAt(j.ctx, name)
	}
	if j.ld.Shard.On() {
		fmt.Fprintf(j.log, "this shard reads a snapshot of its own (no %s): rows inserted or deleted while the shards start can be missed or read twice; see pg2dynamo snapshot hold\n", j.opt(OptSnapshot))
	}
	return s.src.Begin(j.ctx)
}
