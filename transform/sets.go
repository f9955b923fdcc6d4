package transform

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// DynamoDB sets: an array column listed in attributes.sets, or the values
// of one child column (embed as: set), written as an SS, NS or BS.
// DynamoDB sets hold distinct, non-NULL values of one type, in no order,
// and are never empty
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html#HowItWorks.DataTypes.SetTypes).
// So duplicates collapse (numbers compared by their canonical text, the
// text N attributes hold: 1.0 and 1 are one member), a NULL rejects the
// row, no values leave the attribute out, and the members are written
// sorted (by bytes), so that a row always gives the same item.
//
// A set attribute takes no fast path in Builder: its attrPlan has kind
// kindOther, so Builder.attr declines it and a.convert (setAttr) builds it.
// Mappings without sets pay nothing.

// setKind is the DynamoDB set type a column's values make.
type setKind uint8

const (
	noSet setKind = iota // the type's values cannot be a set (bool, json)
	setS
	setN
	setB
)

func (k setKind) String() string {
	return [...]string{"no set", "SS", "NS", "BS"}[k]
}

// Why a set cannot be built; wrapped in the reason a row is rejected.
var (
	errNullInSet = errors.New("a DynamoDB set cannot hold NULL")
	errSetDims   = errors.New("a multi-dimensional array cannot be a set")
)

// setKindOf returns the set the values of column c (of an array's
// elements) make: NS for numbers, BS for bytea, none for boolean and json,
// SS for everything written as S (text, uuid, enums, dates, timestamps and
// the types read as text).
func setKindOf(c extract.Column) setKind {
	switch scalarFor(c.Type, c.AsText).kind {
	case kindInt, kindNumeric, kindFloat:
		return setN
	case kindBytes:
		return setB
	case kindBool, kindJSON:
		return noSet
	}
	return setS
}

// setConv builds the set of one column's values.
type setConv struct {
	kind setKind
	// text is the member text of a non-NULL value (SS and NS): the text
	// of the S or N attribute the value would be alone.
	text func(any) (string, error)
}

func newSetConv(c extract.Column) setConv {
	return setConv{kind: setKindOf(c), text: scalarFor(c.Type, c.AsText).text}
}

// build returns the set of vals: an SS, NS or BS, members distinct and
// sorted, or nil (and no error) when vals is empty. A NULL value, a nested
// array or a value the member conversion refuses is an error naming the
// value by where(i), i its index in vals.
func (sc setConv) build(vals []any, where func(i int) string) (types.AttributeValue, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	check := func(i int, v any) error {
		switch v.(type) {
		case nil:
			return fmt.Errorf("%s is NULL: %w", where(i), errNullInSet)
		case []any:
			return fmt.Errorf("%s is an array: %w", where(i), errSetDims)
		}
		return nil
	}
	if sc.kind == setB {
		out := make([][]byte, len(vals))
		for i, v := range vals {
			if err := check(i, v); err != nil {
				return nil, err
			}
			b, ok := v.([]byte)
			if !ok {
				return nil, fmt.Errorf("%s: %w", where(i), unexpected(v, "bytea"))
			}
			out[i] = b
		}
		slices.SortFunc(out, bytes.Compare)
		return &types.AttributeValueMemberBS{Value: slices.CompactFunc(out, bytes.Equal)}, nil
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		if err := check(i, v); err != nil {
			return nil, err
		}
		s, err := sc.text(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where(i), err)
		}
		out[i] = s
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if sc.kind == setN {
		return &types.AttributeValueMemberNS{Value: out}, nil
	}
	return &types.AttributeValueMemberSS{Value: out}, nil
}

// setAttr returns the conversion of array column c to a set: nil (and no
// error) for an empty array, which leaves the attribute out.
func setAttr(c extract.Column) func(any) (types.AttributeValue, error) {
	sc := newSetConv(c)
	return func(v any) (types.AttributeValue, error) {
		elems, ok := v.([]any)
		if !ok {
			return nil, unexpected(v, c.Type+"[]")
		}
		return sc.build(elems, func(i int) string { return fmt.Sprintf("element %d", i+1) })
	}
}

// convertOf is the attribute conversion of column c: setAttr when it is
// written as a set, else columnAttr.
func convertOf(c extract.Column, set bool) func(any) (types.AttributeValue, error) {
	if set {
		return setAttr(c)
	}
	return columnAttr(c)
}

// setAttrPlan is the plan of attribute name, column col (c) written as a
// set: no fast path (kindOther), so Builder converts it with setAttr.
func setAttrPlan(col int, name string, c extract.Column) attrPlan {
	return attrPlan{col: col, name: name, convert: setAttr(c), kind: kindOther}
}

// compileSets checks the sets list of attributes a (at path) against
// cols, and returns the indexes in cols of the columns written as sets.
// An unknown column is reported through unknown; a column that is not a
// one-dimensional array of a type a set can hold through add.
func compileSets(cols []extract.Column, a mapping.Attributes, path string,
	add func(path, format string, args ...any), unknown func(path, col string, cols []extract.Column)) map[int]bool {
	if len(a.Sets) == 0 {
		return nil
	}
	out := map[int]bool{}
	for i, name := range a.Sets {
		p := fmt.Sprintf("%s.%s[%d]", path, mapping.KeySets, i)
		j := slices.IndexFunc(cols, func(c extract.Column) bool { return c.Name == name })
		if j < 0 {
			unknown(p, name, cols)
			continue
		}
		c := cols[j]
		switch {
		case !c.Array:
			add(p, "column %q of type %s is not an array: a set is written from an array column (or from child rows, with embed as: set)", c.Name, typeName(c))
		case c.Dims > 1:
			add(p, "column %q is declared with %d dimensions: a set is written from a one-dimensional array", c.Name, c.Dims)
		case setKindOf(c) == noSet:
			add(p, "column %q of type %s cannot be a set: expected an array of text-like values (SS), numbers (NS) or bytea (BS)", c.Name, typeName(c))
		default:
			out[j] = true
		}
	}
	return out
}

// compileEmbedSet checks the one child column of an embed with as: set
// (at path): a column, not an array, of a type a set can hold.
func compileEmbedSet(path string, c extract.Column, add func(path, format string, args ...any)) (setConv, bool) {
	sc := newSetConv(c)
	switch {
	case c.Array:
		add(path, "column %q of type %s is an array: as: set takes the values of a column of another type, one per child row", c.Name, typeName(c))
	case sc.kind == noSet:
		add(path, "column %q of type %s cannot be a set: expected a text-like column (SS), a number (NS) or bytea (BS)", c.Name, typeName(c))
	default:
		return sc, true
	}
	return setConv{}, false
}

// embedSet converts the records of an embed with as: set (one field each)
// into the set of their values; nil without children.
func (j joinPlan) embedSet(records []any) (types.AttributeValue, string) {
	vals := make([]any, len(records))
	for r, rec := range records {
		fields, ok := rec.([]any)
		if !ok || len(fields) != 1 {
			return nil, fmt.Sprintf("child row %d: unexpected record %T", r+1, rec)
		}
		vals[r] = fields[0]
	}
	av, err := j.set.build(vals, func(i int) string {
		return fmt.Sprintf("column %q of child row %d", j.join.Columns[0].Name, i+1)
	})
	if err != nil {
		return nil, err.Error()
	}
	return av, ""
}
