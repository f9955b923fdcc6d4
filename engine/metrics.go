package engine

import (
	"log/slog"

	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/metrics"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
)

// What a run tells Config.Metrics, from the counters it keeps anyway.

// loadProgress is a load's display, its counts fed to Config.Metrics.
func (j *job) loadProgress() (pipeline.Progress, func()) {
	p, done := j.progress()
	if j.cfg.Metrics == nil {
		return p, done
	}
	return &meteredProgress{p: p, m: j.cfg.Metrics}, done
}

// meteredProgress passes a Progress's calls on to p (maybe nil), counting them
// in m.
type meteredProgress struct {
	p pipeline.Progress
	m *metrics.Run
}

var _ pipeline.WritersProgress = (*meteredProgress)(nil)

func (mp *meteredProgress) Plan(entities []pipeline.PlannedEntity) {
	if mp.p != nil {
		mp.p.Plan(entities)
	}
}

func (mp *meteredProgress) Start(entity string) {
	if mp.p != nil {
		mp.p.Start(entity)
	}
}

func (mp *meteredProgress) Advance(entity string, rows, items int) {
	mp.m.Advance(entity, rows, items)
	if mp.p != nil {
		mp.p.Advance(entity, rows, items)
	}
}

// Then passes on the phase that follows, to a display that shows it.
func (mp *meteredProgress) Then(phase string) {
	if th, ok := mp.p.(interface{ Then(string) }); ok {
		th.Then(phase)
	}
}

func (mp *meteredProgress) Writers(n int) {
	mp.m.Writers(n)
	if wp, ok := mp.p.(pipeline.WritersProgress); ok {
		wp.Writers(n)
	}
}

// startMetrics names the run's table in Config.Metrics and the log's records.
func (j *job) startMetrics(s *session) {
	if sl, ok := j.log.(StructuredLog); ok {
		sl.With(slog.String("table", s.m.Table.Name))
	}
	if j.cfg.Metrics == nil {
		return
	}
	names := make([]string, len(s.plans))
	for i, p := range s.plans {
		names[i] = p.Entity().Name
	}
	j.cfg.Metrics.Start(s.m.Table.Name, names)
}

// meterWrites has Config.Metrics read the sink's counters at each scrape.
func (j *job) meterWrites(ds *load.DynamoDB, stats func() load.Stats) {
	if j.cfg.Metrics == nil || ds == nil {
		return
	}
	j.cfg.Metrics.SetWrites(func() metrics.Writes {
		st := stats()
		return metrics.Writes{Requests: st.Requests, Throttled: ds.Throttles(), Retries: st.Retries + st.UnprocessedRetries,
			WriteUnits: st.ConsumedWriteUnits}
	})
}

// readLimit is the run's one pacer and counter of its reads of the table
// (ReportOptions.MaxReadUnits), which Config.Metrics reads.
func (j *job) readLimit() *load.ReadLimit {
	j.readsOnce.Do(func() {
		j.reads = load.NewReadLimit(j.rep.MaxReadUnits)
		if j.cfg.Metrics != nil {
			j.cfg.Metrics.SetReadUnits(j.reads.Consumed)
		}
	})
	return j.reads
}

func (j *job) meterFollow(st follow.Status) {
	j.cfg.Metrics.Follow(metrics.FollowStatus{Applied: uint64(st.Applied), LagBytes: st.LagBytes, Lag: st.Lag,
		Changes: st.Changes, Puts: st.Puts, Deletes: st.Deletes})
	if a := st.Audit; a.Mode != follow.AuditOff && a.Slices > 0 {
		j.cfg.Metrics.AuditProgress(a.Cycle, a.Progress)
		j.cfg.Metrics.AuditDrift(a.Unrepaired())
	}
}
