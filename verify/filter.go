package verify

import (
	"bytes"
	"fmt"
	"math/big"
	"slices"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// filterValues returns each filter parameter's attribute value for values
// (transform.PatternPlan.ParamAttr); nil without a filter.
func filterValues(pp *transform.PatternPlan, values []any) (map[string]types.AttributeValue, error) {
	f := pp.Pattern.FilterExpr
	if f == nil {
		return nil, nil
	}
	out := map[string]types.AttributeValue{}
	for _, c := range f.Columns() {
		v, err := pp.ParamAttr(values, c)
		if err != nil {
			return nil, err
		}
		out[c] = v
	}
	return out, nil
}

// operand is a filter parameter's Go value for the expression builder.
func operand(v types.AttributeValue) (expression.ValueBuilder, error) {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return expression.Value(x.Value), nil
	case *types.AttributeValueMemberN:
		return expression.Value(attributevalue.Number(x.Value)), nil
	case *types.AttributeValueMemberB:
		return expression.Value(x.Value), nil
	case *types.AttributeValueMemberBOOL:
		return expression.Value(x.Value), nil
	}
	return expression.ValueBuilder{}, fmt.Errorf("a filter parameter of type %T: expected a string, number, binary or boolean column", v)
}

// filterCondition builds f's FilterExpression with parameter values vals.
func filterCondition(f *mapping.Filter, vals map[string]types.AttributeValue) (expression.ConditionBuilder, error) {
	var conds []expression.ConditionBuilder
	for _, c := range f.Conds {
		ops := make([]expression.OperandBuilder, len(c.Params))
		for i, p := range c.Params {
			v, err := operand(vals[p])
			if err != nil {
				return expression.ConditionBuilder{}, fmt.Errorf("filter on %s: %w", c.Attr, err)
			}
			ops[i] = v
		}
		name := expression.Name(c.Attr)
		var cb expression.ConditionBuilder
		switch c.Func {
		case "attribute_exists":
			cb = expression.AttributeExists(name)
		case "attribute_not_exists":
			cb = expression.AttributeNotExists(name)
		case "begins_with":
			s, ok := vals[c.Params[0]].(*types.AttributeValueMemberS)
			if !ok {
				return expression.ConditionBuilder{}, fmt.Errorf("filter begins_with(%s, …): expected a string parameter", c.Attr)
			}
			cb = expression.BeginsWith(name, s.Value)
		case "contains":
			cb = expression.Contains(name, ops[0])
		case "size":
			cb = filterComparison(name.Size(), c.Op, ops)
		default:
			cb = filterComparison(name, c.Op, ops)
		}
		conds = append(conds, cb)
	}
	if len(conds) == 1 {
		return conds[0], nil
	}
	if f.Or {
		return expression.Or(conds[0], conds[1], conds[2:]...), nil
	}
	return expression.And(conds[0], conds[1], conds[2:]...), nil
}

// filterComparison is left op ops: a comparator, BETWEEN or IN.
func filterComparison(left expression.OperandBuilder, op string, ops []expression.OperandBuilder) expression.ConditionBuilder {
	switch op {
	case "=":
		return expression.Equal(left, ops[0])
	case "<>":
		return expression.NotEqual(left, ops[0])
	case "<":
		return expression.LessThan(left, ops[0])
	case "<=":
		return expression.LessThanEqual(left, ops[0])
	case ">":
		return expression.GreaterThan(left, ops[0])
	case ">=":
		return expression.GreaterThanEqual(left, ops[0])
	case "between":
		return expression.Between(left, ops[0], ops[1])
	}
	return expression.In(left, ops[0], ops[1:]...)
}

// matchFilter reports whether item passes f as DynamoDB documents filter
// evaluation: comparisons hold between values of one type only (numbers by
// value, strings and binaries by bytes), and a missing attribute fails all but
// <>. Where the rules do not decide, undecided says why and pass is false; an
// AND with a failing condition fails and an OR with a holding one holds
// regardless.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.OperatorsAndFunctions.html
func matchFilter(f *mapping.Filter, item map[string]types.AttributeValue, vals map[string]types.AttributeValue) (pass bool, undecided string) {
	for _, c := range f.Conds {
		ok, why := matchCond(c, item, vals)
		switch {
		case why != "":
			undecided = why
		case ok == f.Or:
			return ok, "" // the first true of an OR, the first false of an AND
		}
	}
	if undecided != "" {
		return false, undecided
	}
	return !f.Or, ""
}

func matchCond(c mapping.FilterCond, item map[string]types.AttributeValue, vals map[string]types.AttributeValue) (bool, string) {
	a, has := item[c.Attr]
	ps := make([]types.AttributeValue, len(c.Params))
	for i, p := range c.Params {
		ps[i] = vals[p]
	}
	switch c.Func {
	case "attribute_exists":
		return has, ""
	case "attribute_not_exists":
		return !has, ""
	case "begins_with":
		return has && beginsWith(a, ps[0]), ""
	case "contains":
		return has && contains(a, ps[0]), ""
	case "size":
		ns, why := sizeOf(a)
		if ns == nil {
			// Whether size() has no value or the condition is false, only <>
			// could hold.
			if c.Op == "<>" {
				return false, fmt.Sprintf("size(%s) <> …, where %s", c.Attr, why)
			}
			return false, ""
		}
		ok := holds(&types.AttributeValueMemberN{Value: fmt.Sprint(ns[0])}, c.Op, ps)
		for _, n := range ns[1:] {
			if holds(&types.AttributeValueMemberN{Value: fmt.Sprint(n)}, c.Op, ps) != ok {
				return false, fmt.Sprintf("size(%s), where %s", c.Attr, why)
			}
		}
		return ok, ""
	}
	if !has {
		return c.Op == "<>", ""
	}
	return holds(a, c.Op, ps), ""
}

// holds is a op ps: a comparator, BETWEEN or IN.
func holds(a types.AttributeValue, op string, ps []types.AttributeValue) bool {
	switch op {
	case "=":
		return equal(a, ps[0])
	case "<>":
		return !equal(a, ps[0])
	case "in":
		return slices.ContainsFunc(ps, func(p types.AttributeValue) bool { return equal(a, p) })
	case "between":
		lo, ok1 := order(a, ps[0])
		hi, ok2 := order(a, ps[1])
		return ok1 && ok2 && lo >= 0 && hi <= 0
	}
	d, ok := order(a, ps[0])
	switch op {
	case "<":
		return ok && d < 0
	case "<=":
		return ok && d <= 0
	case ">":
		return ok && d > 0
	}
	return ok && d >= 0 // >=
}

// order compares numbers, strings or binaries of one type; false otherwise.
func order(a, b types.AttributeValue) (int, bool) {
	switch x := a.(type) {
	case *types.AttributeValueMemberN:
		y, ok := b.(*types.AttributeValueMemberN)
		if !ok {
			return 0, false
		}
		p, ok1 := new(big.Rat).SetString(x.Value)
		q, ok2 := new(big.Rat).SetString(y.Value)
		if !ok1 || !ok2 {
			return 0, false
		}
		return p.Cmp(q), true
	case *types.AttributeValueMemberS:
		y, ok := b.(*types.AttributeValueMemberS)
		if !ok {
			return 0, false
		}
		return bytes.Compare([]byte(x.Value), []byte(y.Value)), true
	case *types.AttributeValueMemberB:
		y, ok := b.(*types.AttributeValueMemberB)
		if !ok {
			return 0, false
		}
		return bytes.Compare(x.Value, y.Value), true
	}
	return 0, false
}

// equal compares values of one type: numbers by value, the rest by content
// (ddbjson.Canonical).
func equal(a, b types.AttributeValue) bool {
	if d, ok := order(a, b); ok {
		return d == 0
	}
	return bytes.Equal(ddbjson.Canonical(map[string]types.AttributeValue{"v": a}), ddbjson.Canonical(map[string]types.AttributeValue{"v": b}))
}

func beginsWith(a, p types.AttributeValue) bool {
	switch x := a.(type) {
	case *types.AttributeValueMemberS:
		y, ok := p.(*types.AttributeValueMemberS)
		return ok && len(x.Value) >= len(y.Value) && x.Value[:len(y.Value)] == y.Value
	case *types.AttributeValueMemberB:
		y, ok := p.(*types.AttributeValueMemberB)
		return ok && bytes.HasPrefix(x.Value, y.Value)
	}
	return false
}

// contains is DynamoDB's contains(a, p): substring, set member or list element.
func contains(a, p types.AttributeValue) bool {
	switch x := a.(type) {
	case *types.AttributeValueMemberS:
		y, ok := p.(*types.AttributeValueMemberS)
		return ok && bytes.Contains([]byte(x.Value), []byte(y.Value))
	case *types.AttributeValueMemberB:
		y, ok := p.(*types.AttributeValueMemberB)
		return ok && bytes.Contains(x.Value, y.Value)
	case *types.AttributeValueMemberSS:
		y, ok := p.(*types.AttributeValueMemberS)
		return ok && slices.Contains(x.Value, y.Value)
	case *types.AttributeValueMemberNS:
		return slices.ContainsFunc(x.Value, func(n string) bool { return equal(&types.AttributeValueMemberN{Value: n}, p) })
	case *types.AttributeValueMemberBS:
		y, ok := p.(*types.AttributeValueMemberB)
		return ok && slices.ContainsFunc(x.Value, func(b []byte) bool { return bytes.Equal(b, y.Value) })
	case *types.AttributeValueMemberL:
		return slices.ContainsFunc(x.Value, func(e types.AttributeValue) bool { return equal(e, p) })
	}
	return false
}

// sizeOf is DynamoDB's size(a): a string's characters, a binary's bytes, a
// set's, list's or map's elements. Where the documentation does not pin it, why
// says so and sizes holds the candidates: none for a missing attribute, number,
// boolean or null; two for a string with a character outside the Basic
// Multilingual Plane (dynalite counts UTF-16 code units).
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.OperatorsAndFunctions.html#Expressions.OperatorsAndFunctions.Functions
func sizeOf(a types.AttributeValue) (sizes []int, why string) {
	switch x := a.(type) {
	case nil:
		return nil, "the attribute is missing, which DynamoDB's documentation of size() leaves out"
	case *types.AttributeValueMemberS:
		chars := utf8.RuneCountInString(x.Value)
		units := len(utf16.Encode([]rune(x.Value)))
		if units != chars {
			return []int{chars, units}, fmt.Sprintf("the string has %d characters but %d UTF-16 code units, "+
				"and DynamoDB's documentation of size() does not say how a character outside the Basic Multilingual Plane counts", chars, units)
		}
		return []int{chars}, ""
	case *types.AttributeValueMemberB:
		return []int{len(x.Value)}, ""
	case *types.AttributeValueMemberSS:
		return []int{len(x.Value)}, ""
	case *types.AttributeValueMemberNS:
		return []int{len(x.Value)}, ""
	case *types.AttributeValueMemberBS:
		return []int{len(x.Value)}, ""
	case *types.AttributeValueMemberL:
		return []int{len(x.Value)}, ""
	case *types.AttributeValueMemberM:
		return []int{len(x.Value)}, ""
	}
	return nil, fmt.Sprintf("the attribute is of type %s, which DynamoDB's documentation of size() leaves out", typeName(a))
}

// typeName is the type descriptor (N, BOOL, NULL) of a scalar without size.
func typeName(a types.AttributeValue) string {
	switch a.(type) {
	case *types.AttributeValueMemberN:
		return "N (a number)"
	case *types.AttributeValueMemberBOOL:
		return "BOOL"
	case *types.AttributeValueMemberNULL:
		return "NULL"
	}
	return fmt.Sprintf("%T", a)
}
