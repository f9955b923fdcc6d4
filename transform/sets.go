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

// DynamoDB sets (attributes.sets arrays, or embed as: set child values) as SS,
// NS or BS. Sets hold distinct non-NULL values of one type, unordered and never
// empty
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html#HowItWorks.DataTypes.SetTypes):
// duplicates collapse (numbers by canonical text: 1.0 and 1 are one), a NULL
// rejects the row, no values leave the attribute out, and members are sorted by
// bytes so a row always gives the same item. Sets take no Builder fast path
// (kindOther: setAttr builds them), so mappings without sets pay nothing.

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

// setKindOf returns the set c's (element) values make: NS for numbers, BS for
// bytea, none for boolean and json, SS for everything written as S.
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

type setConv struct {
	kind setKind
	// text is a non-NULL value's member text: its S or N attribute's text
	// alone.
	text func(any) (string, error)
}

func newSetConv(c extract.Column) setConv {
	return setConv{kind: setKindOf(c), text: scalarFor(c.Type, c.AsText).text}
}

// build returns vals' set, members distinct and sorted, or nil when empty. A
// NULL, nested array or refused value is an error naming it by where(i).
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

// setAttr converts array column c to a set; nil for an empty array, leaving the
// attribute out.
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

// convertOf is c's conversion: setAttr for a set, else columnAttr.
func convertOf(c extract.Column, set bool) func(any) (types.AttributeValue, error) {
	if set {
		return setAttr(c)
	}
	return columnAttr(c)
}

// setAttrPlan plans column col as a set: kindOther, so Builder uses setAttr.
func setAttrPlan(col int, name string, c extract.Column) attrPlan {
	return attrPlan{col: col, name: name, convert: setAttr(c), kind: kindOther}
}

// compileSets checks attributes a's sets against cols, returning their indexes;
// unknown columns go to unknown, non-one-dimensional or unsettable arrays to
// add.
func compileSets(cols []extract.Column, a mapping.Attributes, path string,
	add func(path, format string, args ...any), unknown func(path, col string, cols []extract.Column)) map[int]bool {
	if len(a.Sets) == 0 {
		return nil
	}
	out := map[int]bool{}
	for i, name := range a.Sets {
		p := fmt.Sprintf("%s.%s[%d]", path, mapping.KeySets, i)
		j := columnIndex(cols, name)
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

// compileEmbedSet checks an as: set embed's one column: not an array, of a
// settable type.
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

// embedSet converts an as: set embed's records into their values' set; nil
// without children.
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
