package transform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pg2dynamo/pg2dynamo/extract"
)

// Time formats: ISO-8601 with microseconds when present; timestamptz in UTC.
const (
	dateLayout        = "2006-01-02"
	timestampLayout   = "2006-01-02T15:04:05.999999"
	timestamptzLayout = "2006-01-02T15:04:05.999999Z"
)

// scalar converts one non-NULL pgx-decoded value to a DynamoDB attribute value
// and, for key types, key text.
type scalar struct {
	attr func(v any) (types.AttributeValue, error)
	// text renders the value for a key template; nil when the type cannot be in
	// a key.
	text func(v any) (string, error)
	// intWidth is the default sort key padding width: the digits of the type's
	// largest value; 0 for non-integers.
	intWidth int
	// kind selects Builder's allocation-free conversion of the same values.
	kind kind
}

// kind is a scalar conversion Builder implements itself (attr and text stay the
// reference and fallback).
type kind uint8

const (
	kindOther kind = iota // attr only (no fast path)
	kindInt
	kindNumeric
	kindFloat
	kindText
	kindUUID
	kindBool
	kindBytes
	kindDate
	kindTimestamp
	kindTimestamptz
	kindJSON
)

// scalarFor returns the conversion of type typ (pg_type.typname) as extract
// reads it (text form when asText).
func scalarFor(typ string, asText bool) scalar {
	if asText {
		if typ == "json" || typ == "jsonb" {
			return scalar{attr: jsonAttr, kind: kindJSON}
		}
		return scalar{attr: stringAttr, text: stringText, kind: kindText}
	}
	switch typ {
	case "int2":
		return scalar{attr: numberAttr(intText), text: intText, intWidth: 5, kind: kindInt}
	case "int4":
		return scalar{attr: numberAttr(intText), text: intText, intWidth: 10, kind: kindInt}
	case "int8":
		return scalar{attr: numberAttr(intText), text: intText, intWidth: 19, kind: kindInt}
	case "numeric":
		return scalar{attr: numberAttr(numericText), text: numericText, kind: kindNumeric}
	case "float4", "float8":
		return scalar{attr: numberAttr(floatText), text: floatText, kind: kindFloat}
	case "uuid":
		return scalar{attr: stringAttrOf(uuidText), text: uuidText, kind: kindUUID}
	case "bool":
		return scalar{attr: boolAttr, text: boolText, kind: kindBool}
	case "bytea":
		return scalar{attr: bytesAttr, kind: kindBytes}
	case "date":
		return scalar{attr: stringAttrOf(timeText(typ)), text: timeText(typ), kind: kindDate}
	case "timestamp":
		return scalar{attr: stringAttrOf(timeText(typ)), text: timeText(typ), kind: kindTimestamp}
	case "timestamptz":
		return scalar{attr: stringAttrOf(timeText(typ)), text: timeText(typ), kind: kindTimestamptz}
	default: // text, varchar, bpchar, name
		return scalar{attr: stringAttr, text: stringText, kind: kindText}
	}
}

// writesString reports whether column c is written as a string (S).
func writesString(c extract.Column) bool {
	switch scalarFor(c.Type, c.AsText).kind {
	case kindText, kindUUID, kindDate, kindTimestamp, kindTimestamptz:
		return !c.Array
	}
	return false
}

// columnAttr returns c's conversion: its scalar's, or a list of them for an
// array (NULL elements NULL).
func columnAttr(c extract.Column) func(v any) (types.AttributeValue, error) {
	s := scalarFor(c.Type, c.AsText)
	if !c.Array {
		return s.attr
	}
	var list func(v any) (types.AttributeValue, error)
	list = func(v any) (types.AttributeValue, error) {
		elems, ok := v.([]any)
		if !ok {
			return nil, unexpected(v, c.Type+"[]")
		}
		out := make([]types.AttributeValue, len(elems))
		for i, e := range elems {
			var err error
			switch e.(type) {
			case nil:
				out[i] = &types.AttributeValueMemberNULL{Value: true}
			case []any: // a dimension of a multi-dimensional array
				out[i], err = list(e)
			default:
				out[i], err = s.attr(e)
			}
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i+1, err)
			}
		}
		return &types.AttributeValueMemberL{Value: out}, nil
	}
	return list
}

func unexpected(v any, typ string) error {
	return fmt.Errorf("unexpected Go value %T for PostgreSQL type %s", v, typ)
}

func numberAttr(text func(any) (string, error)) func(any) (types.AttributeValue, error) {
	return func(v any) (types.AttributeValue, error) {
		s, err := text(v)
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberN{Value: s}, nil
	}
}

func stringAttrOf(text func(any) (string, error)) func(any) (types.AttributeValue, error) {
	return func(v any) (types.AttributeValue, error) {
		s, err := text(v)
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberS{Value: s}, nil
	}
}

func intText(v any) (string, error) {
	switch n := v.(type) {
	case int16:
		return strconv.FormatInt(int64(n), 10), nil
	case int32:
		return strconv.FormatInt(int64(n), 10), nil
	case int64:
		return strconv.FormatInt(n, 10), nil
	}
	return "", unexpected(v, "integer")
}

func numericText(v any) (string, error) {
	n, ok := v.(pgtype.Numeric)
	if !ok {
		return "", unexpected(v, "numeric")
	}
	if n.NaN || n.InfinityModifier != pgtype.Finite {
		return "", ErrNotANumber
	}
	if n.Int == nil {
		return "0", nil
	}
	return CanonicalNumber(n.Int.String() + "e" + strconv.Itoa(int(n.Exp)))
}

func floatText(v any) (string, error) {
	var f float64
	bits := 64
	switch n := v.(type) {
	case float32:
		f, bits = float64(n), 32
	case float64:
		f = n
	default:
		return "", unexpected(v, "float")
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", ErrNotANumber
	}
	// The shortest decimal reading back as the same float: 0.1::real is "0.1",
	// as psql prints it.
	return CanonicalNumber(strconv.FormatFloat(f, 'e', -1, bits))
}

func stringAttr(v any) (types.AttributeValue, error) {
	s, err := stringText(v)
	if err != nil {
		return nil, err
	}
	return &types.AttributeValueMemberS{Value: s}, nil
}

// errNotUTF8 rejects non-UTF-8 text (possible in SQL_ASCII): replacing bad
// bytes could merge two keys.
var errNotUTF8 = errors.New("text is not valid UTF-8 (is the database encoding SQL_ASCII?)")

func stringText(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", unexpected(v, "text")
	}
	if !utf8.ValidString(s) {
		return "", errNotUTF8
	}
	return s, nil
}

func uuidText(v any) (string, error) {
	u, ok := v.([16]byte)
	if !ok {
		return "", unexpected(v, "uuid")
	}
	return string(appendUUID(make([]byte, 0, 36), u)), nil
}

func boolAttr(v any) (types.AttributeValue, error) {
	b, ok := v.(bool)
	if !ok {
		return nil, unexpected(v, "boolean")
	}
	return &types.AttributeValueMemberBOOL{Value: b}, nil
}

func boolText(v any) (string, error) {
	b, ok := v.(bool)
	if !ok {
		return "", unexpected(v, "boolean")
	}
	return strconv.FormatBool(b), nil
}

func bytesAttr(v any) (types.AttributeValue, error) {
	b, ok := v.([]byte)
	if !ok {
		return nil, unexpected(v, "bytea")
	}
	return &types.AttributeValueMemberB{Value: b}, nil
}

func timeText(typ string) func(any) (string, error) {
	layout := map[string]string{"date": dateLayout, "timestamp": timestampLayout, "timestamptz": timestamptzLayout}[typ]
	return func(v any) (string, error) {
		switch t := v.(type) {
		case time.Time:
			if typ == "timestamptz" {
				t = t.UTC()
			}
			if y := t.Year(); y < 1 || y > 9999 {
				return "", fmt.Errorf("%s year %d has no ISO-8601 form without an extended year", typ, y)
			}
			return t.Format(layout), nil
		case pgtype.InfinityModifier:
			return "", fmt.Errorf("%s %s has no ISO-8601 form", typ, t)
		}
		return "", unexpected(v, typ)
	}
}

// jsonAttr converts json/jsonb text to M, L, S, N, BOOL or NULL, numbers exact
// (never via float64); it is Builder.fromJSON's reference and fallback.
// Non-UTF-8 text and lone UTF-16 surrogate escapes (json keeps them, jsonb
// refuses) are errors, since encoding/json would make them U+FFFD.
func jsonAttr(v any) (types.AttributeValue, error) {
	s, ok := v.(string)
	if !ok {
		return nil, unexpected(v, "json")
	}
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("json: %w", errNotUTF8)
	}
	if err := checkSurrogates(s); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("json: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("json: trailing data after the document")
	}
	return jsonValue(doc)
}

// checkSurrogates reports s's first \u escape of an unpaired UTF-16 surrogate,
// which no UTF-8 text holds. Outside strings a backslash is invalid JSON, so s
// is scanned whole.
func checkSurrogates(s string) error {
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(s) || s[i] != '\\' || s[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(s[i+2:i+6], 16, 16)
		return rune(n), err == nil
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		r, ok := hex4(i)
		if !ok {
			i++ // another escape: skip its character
			continue
		}
		switch {
		case r >= 0xd800 && r < 0xdc00:
			if lo, ok := hex4(i + 6); ok && lo >= 0xdc00 && lo < 0xe000 {
				i += 11
				continue
			}
		case r >= 0xdc00 && r < 0xe000:
		default:
			i += 5
			continue
		}
		return fmt.Errorf("json: string escape %s is a lone UTF-16 surrogate, which is no character: rejected, not replaced with U+FFFD", s[i:i+6])
	}
	return nil
}

func jsonValue(doc any) (types.AttributeValue, error) {
	switch d := doc.(type) {
	case nil:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case bool:
		return &types.AttributeValueMemberBOOL{Value: d}, nil
	case string:
		return &types.AttributeValueMemberS{Value: d}, nil
	case json.Number:
		n, err := CanonicalNumber(string(d))
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberN{Value: n}, nil
	case []any:
		list := make([]types.AttributeValue, len(d))
		for i, e := range d {
			av, err := jsonValue(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			list[i] = av
		}
		return &types.AttributeValueMemberL{Value: list}, nil
	case map[string]any:
		m := make(map[string]types.AttributeValue, len(d))
		for k, e := range d {
			av, err := jsonValue(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			m[k] = av
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	}
	return nil, fmt.Errorf("json: unexpected %T", doc)
}
