package transform

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// PatternPlan renders an access pattern's key values from parameters, with the
// items' key text and padding.
type PatternPlan struct {
	Pattern *mapping.AccessPattern
	// Params are the parameters to supply, in order: the key condition's, then
	// the filter's own.
	Params []string
	keys   []keyPlan // partition, then sort and its upper bound if any
	cols   []extract.Column
	// Home is the plans index of the pattern's entity: the first with every
	// parameter as a column that renders the partition attribute with the
	// pattern's text before each, preferring one whose sort key starts with the
	// pattern's literal sort prefix; -1 for none. Parameters sampled from
	// Home's rows reach items.
	Home int
	// plan holds the parameters' columns as a row, for Builder.renderKey.
	plan *Plan
	// terms are a multi-attribute GSI pattern's term values (RenderTerms); keys
	// is then empty.
	terms []termPlan
}

// KeyTypes returns the types of the partition and sort key the condition names
// (sort "" without a sort condition).
func (pp *PatternPlan) KeyTypes() (partition, sort string) {
	if len(pp.keys) > 0 {
		partition = pp.keys[0].typ
	}
	if len(pp.keys) > 1 {
		sort = pp.keys[1].typ
	}
	return partition, sort
}

// CompilePattern prepares ap for the one key renderer. Each parameter is the
// column of that name in the entity placing it after the same text for the same
// attribute, else the first entity having it, taking its type and key text
// (width included). A parameter no source has, or an explicit width other than
// the items', is a mapping error.
func CompilePattern(m *mapping.Mapping, ap *mapping.AccessPattern, plans []*Plan) (*PatternPlan, error) {
	if g := ap.MultiAttributeIndex(&m.Table); g != nil {
		return compileMultiPattern(m, ap, g, plans)
	}
	kc := ap.Condition
	pp := &PatternPlan{Pattern: ap, Params: kc.Columns()}
	if f := ap.FilterExpr; f != nil {
		for _, c := range f.Columns() {
			if !slices.Contains(pp.Params, c) {
				pp.Params = append(pp.Params, c)
			}
		}
	}
	// "B#${id}" matches entity B's "B#${id}", not entity A's "A#${id}".
	patternTpl := map[string]mapping.Template{kc.PartitionAttr: kc.Partition}
	if kc.SortAttr != "" {
		patternTpl[kc.SortAttr] = kc.Sort
	}
	usedIn := func(p *Plan, name string) bool {
		for _, k := range p.keys {
			if pt, ok := patternTpl[k.attr]; ok && pt.PlacesAlike(k.template, name) {
				return true
			}
		}
		return false
	}
	var owners []*Plan // the plan whose column each parameter is
	for _, name := range pp.Params {
		var col *extract.Column
		var owner *Plan
		for _, pass := range []bool{true, false} {
			for _, p := range plans {
				if p == nil {
					continue
				}
				if i := columnIndex(p.srcCols, name); i >= 0 && (!pass || usedIn(p, name)) {
					col, owner = &p.srcCols[i], p
					break
				}
			}
			if col != nil {
				break
			}
		}
		if col == nil {
			return nil, m.Errorf(mapping.Path(mapping.KeyAccessPatterns, ap.Name, mapping.KeyKeyCondition),
				"parameter %q is not a column of any entity's source", name)
		}
		pp.cols = append(pp.cols, *col)
		owners = append(owners, owner)
	}
	pp.Home = home(pp, plans, usedIn)
	// The one key renderer renders the parameters over a plan whose row is the
	// parameters, each with its entity's formats.
	pp.plan = &Plan{entity: &mapping.Entity{Name: "access pattern " + ap.Name}, cols: pp.cols}
	for _, c := range pp.cols {
		s := scalarFor(c.Type, c.AsText)
		pp.plan.kinds = append(pp.plan.kinds, s.kind)
		pp.plan.texts = append(pp.plan.texts, s.text)
	}
	var errs mapping.Errors
	add := func(path, format string, args ...any) { errs = append(errs, m.Errorf(path, format, args...)) }
	if f := ap.FilterExpr; f != nil {
		fp := mapping.Path(mapping.KeyAccessPatterns, ap.Name, mapping.KeyFilter)
		for _, c := range f.Conds {
			if c.Func != "begins_with" {
				continue
			}
			if col := pp.cols[indexOf(pp.Params, c.Params[0])]; !writesString(col) {
				// The expression builder's BeginsWith takes a string prefix.
				add(fp, "begins_with(%s, ${%s}): the parameter's column %s (%s) is not written as a string; begins_with in a filter takes a string column",
					c.Attr, c.Params[0], col.Name, typeName(col))
			}
		}
	}
	lookup := func(name string) (keyValue, keyFormats, bool) {
		i := indexOf(pp.Params, name)
		return keyValue{col: pp.cols[i], val: i, id: -1}, owners[i].formats, true
	}
	for _, kt := range patternTemplates(m, ap) {
		pp.keys = append(pp.keys, buildKey(kt, lookup, add))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return pp, nil
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// Render returns the partition key value and, if any, the sort key value and
// BETWEEN's upper bound, as the items render them; values holds one pgx-decoded
// Go value per Params. Only a begins_with prefix may render empty.
func (pp *PatternPlan) Render(values []any) (pk string, sk []string, err error) {
	if len(values) != len(pp.Params) {
		return "", nil, fmt.Errorf("pattern %s: got %d values for parameters %v", pp.Pattern.Name, len(values), pp.Params)
	}
	b := builders.Get().(*Builder)
	defer builders.Put(b)
	b.beginRow(pp.plan)
	for i := range pp.keys {
		k := &pp.keys[i]
		t, _, reason := b.renderKey(pp.plan, k, values)
		if reason != "" && i > 0 && pp.Pattern.Condition.SortOp == "begins_with" && len(k.parts) == 0 {
			reason = "" // begins_with(SK, ''): every sort key
		}
		if reason != "" {
			return "", nil, fmt.Errorf("pattern %s: %s", pp.Pattern.Name, reason)
		}
		if i == 0 {
			pk = string(b.text[t.start:t.end])
		} else {
			sk = append(sk, string(b.text[t.start:t.end]))
		}
	}
	return pk, sk, nil
}

// home finds PatternPlan.Home: a plan with every parameter, each partition
// parameter placed as the pattern does; preferring one whose sort template
// starts with the pattern's literal sort prefix.
func home(pp *PatternPlan, plans []*Plan, usedIn func(*Plan, string) bool) int {
	kc := pp.Pattern.Condition
	keyParams := kc.Columns()
	prefix := kc.Sort.Prefix()
	first := -1
	for i, p := range plans {
		if p == nil {
			continue
		}
		ok := true
		for _, name := range pp.Params {
			ok = ok && columnIndex(p.srcCols, name) >= 0 && (!slices.Contains(keyParams, name) || usedIn(p, name))
		}
		if !ok {
			continue
		}
		for _, k := range p.keys {
			if k.attr == kc.SortAttr && prefix != "" && strings.HasPrefix(k.template.Prefix(), prefix) {
				return i
			}
		}
		if first < 0 {
			first = i
		}
	}
	return first
}

// ParamAttr returns parameter name's value (as Render takes it) as its column's
// attribute (integers and numeric N, text S, bytea B, …); it fails for a
// non-parameter or a value of another type.
func (pp *PatternPlan) ParamAttr(values []any, name string) (types.AttributeValue, error) {
	i := indexOf(pp.Params, name)
	if i < 0 || len(values) != len(pp.Params) {
		return nil, fmt.Errorf("pattern %s: no parameter %q among %v", pp.Pattern.Name, name, pp.Params)
	}
	v, err := columnAttr(pp.cols[i])(values[i])
	if err != nil {
		return nil, fmt.Errorf("pattern %s: parameter %s: %w", pp.Pattern.Name, name, err)
	}
	return v, nil
}
