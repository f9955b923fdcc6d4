package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Prepare checks every entity of m against the live source (tables and
// columns exist, key columns have usable types) and compiles its Plan, one
// per entity in mapping order. It then checks what a run would otherwise
// meet only while reading or verifying: each query source on its own
// (extract.Source.CheckQuerySource: one complete statement, no parameters,
// no row locks), the statements that read each entity, planned by
// PostgreSQL without running them (extract.Source.CheckRead), and every
// access pattern against the plans (parameters, their widths, one source
// with all of them). It reads no rows; the plans are made in read-only
// transactions of src (its snapshot, under a savepoint, once begun). All
// problems are returned together as mapping.Errors, in file order; other
// errors (the connection) stop it.
func Prepare(ctx context.Context, src *extract.Source, m *mapping.Mapping) ([]*transform.Plan, error) {
	var errs mapping.Errors
	all := make([]*transform.Sources, len(m.Entities))
	described := make([]bool, len(m.Entities))
	for i, e := range m.Entities {
		srcs, err := describe(ctx, src, m, e)
		if err != nil {
			var me *mapping.Error
			if errors.As(err, &me) {
				errs = append(errs, me)
				continue
			}
			return nil, err
		}
		all[i], described[i] = &srcs, true
	}
	qerrs, refused, err := checkQuerySources(ctx, src, m, described)
	if err != nil {
		return nil, err
	}
	errs = append(errs, qerrs...)
	plans, err := transform.CompileAll(m, all)
	if err != nil {
		var mes mapping.Errors
		if !errors.As(err, &mes) {
			return nil, err
		}
		errs = append(errs, mes...)
	}
	for i, p := range plans {
		if p == nil || len(p.Query().Joins) == 0 || refused[i] {
			continue
		}
		if err := src.CheckQuery(ctx, m, m.Entities[i].Name, p.Query()); err != nil {
			var me *mapping.Error
			if !errors.As(err, &me) {
				return nil, err
			}
			errs = append(errs, me)
			refused[i] = true
		}
	}
	if plans != nil {
		rerrs, err := checkReads(ctx, src, m, plans, refused)
		if err != nil {
			return nil, err
		}
		perrs, err := checkPatterns(m, plans)
		if err != nil {
			return nil, err
		}
		errs = append(append(errs, rerrs...), perrs...)
	}
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, errs
	}
	return plans, nil
}

// describe reads the columns of an entity's source and of the sources its
// embed, duplicate and aggregate rules join.
func describe(ctx context.Context, src *extract.Source, m *mapping.Mapping, e *mapping.Entity) (transform.Sources, error) {
	var srcs transform.Sources
	var err error
	ep := mapping.Path(mapping.KeyEntities, e.Name)
	if srcs.Columns, err = src.Describe(ctx, m, e); err != nil {
		return srcs, err
	}
	if srcs.Unique, err = src.UniqueKeys(ctx, e.Source); err != nil {
		return srcs, fmt.Errorf("describe %s: %w", mapping.Path(ep, mapping.KeySource), err)
	}
	srcs.Embed = map[string][]extract.Column{}
	for name, em := range e.Embed {
		if srcs.Embed[name], err = src.DescribeSource(ctx, m, mapping.Path(ep, mapping.KeyEmbed, name, mapping.KeySource), em.Source); err != nil {
			return srcs, err
		}
	}
	for i, d := range e.Duplicate {
		path := fmt.Sprintf("%s.%s[%d].%s", ep, mapping.KeyDuplicate, i, mapping.KeySource)
		cols, err := src.DescribeSource(ctx, m, path, d.Source)
		if err != nil {
			return srcs, err
		}
		keys, err := src.UniqueKeys(ctx, d.Source)
		if err != nil {
			return srcs, fmt.Errorf("describe %s: %w", path, err)
		}
		srcs.Duplicate = append(srcs.Duplicate, cols)
		srcs.DuplicateKeys = append(srcs.DuplicateKeys, keys)
	}
	srcs.Aggregate = map[string][]extract.Column{}
	for name, a := range e.Aggregates {
		if srcs.Aggregate[name], err = src.DescribeSource(ctx, m, mapping.Path(ep, mapping.KeyAggregates, name, mapping.KeySource), a.Source); err != nil {
			return srcs, err
		}
	}
	return srcs, nil
}

// The checks Prepare makes after describing the sources, so that what a
// run would meet only while reading or verifying is refused before
// anything is created or written.

// querySource is one query source of an entity: its own, or that of an
// embed, duplicate or aggregate rule, with its path in the mapping.
type querySource struct {
	path string
	src  mapping.Source
}

// querySources lists e's query sources in mapping order.
func querySources(e *mapping.Entity) []querySource {
	ep := mapping.Path(mapping.KeyEntities, e.Name)
	var out []querySource
	add := func(path string, src mapping.Source) {
		if src.IsQuery() {
			out = append(out, querySource{path, src})
		}
	}
	add(mapping.Path(ep, mapping.KeySource), e.Source)
	for _, name := range slices.Sorted(maps.Keys(e.Embed)) {
		add(mapping.Path(ep, mapping.KeyEmbed, name, mapping.KeySource), e.Embed[name].Source)
	}
	for i, d := range e.Duplicate {
		add(fmt.Sprintf("%s.%s[%d].%s", ep, mapping.KeyDuplicate, i, mapping.KeySource), d.Source)
	}
	for _, name := range slices.Sorted(maps.Keys(e.Aggregates)) {
		add(mapping.Path(ep, mapping.KeyAggregates, name, mapping.KeySource), e.Aggregates[name].Source)
	}
	return out
}

// checkQuerySources checks every query source of the entities described
// (described[i] true) on its own (extract.Source.CheckQuerySource). It
// returns the mapping errors and, per entity, whether one of its query
// sources failed; any other error stops it.
func checkQuerySources(ctx context.Context, src *extract.Source, m *mapping.Mapping, described []bool) (mapping.Errors, []bool, error) {
	var errs mapping.Errors
	failed := make([]bool, len(m.Entities))
	for i, e := range m.Entities {
		if !described[i] {
			continue
		}
		before := len(errs)
		for _, qs := range querySources(e) {
			if err := collect(&errs, src.CheckQuerySource(ctx, m, qs.path, qs.src)); err != nil {
				return nil, nil, err
			}
		}
		failed[i] = len(errs) > before
	}
	return errs, failed, nil
}

// checkReads has PostgreSQL plan the statements that read each entity
// (extract.Source.CheckRead), but for those without a plan and those skip
// marks (whose sources were already refused).
func checkReads(ctx context.Context, src *extract.Source, m *mapping.Mapping, plans []*transform.Plan, skip []bool) (mapping.Errors, error) {
	var errs mapping.Errors
	for i, p := range plans {
		if p == nil || skip[i] {
			continue
		}
		if err := collect(&errs, src.CheckRead(ctx, m, p.Entity(), p.Query())); err != nil {
			return nil, err
		}
	}
	return errs, nil
}

// checkPatterns compiles every access pattern against the plans, as verify
// does before it samples them: each parameter must be a column of some
// entity's source, rendered with that entity's key text and width
// (transform.CompilePattern), and one entity's source must have all of a
// pattern's parameters, to sample them from. The index and the key
// attribute names are checked when the mapping is loaded. Patterns are
// checked only when every entity has a plan: a parameter may be a column
// of an entity that has none.
func checkPatterns(m *mapping.Mapping, plans []*transform.Plan) (mapping.Errors, error) {
	var errs mapping.Errors
	if slices.Contains(plans, nil) {
		return nil, nil
	}
	for _, ap := range m.AccessPatterns {
		pp, err := transform.CompilePattern(m, ap, plans)
		if err != nil {
			if err := collect(&errs, err); err != nil {
				return nil, err
			}
			continue
		}
		if len(pp.Params) == 0 || slices.ContainsFunc(plans, func(p *transform.Plan) bool { return hasColumns(p, pp.Params) }) {
			continue
		}
		errs = append(errs, m.Errorf(mapping.Path(mapping.KeyAccessPatterns, ap.Name, mapping.KeyKeyCondition),
			"no entity's source has all of the parameters %v together: cannot sample them", pp.Params))
	}
	return errs, nil
}

// hasColumns reports whether p's source has every named column.
func hasColumns(p *transform.Plan, names []string) bool {
	cols := p.SourceColumns()
	for _, n := range names {
		if !slices.ContainsFunc(cols, func(c extract.Column) bool { return c.Name == n }) {
			return false
		}
	}
	return true
}

// collect appends err's mapping errors to errs and returns nil, or returns
// err when it is another kind of error.
func collect(errs *mapping.Errors, err error) error {
	if err == nil {
		return nil
	}
	var mes mapping.Errors
	if errors.As(err, &mes) {
		*errs = append(*errs, mes...)
		return nil
	}
	var me *mapping.Error
	if errors.As(err, &me) {
		*errs = append(*errs, me)
		return nil
	}
	return err
}

// sortErrors puts errs in file order (line, then column), as
// mapping.Errors promises.
func sortErrors(errs mapping.Errors) {
	slices.SortStableFunc(errs, func(a, b *mapping.Error) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Column - b.Column
	})
}
