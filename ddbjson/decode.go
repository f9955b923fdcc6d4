package ddbjson

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A DecodeError is input that is not DynamoDB JSON: where in it, and why.
type DecodeError struct {
	// Path locates the value: "tags[2]", "meta.source.ip"; "" for the input.
	Path string
	// Err is encoding/json's or encoding/base64's error, ErrNotTyped or ErrNull.
	Err error
}

func (e *DecodeError) Error() string {
	if e.Path == "" {
		return "ddbjson: " + e.Err.Error()
	}
	return "ddbjson: " + e.Path + ": " + e.Err.Error()
}

func (e *DecodeError) Unwrap() error { return e.Err }

var (
	// ErrNotTyped is a value that is not an object of exactly one known type
	// descriptor, or a line that is not {"Item":{…}}.
	ErrNotTyped = errors.New("not DynamoDB JSON")
	// ErrNull is JSON null where an attribute value must be.
	ErrNull = errors.New("null where a value must be")
)

// DecodeLine decodes one S3 import line, {"Item":{…}} (newline optional),
// into an item; a *DecodeError otherwise.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/S3DataImport.Format.html
func DecodeLine(b []byte) (map[string]types.AttributeValue, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, &DecodeError{Err: err}
	}
	raw, ok := doc["Item"]
	if !ok || len(doc) != 1 {
		return nil, &DecodeError{Err: fmt.Errorf("%w: want one member, Item, in %.80s", ErrNotTyped, b)}
	}
	return DecodeItem(raw)
}

// DecodeItem decodes an item's DynamoDB JSON in either form (as AppendItem,
// Canonical and DynamoDB's failure reports hold it), keeping set and list
// order; B is padded standard base64 and N its unchecked text. JSON null
// gives an empty item. It fails with a *DecodeError naming the attribute.
func DecodeItem(b []byte) (map[string]types.AttributeValue, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, &DecodeError{Err: err}
	}
	return decodeMap(raw)
}

// DecodeValue decodes one attribute value's DynamoDB JSON ({"S":"Ada"}). JSON
// null or blank input gives nil (an absent value in verify's reports).
func DecodeValue(b []byte) (types.AttributeValue, error) {
	if t := bytes.TrimSpace(b); len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	return decodeValue(b)
}

func decodeMap(raw map[string]json.RawMessage) (map[string]types.AttributeValue, error) {
	item := make(map[string]types.AttributeValue, len(raw))
	for name, r := range raw {
		v, err := decodeValue(r)
		if err != nil {
			return nil, at(name, err)
		}
		item[name] = v
	}
	return item, nil
}

// decodeValue decodes one value, which must not be null.
func decodeValue(b []byte) (types.AttributeValue, error) {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil, &DecodeError{Err: ErrNull}
	}
	var tagged map[string]json.RawMessage
	if err := json.Unmarshal(b, &tagged); err != nil {
		return nil, &DecodeError{Err: err}
	}
	if len(tagged) != 1 {
		return nil, &DecodeError{Err: fmt.Errorf("%w: want one type descriptor (S, N, B, BOOL, NULL, L, M, SS, NS, BS), got %d", ErrNotTyped, len(tagged))}
	}
	for tag, body := range tagged {
		return decodeTagged(tag, body)
	}
	panic("not reached")
}

// decodeTagged decodes the body of a value of type descriptor tag.
func decodeTagged(tag string, body json.RawMessage) (types.AttributeValue, error) {
	var err error
	switch tag {
	case "S", "N", "B":
		var s string
		if err = json.Unmarshal(body, &s); err != nil {
			break
		}
		switch tag {
		case "S":
			return &types.AttributeValueMemberS{Value: s}, nil
		case "N":
			return &types.AttributeValueMemberN{Value: s}, nil
		}
		var v []byte
		if v, err = base64.StdEncoding.DecodeString(s); err == nil {
			return &types.AttributeValueMemberB{Value: v}, nil
		}
	case "BOOL":
		var v bool
		if err = json.Unmarshal(body, &v); err == nil {
			return &types.AttributeValueMemberBOOL{Value: v}, nil
		}
	case "NULL":
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case "L":
		return decodeList(body)
	case "M":
		var raw map[string]json.RawMessage
		if err = json.Unmarshal(body, &raw); err != nil {
			break
		}
		m, err := decodeMap(raw)
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	case "SS", "NS", "BS":
		return decodeSet(tag, body)
	default:
		err = fmt.Errorf("%w: unknown type descriptor %q", ErrNotTyped, tag)
	}
	return nil, &DecodeError{Err: err}
}

func decodeList(body json.RawMessage) (types.AttributeValue, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(body, &elems); err != nil {
		return nil, &DecodeError{Err: err}
	}
	l := make([]types.AttributeValue, len(elems))
	for i, e := range elems {
		v, err := decodeValue(e)
		if err != nil {
			return nil, at("["+strconv.Itoa(i)+"]", err)
		}
		l[i] = v
	}
	return &types.AttributeValueMemberL{Value: l}, nil
}

func decodeSet(tag string, body json.RawMessage) (types.AttributeValue, error) {
	var ss []string
	if err := json.Unmarshal(body, &ss); err != nil {
		return nil, &DecodeError{Err: err}
	}
	switch tag {
	case "SS":
		return &types.AttributeValueMemberSS{Value: ss}, nil
	case "NS":
		return &types.AttributeValueMemberNS{Value: ss}, nil
	}
	bs := make([][]byte, len(ss))
	for i, s := range ss {
		v, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, &DecodeError{Path: "[" + strconv.Itoa(i) + "]", Err: err}
		}
		bs[i] = v
	}
	return &types.AttributeValueMemberBS{Value: bs}, nil
}

// at prefixes err's *DecodeError path with seg (a member name or "[2]").
func at(seg string, err error) error {
	var de *DecodeError
	if !errors.As(err, &de) {
		de = &DecodeError{Err: err}
	}
	p := seg
	switch {
	case de.Path == "":
	case de.Path[0] == '[':
		p += de.Path
	default:
		p += "." + de.Path
	}
	return &DecodeError{Path: p, Err: de.Err}
}
