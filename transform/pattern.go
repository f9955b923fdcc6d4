package transform

import (
	"fmt"
	"strings"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// PatternPlan renders the key values of one access pattern from parameter
// values, with the same text and zero padding as the items' keys.
type PatternPlan struct {
	Pattern *mapping.AccessPattern
	// Params are the placeholders, in order: the parameters to supply.
	Params []string
	keys   []keyPlan // partition, then sort and its upper bound if any
	cols   []extract.Column
}

// CompilePattern prepares ap for rendering. The type of each parameter is
// the type of the column of that name in the first entity source that has
// one (from plans); a parameter no source has is an error.
func CompilePattern(m *mapping.Mapping, ap *mapping.AccessPattern, plans []*Plan) (*PatternPlan, error) {
	kc := ap.Condition
	pp := &PatternPlan{Pattern: ap, Params: kc.Columns()}
	// A parameter's type is that of the column in an entity whose template
	// for the same attribute places it after the same text ("B#${id}"
	// matches entity B's "B#${id}", not entity A's "A#${id}"), so that the
	// padding matches the items; else of the first entity source that has
	// the column.
	patternTpl := map[string]string{kc.PartitionAttr: kc.Partition.Source}
	if kc.SortAttr != "" {
		patternTpl[kc.SortAttr] = kc.Sort.Source
	}
	usedIn := func(p *Plan, name string) bool {
		for _, k := range p.keys {
			pt, ok := patternTpl[k.attr]
			if !ok {
				continue
			}
			before, _, found := strings.Cut(pt, "${"+name)
			if found && strings.HasPrefix(k.template, before+"${"+name) {
				return true
			}
		}
		return false
	}
	for _, name := range pp.Params {
		var col *extract.Column
		for _, pass := range []bool{true, false} {
			for _, p := range plans {
				if i := p.colIndex(name); i >= 0 && (!pass || usedIn(p, name)) {
					col = &p.srcCols[i]
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
	}
	build := func(tpl mapping.Template, attr string, isSort bool) keyPlan {
		k := keyPlan{attr: attr, template: tpl.Source, maxBytes: MaxPartitionKeyBytes, same: -1}
		if isSort {
			k.maxBytes = MaxSortKeyBytes
		}
		for _, part := range tpl.Parts {
			if part.Column == "" {
				k.parts = append(k.parts, keyPart{literal: part.Literal, col: -1})
				continue
			}
			ci := indexOf(pp.Params, part.Column)
			c := pp.cols[ci]
			s := scalarFor(c.Type, c.AsText)
			width := part.Width
			if width == mapping.WidthAuto {
				width = 0
				if isSort {
					width = max(s.intWidth, c.IntDigits)
				}
			}
			k.parts = append(k.parts, keyPart{col: ci, width: width, text: s.text})
		}
		return k
	}
	// Padding follows how the attribute is written, not its role in this
	// index: an inverted index's partition key is the table's sort key.
	pp.keys = append(pp.keys, build(kc.Partition, kc.PartitionAttr, SortedAttribute(m, kc.PartitionAttr)))
	if kc.SortAttr != "" {
		pp.keys = append(pp.keys, build(kc.Sort, kc.SortAttr, SortedAttribute(m, kc.SortAttr)))
		if kc.SortOp == "between" {
			pp.keys = append(pp.keys, build(kc.SortHigh, kc.SortAttr, SortedAttribute(m, kc.SortAttr)))
		}
	}
	for _, k := range pp.keys {
		for _, part := range k.parts {
			if part.col >= 0 && part.text == nil {
				c := pp.cols[part.col]
				return nil, m.Errorf(mapping.Path(mapping.KeyAccessPatterns, ap.Name, mapping.KeyKeyCondition),
					"parameter %q of type %s cannot be part of a key", c.Name, typeName(c))
			}
		}
	}
	return pp, nil
}

// SortedAttribute reports whether some index sorts by attr: the table's
// sort key, or a GSI's sort key (an inverted index sorts by the table's
// partition key). Integer placeholders are zero-padded in such attributes,
// so that string order equals numeric order wherever order matters.
func SortedAttribute(m *mapping.Mapping, attr string) bool {
	if attr == m.Table.SortKey {
		return true
	}
	for _, g := range m.Table.GSIs {
		if g.SortKey == attr {
			return true
		}
	}
	return false
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// Render returns the partition key value and, when the condition has one,
// the sort key value (and the upper bound of BETWEEN). values holds one Go
// value per Params entry, as pgx decodes the column. A begins_with prefix
// may render empty; other keys may not.
func (pp *PatternPlan) Render(values []any) (pk string, sk []string, err error) {
	if len(values) != len(pp.Params) {
		return "", nil, fmt.Errorf("pattern %s: got %d values for parameters %v", pp.Pattern.Name, len(values), pp.Params)
	}
	p := &Plan{cols: pp.cols}
	for i, k := range pp.keys {
		s, _, reason := p.renderKey(k, values)
		if reason != "" && i > 0 && pp.Pattern.Condition.SortOp == "begins_with" && len(k.parts) == 0 {
			reason = "" // begins_with(SK, ''): every sort key
		}
		if reason != "" {
			return "", nil, fmt.Errorf("pattern %s: %s", pp.Pattern.Name, reason)
		}
		if i == 0 {
			pk = s
		} else {
			sk = append(sk, s)
		}
	}
	return pk, sk, nil
}
