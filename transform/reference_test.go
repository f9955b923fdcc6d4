package transform

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// referenceItems is Plan.Items as it was before Builder (commit 440ae79),
// kept as the oracle Builder is tested against and as the
// baseline of BenchmarkItemsReference: one heap object per attribute
// value, encoding/json for json, a strings.Builder per key.
func (p *Plan) referenceItems(values []any, dst []Item) ([]Item, error) {
	if want := p.width(); len(values) != want {
		return dst, fmt.Errorf("transform %s: got %d values, want %d", p.entity.Name, len(values), want)
	}
	attrs := make(map[string]types.AttributeValue, len(p.attrs)+len(p.keys)+len(p.joins)+len(p.ids)+1)
	var skipGSI string
	for _, k := range p.keys {
		if k.gsi == mirrorKey || k.gsi != "" && k.gsi == skipGSI {
			continue
		}
		s, col, reason := p.referenceKey(k, values)
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
	if _, err := p.putLibraryAttrs(values, attrs); err != nil {
		return dst, err
	}
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
		s, col, reason := p.referenceKey(k, values)
		if reason != "" {
			return dst[:len(dst)-1], p.rowError(values, col, "mirror: "+reason)
		}
		mirror[k.attr] = &types.AttributeValueMemberS{Value: s}
	}
	return append(dst, Item{Entity: p.index, Attrs: mirror, Row: values}), nil
}

// referenceJSON is jsonAttr: the conversion fromJSON must match.
var referenceJSON = jsonAttr

// referenceKey renders key k as the README states key text, computed
// another way than Builder.renderKey: numbers by big-integer arithmetic
// (a negative number is 10^(width+scale) − 1 − |x|·10^scale), times by
// time.Format with a fixed fraction.
func (p *Plan) referenceKey(k keyPlan, values []any) (string, int, string) {
	var b strings.Builder
	for _, part := range k.parts {
		switch {
		case part.id >= 0:
			id, col, reason := p.ids[part.id].stableID(values)
			if reason != "" {
				return "", col, fmt.Sprintf("key attribute %s: ID %s: %s", k.attr, p.ids[part.id].attr, reason)
			}
			b.WriteString(id)
			continue
		case part.col < 0:
			b.WriteString(part.literal)
			continue
		}
		v := values[part.col]
		if v == nil {
			return "", part.col, fmt.Sprintf("NULL in key attribute %s (template %q)", k.attr, k.template)
		}
		s, err := part.text(v)
		if err != nil {
			return "", part.col, fmt.Sprintf("key attribute %s: %v", k.attr, err)
		}
		switch part.enc.kind {
		case encNumber:
			text := s
			s = referenceKeyNumber(text, part.enc.width, part.enc.scale)
			if s == "" || part.enc.noNegative && strings.HasPrefix(text, "-") {
				_, reason := appendKeyText(nil, text, part.enc)
				return "", part.col, fmt.Sprintf("key attribute %s: %s", k.attr, reason)
			}
		case encTime:
			s = referenceKeyTime(v, s)
		}
		b.WriteString(s)
	}
	key := b.String()
	if k.lower {
		key = cases.Lower(language.Und).String(key)
	}
	if len(key) == 0 {
		return "", -1, fmt.Sprintf("key attribute %s renders empty (template %q): DynamoDB keys must not be empty", k.attr, k.template)
	}
	if len(key) > k.maxBytes {
		return "", -1, fmt.Sprintf("key attribute %s is %d bytes: DynamoDB allows at most %d", k.attr, len(key), k.maxBytes)
	}
	return key, -1, ""
}

// referenceKeyNumber is the key text of decimal text s at width and scale,
// or "" when it does not fit.
func referenceKeyNumber(s string, width, scale int) string {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return ""
	}
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
	scaled := new(big.Rat).Mul(new(big.Rat).Abs(r), new(big.Rat).SetInt(unit))
	if !scaled.IsInt() {
		return ""
	}
	n := scaled.Num()
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(width+scale)), nil)
	if n.Cmp(limit) >= 0 {
		return ""
	}
	sign := ""
	if r.Sign() < 0 {
		sign = "-"
		n = new(big.Int).Sub(new(big.Int).Sub(limit, big.NewInt(1)), n)
	}
	digits := fmt.Sprintf("%0*s", width+scale, n.String())
	if scale > 0 {
		digits = digits[:width] + "." + digits[width:]
	}
	return sign + digits
}

// referenceKeyTime is the key text of a time value v whose attribute text
// is s.
func referenceKeyTime(v any, s string) string {
	t, ok := v.(time.Time)
	if !ok { // time of day, read as text
		tt, err := time.Parse("15:04:05.999999", s)
		if err != nil {
			return "unparsable " + s
		}
		return tt.Format("15:04:05.000000")
	}
	if strings.HasSuffix(s, "Z") {
		return t.UTC().Format("2006-01-02T15:04:05.000000Z")
	}
	return t.Format("2006-01-02T15:04:05.000000")
}
