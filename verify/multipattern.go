package verify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// Access patterns on a multi-attribute GSI: = on every partition key attribute,
// then sort key attributes from the left, a range only on the last; the index
// sorts by its sort key attributes in order, each by type.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.DesignPattern.MultiAttributeKeys.html

// multiPatternQuery builds a multi-attribute GSI pattern's Query: one condition
// a term, joined by expression.KeyAnd, each value the attribute value the items
// carry.
func multiPatternQuery(table string, pp *transform.PatternPlan, values []any, filter bool) (*dynamodb.QueryInput, error) {
	terms, err := pp.RenderTerms(values)
	if err != nil {
		return nil, err
	}
	conds := make([]expression.KeyConditionBuilder, 0, len(terms))
	for _, t := range terms {
		c, err := termCondition(t)
		if err != nil {
			return nil, fmt.Errorf("pattern %s: %w", pp.Pattern.Name, err)
		}
		conds = append(conds, c)
	}
	cond := conds[0]
	if len(conds) > 1 {
		cond = expression.KeyAnd(conds...)
	}
	return patternInput(table, pp, values, cond, filter)
}

// termCondition is term t as a key condition.
func termCondition(t transform.Term) (expression.KeyConditionBuilder, error) {
	vals := make([]expression.ValueBuilder, len(t.Values))
	for i, v := range t.Values {
		vals[i] = expression.Value(v)
	}
	prefix, _ := transform.KeyText(t.Values[0]) // begins_with's, a string (mapping.Load)
	return keyCondition(t.Attr, t.Op, vals, prefix)
}

// keyCondition is key attribute attr's condition op on vals (between takes
// two); begins_with takes prefix, as it takes strings only.
func keyCondition(attr, op string, vals []expression.ValueBuilder, prefix string) (expression.KeyConditionBuilder, error) {
	k := expression.Key(attr)
	switch op {
	case "=":
		return k.Equal(vals[0]), nil
	case "<":
		return k.LessThan(vals[0]), nil
	case "<=":
		return k.LessThanEqual(vals[0]), nil
	case ">":
		return k.GreaterThan(vals[0]), nil
	case ">=":
		return k.GreaterThanEqual(vals[0]), nil
	case "begins_with":
		return k.BeginsWith(prefix), nil
	case "between":
		return k.Between(vals[0], vals[1]), nil
	}
	return expression.KeyConditionBuilder{}, fmt.Errorf("unknown key condition operator %q", op)
}

// keyOpHolds reports whether sort text got meets key condition op against
// bounds, in sort text too (between: two).
func keyOpHolds(op, got string, bounds []string) bool {
	switch op {
	case "=":
		return got == bounds[0]
	case "<":
		return got < bounds[0]
	case "<=":
		return got <= bounds[0]
	case ">":
		return got > bounds[0]
	case ">=":
		return got >= bounds[0]
	case "begins_with":
		return strings.HasPrefix(got, bounds[0])
	case "between":
		return got >= bounds[0] && got <= bounds[1]
	}
	return false
}

// newMultiCheck is a multi-attribute GSI pattern's check for values: its terms,
// indexed by the first partition key attribute's value.
func newMultiCheck(m *mapping.Mapping, pp *transform.PatternPlan, values []any) (*patternCheck, error) {
	terms, err := pp.RenderTerms(values)
	if err != nil {
		return nil, err
	}
	c := &patternCheck{pp: pp, values: values, params: map[string]string{}, terms: terms, gsi: m.Table.GSI(pp.Pattern.Index), members: map[memberKey]int64{}}
	c.pk, _ = transform.KeyText(terms[0].Values[0])
	if c.filter, err = filterValues(pp, values); err != nil {
		return nil, err
	}
	for i, p := range pp.Params {
		c.params[p] = fmt.Sprint(values[i])
	}
	return c, nil
}

// matchTerms reports whether item is in the index and meets every term, with
// its sort key value (sortTuple).
func (c *patternCheck) matchTerms(item map[string]types.AttributeValue) (string, bool) {
	for _, a := range slices.Concat(c.gsi.PartitionKeys, c.gsi.SortKeys) {
		if _, ok := typedText(item[a.Name], a.Type); !ok {
			return "", false // not in the (sparse) index
		}
	}
	for _, t := range c.terms {
		got, _ := typedText(item[t.Attr], t.Type)
		var bounds [2]string
		for i, v := range t.Values {
			s, _ := transform.KeyText(v)
			bounds[i] = transform.SortText(t.Type, s)
		}
		if !keyOpHolds(t.Op, transform.SortText(t.Type, got), bounds[:len(t.Values)]) {
			return "", false
		}
	}
	return sortTuple(item, c.gsi.SortKeys), true
}

// sortTuple is item's sort key value in a GSI with sort key attributes keys:
// each transform.SortText joined by "\x00", so byte order is the index's order.
func sortTuple(item map[string]types.AttributeValue, keys []mapping.KeyAttribute) string {
	var b strings.Builder
	for i, a := range keys {
		if i > 0 {
			b.WriteByte(0)
		}
		text, _ := typedText(item[a.Name], a.Type)
		b.WriteString(transform.SortText(a.Type, text))
	}
	return b.String()
}

// typedText is v's key text when v is of type typ; another type is not an index
// key.
func typedText(v types.AttributeValue, typ string) (string, bool) {
	ok := false
	switch v.(type) {
	case *types.AttributeValueMemberS:
		ok = typ == mapping.TypeString
	case *types.AttributeValueMemberN:
		ok = typ == mapping.TypeNumber
	case *types.AttributeValueMemberB:
		ok = typ == mapping.TypeBinary
	}
	if !ok {
		return "", false
	}
	return transform.KeyText(v)
}
