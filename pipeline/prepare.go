package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/internal/suggest"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Prepare checks every entity of m against the live source and compiles its
// Plans. It also checks, reading no rows (but two in checkFixedKeys), what a
// run would otherwise meet only while reading: query sources, read statements
// as PostgreSQL plans them, fixed keys and access patterns. Problems come back
// together as mapping.Errors in file order. A mapping with Problems
// (mapping.ParsePartial) is checked as far as it is defined and gets no plans.
func Prepare(ctx context.Context, src *extract.Source, m *mapping.Mapping) ([]*transform.Plan, error) {
	cm := m.Checkable()
	all, errs, err := describeAll(ctx, src, m, cm)
	if err != nil {
		return nil, err
	}
	described := make([]bool, len(all))
	for i, s := range all {
		described[i] = s != nil
	}
	qerrs, refused, err := checkQuerySources(ctx, src, cm, described)
	if err != nil {
		return nil, err
	}
	errs = append(errs, qerrs...)
	plans, err := transform.CompileAll(cm, all)
	if err := collect(&errs, err); err != nil {
		return nil, err
	}
	for i, e := range cm.Entities {
		// Compiled from what the file's problems left of it: not its plan.
		if plans[i] != nil && m.Refused(mapping.Path(mapping.KeyEntities, e.Name)) {
			plans[i] = nil
		}
	}
	cerrs, err := checkPlans(ctx, src, cm, plans, refused)
	if err != nil {
		return nil, err
	}
	errs = append(errs, cerrs...)
	errs = slices.DeleteFunc(errs, func(e *mapping.Error) bool { return e.Path != "" && m.Refused(e.Path) })
	if len(m.Problems()) > 0 {
		errs = append(errs, problemsWithFacts(m, all)...)
	}
	if len(errs) > 0 {
		errs.Sort()
		return nil, errs
	}
	return plans, nil
}

// describeAll describes the checkable entities (nil Sources if incomplete).
func describeAll(ctx context.Context, src *extract.Source, m, cm *mapping.Mapping) ([]*transform.Sources, mapping.Errors, error) {
	var errs mapping.Errors
	all := make([]*transform.Sources, len(cm.Entities))
	for i, e := range cm.Entities {
		ep := mapping.Path(mapping.KeyEntities, e.Name)
		if m.RefusedAt(ep) || m.Refused(mapping.Path(ep, mapping.KeySource)) {
			continue
		}
		srcs, derrs, err := describe(ctx, src, cm, e)
		if err != nil {
			return nil, nil, err
		}
		if len(derrs) > 0 {
			errs = append(errs, derrs...)
			continue
		}
		all[i] = &srcs
	}
	return all, errs, nil
}

// checkPlans checks joins, reads, fixed keys and, given every plan, patterns.
func checkPlans(ctx context.Context, src *extract.Source, m *mapping.Mapping, plans []*transform.Plan, refused []bool) (mapping.Errors, error) {
	var errs mapping.Errors
	for i, p := range plans {
		if p == nil || len(p.Query().Joins) == 0 || refused[i] {
			continue
		}
		before := len(errs)
		if err := collect(&errs, src.CheckQuery(ctx, m, m.Entities[i].Name, p.Query())); err != nil {
			return nil, err
		}
		refused[i] = len(errs) > before
	}
	rerrs, err := checkReads(ctx, src, m, plans, refused)
	if err != nil {
		return nil, err
	}
	ferrs, err := checkFixedKeys(ctx, src, m, plans, refused)
	if err != nil {
		return nil, err
	}
	perrs, err := checkPatterns(m, plans)
	if err != nil {
		return nil, err
	}
	return slices.Concat(errs, rerrs, ferrs, perrs), nil
}

// describe reads the columns and unique keys of an entity's sources; each that
// cannot be described is a mapping error, the rest still described.
func describe(ctx context.Context, src *extract.Source, m *mapping.Mapping, e *mapping.Entity) (transform.Sources, mapping.Errors, error) {
	var srcs transform.Sources
	var errs mapping.Errors
	var err error
	ep := mapping.Path(mapping.KeyEntities, e.Name)
	if srcs.Columns, err = src.Describe(ctx, m, e); err != nil {
		if err := collect(&errs, err); err != nil {
			return srcs, nil, err
		}
		return srcs, errs, nil // nothing else is known of the entity
	}
	if srcs.Unique, err = src.UniqueKeys(ctx, e.Source); err != nil {
		return srcs, nil, fmt.Errorf("describe %s: %w", mapping.Path(ep, mapping.KeySource), err)
	}
	for _, j := range e.Joins() {
		var cols []extract.Column
		var keys []extract.UniqueKey
		if j.Defined() {
			if cols, err = src.DescribeSource(ctx, m, j.SourcePath(), j.Source); err != nil {
				if err := collect(&errs, err); err != nil {
					return srcs, nil, err
				}
			} else if j.Parent {
				if keys, err = src.UniqueKeys(ctx, j.Source); err != nil {
					return srcs, nil, fmt.Errorf("describe %s: %w", j.SourcePath(), err)
				}
			}
		}
		srcs.SetJoin(j, cols, keys)
	}
	return srcs, errs, nil
}

// querySource is an entity's or a join rule's query source, with its path.
type querySource struct {
	path string
	src  mapping.Source
}

func querySources(e *mapping.Entity) []querySource {
	ep := mapping.Path(mapping.KeyEntities, e.Name)
	var out []querySource
	add := func(path string, src mapping.Source) {
		if src.IsQuery() {
			out = append(out, querySource{path, src})
		}
	}
	add(mapping.Path(ep, mapping.KeySource), e.Source)
	for _, j := range e.Joins() {
		add(j.SourcePath(), j.Source)
	}
	return out
}

// checkQuerySources checks query sources alone; it says whose failed.
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

// checkPatterns compiles every access pattern as verify does: one entity's
// source must have all its parameters, to sample them from.
func checkPatterns(m *mapping.Mapping, plans []*transform.Plan) (mapping.Errors, error) {
	var errs mapping.Errors
	if slices.Contains(plans, nil) {
		return nil, nil
	}
	for _, ap := range m.AccessPatterns {
		if m.Refused(mapping.Path(mapping.KeyAccessPatterns, ap.Name)) {
			continue // the file's problems leave it undefined
		}
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

func hasColumns(p *transform.Plan, names []string) bool {
	cols := p.SourceColumns()
	for _, n := range names {
		if !slices.ContainsFunc(cols, func(c extract.Column) bool { return c.Name == n }) {
			return false
		}
	}
	return true
}

// collect appends err's mapping errors to errs, or returns another error.
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

// checkFixedKeys refuses a key without placeholder on a source of more than one
// row: every row would overwrite one item. Only the rows tell, so it reads two.
func checkFixedKeys(ctx context.Context, src *extract.Source, m *mapping.Mapping, plans []*transform.Plan, skip []bool) (mapping.Errors, error) {
	var errs mapping.Errors
	for i, p := range plans {
		if p == nil || skip[i] {
			continue
		}
		e := m.Entities[i]
		var fixed [][2]mapping.KeySlot // the item's, the mirror's
		for _, mirror := range []bool{false, true} {
			pk, ok := p.KeySlots().Find(m.Table.PartitionKey, mirror)
			sk, _ := p.KeySlots().Find(m.Table.SortKey, mirror)
			if ok && fixedKey(pk.Template, sk.Template) {
				fixed = append(fixed, [2]mapping.KeySlot{pk, sk})
			}
		}
		if len(fixed) == 0 {
			continue
		}
		n, err := src.RowsUpTo(ctx, e.Source, 2)
		if err != nil {
			return nil, err
		}
		if n < 2 {
			continue
		}
		for _, k := range fixed {
			keys := fmt.Sprintf("the partition key %q and the sort key %q have no placeholder", k[0].Template.Source, k[1].Template.Source)
			if m.Table.SortKey == "" {
				keys = fmt.Sprintf("the partition key %q has no placeholder (the table has no sort key)", k[0].Template.Source)
			}
			errs = append(errs, m.Errorf(k[0].Path, "%s, and %s has more than one row: every row would render this one key, each item overwriting the one before; make the key tell the rows apart%s",
				keys, e.Source, keyExample(p)))
		}
	}
	return errs, nil
}

func fixedKey(pk, sk mapping.Template) bool {
	return len(pk.Columns()) == 0 && len(sk.Columns()) == 0
}

// keyExample is ", such as ${id}" from p's primary key columns, or "".
func keyExample(p *transform.Plan) string {
	var names []string
	for _, c := range p.SourceColumns() {
		if c.PrimaryKey {
			names = append(names, "${"+c.Name+"}")
		}
	}
	if len(names) == 0 {
		return ""
	}
	return ", such as " + strings.Join(names, "#")
}

// problemsWithFacts adds to each "{name}" problem whether name is a column.
func problemsWithFacts(m *mapping.Mapping, all []*transform.Sources) mapping.Errors {
	var out mapping.Errors
	for _, pr := range m.Problems() {
		var be *mapping.BraceError
		if !errors.As(pr, &be) {
			out = append(out, pr)
			continue
		}
		fact := braceFact(m, all, pr.Path, be.Name)
		if fact == "" {
			out = append(out, pr)
			continue
		}
		c := *pr
		c.Msg += "; " + fact
		out = append(out, &c)
	}
	return out
}

// braceFact is "" when the source at path is not known.
func braceFact(m *mapping.Mapping, all []*transform.Sources, path, name string) string {
	for i, e := range m.Entities {
		if all[i] == nil || !strings.HasPrefix(path, mapping.Path(mapping.KeyEntities, e.Name)+".") {
			continue
		}
		cols := columnNames(all[i].Columns)
		if slices.Contains(cols, name) {
			return fmt.Sprintf("%s is a column of %s", name, e.Source)
		}
		return fmt.Sprintf("%s has no column %q either%s", e.Source, name, suggest.Hint(name, cols))
	}
	if !strings.HasPrefix(path, mapping.KeyAccessPatterns+".") {
		return ""
	}
	var in, cols []string
	for i, e := range m.Entities {
		if all[i] == nil {
			continue
		}
		names := columnNames(all[i].Columns)
		if slices.Contains(names, name) {
			in = append(in, e.Name)
		}
		cols = append(cols, names...)
	}
	switch {
	case len(in) > 0:
		return fmt.Sprintf("%s is a column of the source of %s", name, strings.Join(in, ", "))
	case slices.Contains(all, nil):
		return "" // perhaps of the source not described
	}
	return fmt.Sprintf("no entity's source has a column %q either%s", name, suggest.Hint(name, cols))
}

func columnNames(cols []extract.Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}
