package transform

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// referenceItems is Plan.Items as it was before Builder (commit 440ae79),
// kept verbatim as the oracle Builder is tested against and as the
// baseline of BenchmarkItemsReference: one heap object per attribute
// value, encoding/json for json, a strings.Builder per key.
func (p *Plan) referenceItems(values []any, dst []Item) ([]Item, error) {
	if want := len(p.cols) + p.joinWidth(); len(values) != want {
		return dst, fmt.Errorf("transform %s: got %d values, want %d", p.entity.Name, len(values), want)
	}
	attrs := make(map[string]types.AttributeValue, len(p.attrs)+len(p.keys)+len(p.joins)+len(p.ids)+1)
	var skipGSI string
	for _, k := range p.keys {
		if k.gsi == mirrorKey || k.gsi != "" && k.gsi == skipGSI {
			continue
		}
		s, col, reason := p.renderKey(k, values)
		if reason != "" {
			if k.sparse && col >= 0 && values[col] == nil {
				// Sparse index: leave the item out of this GSI entirely.
				delete(attrs, p.gsiSibling(k))
				skipGSI = k.gsi
				continue
			}
			return dst, p.rowError(values, col, reason)
		}
		attrs[k.attr] = &types.AttributeValueMemberS{Value: s}
	}
	attrs[p.typeAttr] = p.typeVal
	for _, a := range p.attrs {
		v := values[a.col]
		if v == nil {
			continue
		}
		av, err := a.convert(v)
		if err != nil {
			return dst, p.rowError(values, a.col, err.Error())
		}
		if a.nested {
			if d := nestingDepth(av); d > MaxNestingDepth {
				return dst, p.rowError(values, a.col, fmt.Sprintf("nested %d levels deep: DynamoDB allows %d", d, MaxNestingDepth))
			}
		}
		attrs[a.name] = av
	}
	if len(p.joins) > 0 {
		if col, reason := p.applyJoins(values, attrs); reason != "" {
			re := p.rowError(values, -1, reason)
			re.Column = col
			return dst, re
		}
	}
	for _, ip := range p.ids {
		id, col, reason := ip.stableID(values)
		if reason != "" {
			return dst, p.rowError(values, col, fmt.Sprintf("ID %s: %s", ip.attr, reason))
		}
		attrs[ip.attr] = &types.AttributeValueMemberS{Value: id}
	}
	if len(p.joins) > 0 {
		for name, v := range attrs {
			if d := nestingDepth(v); d > MaxNestingDepth {
				return dst, p.rowError(values, -1, fmt.Sprintf("attribute %s is nested %d levels deep: DynamoDB allows %d", name, d, MaxNestingDepth))
			}
		}
	}
	if n := ItemSize(attrs); n > MaxItemBytes {
		return dst, p.rowError(values, -1, fmt.Sprintf("item is %s, over DynamoDB's 400 KB: %s", kb(n), sizeBreakdown(attrs)))
	}
	dst = append(dst, Item{Entity: p.index, Attrs: attrs, Row: values})
	if p.entity.Mirror == nil {
		return dst, nil
	}
	mirror := make(map[string]types.AttributeValue, len(attrs))
	gsiAttrs := map[string]bool{}
	for _, k := range p.keys {
		if k.gsi != "" && k.gsi != mirrorKey {
			gsiAttrs[k.attr] = true
		}
	}
	for name, v := range attrs {
		if !gsiAttrs[name] {
			mirror[name] = v
		}
	}
	for _, k := range p.keys {
		if k.gsi != mirrorKey {
			continue
		}
		s, col, reason := p.renderKey(k, values)
		if reason != "" {
			return dst[:len(dst)-1], p.rowError(values, col, "mirror: "+reason)
		}
		mirror[k.attr] = &types.AttributeValueMemberS{Value: s}
	}
	return append(dst, Item{Entity: p.index, Attrs: mirror, Row: values}), nil
}

// referenceJSON is jsonAttr: the conversion fromJSON must match.
var referenceJSON = jsonAttr
