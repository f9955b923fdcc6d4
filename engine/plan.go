package engine

import (
	"context"

	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/plan"
)

// PlanOptions are plan's.
type PlanOptions struct {
	// Format is plan.FormatText, FormatMarkdown, FormatJSON or FormatOneTable.
	Format string
	// WithSource checks against the source and reads every row, for estimates.
	WithSource bool
	// PreviousMapping, when set, has plan write what changes, then both
	// designs.
	PreviousMapping string
}

// Plan writes the design of cfg.Mapping to Config.Out in o.Format: entity
// chart, access patterns, CreateTable and CloudFormation, and with o.WithSource
// the estimates; FormatOneTable writes a OneTable schema, checked against the
// source.
func Plan(ctx context.Context, cfg Config, o PlanOptions) error {
	j := newJob(ctx, cfg, "plan")
	var m *mapping.Mapping
	var err error
	if !o.WithSource {
		if m, err = LoadMapping(ctx, cfg.Mapping); err != nil {
			return err
		}
		if o.Format == plan.FormatOneTable && o.PreviousMapping == "" {
			return planOneTable(j, m)
		}
	}
	if o.PreviousMapping != "" {
		return planVersions(j, m, o)
	}
	var s *session
	if o.WithSource {
		// Checked first, so the file's problems are reported with the source's.
		if s, err = open(j); err != nil {
			return err
		}
		defer s.Close(ctx)
		m = s.m
	}
	d := plan.Build(m)
	if sum := mappingSHA256(cfg.Mapping); sum != "" && m.Name != "" {
		d.Tag(owner(m, sum).Tags())
	}
	if s != nil {
		if err := s.src.Begin(ctx); err != nil {
			return err
		}
		prog, closeProg := j.progress()
		d.Stats, err = plan.Stats(ctx, s.src, m, s.plans, prog)
		closeProg()
		if err != nil {
			return err
		}
		if err := plan.OrderFromSource(ctx, s.src, d); err != nil {
			return err
		}
	}
	return plan.Render(j.out, d, o.Format)
}

// planOneTable writes m's OneTable schema; the source's column types decide the
// key templates' padding, and no row is read.
func planOneTable(j *job, m *mapping.Mapping) error {
	if _, err := plan.OneTableSchema(m, nil); err != nil {
		return err // not library onetable: say so before connecting
	}
	s, err := open(j)
	if err != nil {
		return err
	}
	defer s.Close(j.ctx)
	return plan.WriteOneTable(j.out, s.m, s.plans)
}

func planVersions(j *job, m *mapping.Mapping, o PlanOptions) error {
	if o.WithSource || (o.Format != plan.FormatText && o.Format != plan.FormatMarkdown) {
		return optionError(j.opt(OptPreviousMapping)+" writes the two designs as text or markdown, without "+j.opt(OptWithSource), OptPreviousMapping)
	}
	prev, err := LoadMapping(j.ctx, o.PreviousMapping)
	if err != nil {
		return err
	}
	if err := mapping.CheckVersions(prev, m, o.PreviousMapping, j.cfg.Mapping); err != nil {
		return refused(err)
	}
	return plan.RenderVersions(j.out, plan.Build(prev), plan.Build(m), mapping.CompareMappings(prev, m), o.Format)
}
