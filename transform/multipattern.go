package transform

import (
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// termPlan is one multi-attribute key condition term's value (and between's
// upper bound): a parameter converted as the items write its column, or a
// literal of the attribute's type.
type termPlan struct {
	attr, op, typ string
	vals          [2]termValue
	bounds        int // 1, or 2 for between
}

// termValue is a parameter (param >= 0, its Params index) or a literal's
// attribute value.
type termValue struct {
	param   int
	literal types.AttributeValue
	convert func(any) (types.AttributeValue, error)
}

// compileMultiPattern compiles ap on multi-attribute GSI g (terms already
// checked by mapping) and its filter's parameters: each is the column of that
// name in the first entity having it, converted as written; Home is the first
// entity having them all.
func compileMultiPattern(m *mapping.Mapping, ap *mapping.AccessPattern, g *mapping.GSI, plans []*Plan) (*PatternPlan, error) {
	kc := ap.Condition
	pp := &PatternPlan{Pattern: ap, Params: kc.Columns(), Home: -1}
	if f := ap.FilterExpr; f != nil {
		for _, c := range f.Columns() {
			if !slices.Contains(pp.Params, c) {
				pp.Params = append(pp.Params, c) // a filter's own parameters, after the key condition's
			}
		}
	}
	path := mapping.Path(mapping.KeyAccessPatterns, ap.Name, mapping.KeyKeyCondition)
	for _, name := range pp.Params {
		var col *extract.Column
		for _, p := range plans {
			if p != nil && col == nil {
				if i := columnIndex(p.srcCols, name); i >= 0 {
					col = &p.srcCols[i]
				}
			}
		}
		if col == nil {
			return nil, m.Errorf(path, "parameter %q is not a column of any entity's source", name)
		}
		pp.cols = append(pp.cols, *col)
	}
	for i, p := range plans {
		if p != nil && pp.Home < 0 && hasAll(p, pp.Params) {
			pp.Home = i
		}
	}
	typs := ap.TermTypes(g)
	for i, t := range kc.Terms() {
		tp := termPlan{attr: t.Attr, op: t.Op, typ: typs[i], bounds: 1}
		if t.Op == "between" {
			tp.bounds = 2
		}
		for j, v := range []mapping.Template{t.Value, t.ValueHigh}[:tp.bounds] {
			tv, err := termValueOf(pp, v, tp.typ)
			if err != nil {
				return nil, m.Errorf(path, "%s: %v", t.Attr, err)
			}
			tp.vals[j] = tv
		}
		pp.terms = append(pp.terms, tp)
	}
	return pp, nil
}

// termValueOf is template v (a placeholder or literal) as a typ attribute
// value.
func termValueOf(pp *PatternPlan, v mapping.Template, typ string) (termValue, error) {
	if len(v.Parts) == 1 && v.Parts[0].Column != "" {
		i := indexOf(pp.Params, v.Parts[0].Column)
		c := pp.cols[i]
		if got := attrType(c); got != typ {
			return termValue{}, fmt.Errorf("column %q is written as %s, and the key attribute is of type %s", c.Name, got, typ)
		}
		return termValue{param: i, convert: columnAttr(c)}, nil
	}
	text := ""
	if len(v.Parts) == 1 {
		text = v.Parts[0].Literal
	}
	if typ == mapping.TypeNumber {
		n, err := CanonicalNumber(text)
		if err != nil {
			return termValue{}, err
		}
		text = n
	}
	return termValue{param: -1, literal: KeyAttributeValue(typ, text)}, nil
}

// attrType is a column's written type (kindType): N, S or B, "" for non-key
// types.
func attrType(c extract.Column) string {
	if c.Array {
		return ""
	}
	return kindType(scalarFor(c.Type, c.AsText).kind)
}

func hasAll(p *Plan, names []string) bool {
	for _, n := range names {
		if columnIndex(p.srcCols, n) < 0 {
			return false
		}
	}
	return true
}

// Term is one rendered multi-attribute key condition term: Attr Op Values[0]
// (Values[1] for between).
type Term struct {
	Attr, Op string
	// Type is the attribute's declared type: S, N or B.
	Type   string
	Values []types.AttributeValue
}

// MultiAttribute reports whether the pattern queries a multi-attribute GSI:
// RenderTerms gives its condition, Render nothing.
func (pp *PatternPlan) MultiAttribute() bool { return pp.terms != nil }

// RenderTerms returns a multi-attribute GSI pattern's terms for values (one
// pgx-decoded value per Params), as the items' attribute values. A NULL
// parameter is an error: such items are not indexed.
func (pp *PatternPlan) RenderTerms(values []any) ([]Term, error) {
	if len(values) != len(pp.Params) {
		return nil, fmt.Errorf("pattern %s: got %d values for parameters %v", pp.Pattern.Name, len(values), pp.Params)
	}
	out := make([]Term, 0, len(pp.terms))
	for _, tp := range pp.terms {
		t := Term{Attr: tp.attr, Op: tp.op, Type: tp.typ}
		for _, tv := range tp.vals[:tp.bounds] {
			if tv.param < 0 {
				t.Values = append(t.Values, tv.literal)
				continue
			}
			v := values[tv.param]
			if v == nil {
				return nil, fmt.Errorf("pattern %s: %s is NULL", pp.Pattern.Name, pp.Params[tv.param])
			}
			av, err := tv.convert(v)
			if err != nil {
				return nil, fmt.Errorf("pattern %s: %s: %w", pp.Pattern.Name, pp.Params[tv.param], err)
			}
			t.Values = append(t.Values, av)
		}
		out = append(out, t)
	}
	return out, nil
}
