package ddbjson

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/go-json-experiment/json/jsontext"
)

// A DecodeError is input that is not DynamoDB JSON: where in it, and why.
type DecodeError struct {
	// Path locates the value: "tags[2]", "meta.source.ip"; "" for the input.
	Path string
	// Err is jsontext's *SyntacticError (the text is not JSON), encoding/base64's
	// error, ErrNotTyped or ErrNull.
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
	// descriptor with a body of its kind, or a line that is not {"Item":{…}}.
	ErrNotTyped = errors.New("not DynamoDB JSON")
	// ErrNull is JSON null where an attribute value must be.
	ErrNull = errors.New("null where a value must be")
)

// DecodeLine decodes one S3 import line, {"Item":{…}} (newline optional),
// into an item; a *DecodeError otherwise.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/S3DataImport.Format.html
func DecodeLine(b []byte) (map[string]types.AttributeValue, error) {
	return decodeAll(b, func(d *jsontext.Decoder) (map[string]types.AttributeValue, error) {
		notLine := func() error {
			return &DecodeError{Err: fmt.Errorf("%w: want one member, Item, in %.80s", ErrNotTyped, b)}
		}
		if openObject(d, "a line") != nil || d.PeekKind() != '"' {
			return nil, notLine()
		}
		if name, err := d.ReadToken(); err != nil || name.String() != "Item" {
			return nil, notLine()
		}
		item, err := readItem(d)
		if err != nil {
			return nil, err
		}
		if d.PeekKind() != '}' {
			return nil, notLine()
		}
		_, err = d.ReadToken()
		return item, wrap(err)
	})
}

// DecodeItem decodes an item's DynamoDB JSON in either form (as AppendItem,
// Canonical and DynamoDB's failure reports hold it), keeping set and list
// order; B is padded standard base64 and N its unchecked text. JSON null
// gives an empty item; of repeated names the last counts. It fails with a
// *DecodeError naming the attribute.
func DecodeItem(b []byte) (map[string]types.AttributeValue, error) {
	return decodeAll(b, readItem)
}

// DecodeValue decodes one attribute value's DynamoDB JSON ({"S":"Ada"}). JSON
// null or blank input gives nil (an absent value in verify's reports).
func DecodeValue(b []byte) (types.AttributeValue, error) {
	if t := bytes.TrimSpace(b); len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	return decodeAll(b, readValue)
}

// decodeOptions: names may repeat (the last wins) and invalid UTF-8 in strings
// reads as U+FFFD, as encoding/json reads both.
var decodeOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// A reader is a decoder and the buffer it reads; readers pools them.
type reader struct {
	buf bytes.Buffer
	dec jsontext.Decoder
}

var readers = sync.Pool{New: func() any { return new(reader) }}

// decodeAll reads b, which must hold one JSON value and nothing after it,
// with read, in a single pass over the bytes.
func decodeAll[T any](b []byte, read func(*jsontext.Decoder) (T, error)) (T, error) {
	r := readers.Get().(*reader)
	r.buf = *bytes.NewBuffer(b)
	r.dec.Reset(&r.buf, decodeOptions...)
	v, err := read(&r.dec)
	if err == nil {
		if _, end := r.dec.ReadToken(); end != io.EOF {
			err = cmp.Or(wrap(end), error(&DecodeError{Err: fmt.Errorf("%w: more after the value", ErrNotTyped)}))
		}
	}
	r.buf = bytes.Buffer{} // hold no reference to b in the pool
	r.dec.Reset(&r.buf)
	readers.Put(r)
	if err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// readItem reads an object of attribute values; JSON null is an empty item.
func readItem(d *jsontext.Decoder) (map[string]types.AttributeValue, error) {
	if d.PeekKind() == 'n' {
		_, err := d.ReadToken()
		return map[string]types.AttributeValue{}, wrap(err)
	}
	return readMap(d)
}

// readMap reads an object of attribute values.
func readMap(d *jsontext.Decoder) (map[string]types.AttributeValue, error) {
	if err := openObject(d, "an item"); err != nil {
		return nil, err
	}
	item := map[string]types.AttributeValue{}
	for d.PeekKind() != '}' {
		tok, err := d.ReadToken() // a name: the decoder checks the syntax
		if err != nil {
			return nil, wrap(err)
		}
		name := tok.String()
		v, err := readValue(d)
		if err != nil {
			return nil, at(name, err)
		}
		item[name] = v
	}
	_, err := d.ReadToken()
	return item, wrap(err)
}

// readValue reads one value, which must not be null: an object of one type
// descriptor (repeated, the last counts).
func readValue(d *jsontext.Decoder) (types.AttributeValue, error) {
	if d.PeekKind() == 'n' {
		if _, err := d.ReadToken(); err != nil {
			return nil, wrap(err)
		}
		return nil, &DecodeError{Err: ErrNull}
	}
	if err := openObject(d, "a value"); err != nil {
		return nil, err
	}
	var v types.AttributeValue
	var tag string
	for d.PeekKind() != '}' {
		tok, err := d.ReadToken()
		if err != nil {
			return nil, wrap(err)
		}
		t := tok.String()
		if tag != "" && t != tag {
			return nil, &DecodeError{Err: fmt.Errorf("%w: want one type descriptor, got %s and %s", ErrNotTyped, tag, t)}
		}
		tag = t
		if v, err = readTagged(d, tag); err != nil {
			return nil, err
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, wrap(err)
	}
	if v == nil {
		return nil, &DecodeError{Err: fmt.Errorf("%w: want one type descriptor (S, N, B, BOOL, NULL, L, M, SS, NS, BS), got none", ErrNotTyped)}
	}
	return v, nil
}

// readTagged reads the body of a value of type descriptor tag.
func readTagged(d *jsontext.Decoder, tag string) (types.AttributeValue, error) {
	switch tag {
	case "S", "N", "B":
		s, err := readString(d, tag)
		if err != nil {
			return nil, err
		}
		switch tag {
		case "S":
			return &types.AttributeValueMemberS{Value: s}, nil
		case "N":
			return &types.AttributeValueMemberN{Value: s}, nil
		}
		v, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, &DecodeError{Err: err}
		}
		return &types.AttributeValueMemberB{Value: v}, nil
	case "BOOL":
		if k := d.PeekKind(); k != 't' && k != 'f' {
			return nil, kindError(d, tag, "true or false")
		}
		tok, err := d.ReadToken()
		if err != nil {
			return nil, wrap(err)
		}
		return &types.AttributeValueMemberBOOL{Value: tok.Bool()}, nil
	case "NULL":
		return &types.AttributeValueMemberNULL{Value: true}, wrap(d.SkipValue())
	case "L":
		l := []types.AttributeValue{}
		err := readArray(d, tag, func(i int) error {
			v, err := readValue(d)
			l = append(l, v)
			return err
		})
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberL{Value: l}, nil
	case "M":
		m, err := readMap(d)
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	case "SS", "NS", "BS":
		return readSet(d, tag)
	}
	return nil, &DecodeError{Err: fmt.Errorf("%w: unknown type descriptor %q", ErrNotTyped, tag)}
}

// readSet reads the array of strings of an SS, NS or BS.
func readSet(d *jsontext.Decoder, tag string) (types.AttributeValue, error) {
	ss := []string{}
	err := readArray(d, tag, func(int) error {
		s, err := readString(d, tag+" member")
		ss = append(ss, s)
		return err
	})
	if err != nil {
		return nil, err
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

// readArray reads an array as the body of tag, calling elem for each element
// (its index) to read it; elem's errors are placed at their index.
func readArray(d *jsontext.Decoder, tag string, elem func(i int) error) error {
	if d.PeekKind() != '[' {
		return kindError(d, tag, "an array")
	}
	if _, err := d.ReadToken(); err != nil {
		return wrap(err)
	}
	for i := 0; d.PeekKind() != ']'; i++ {
		if err := elem(i); err != nil {
			return at("["+strconv.Itoa(i)+"]", err)
		}
	}
	_, err := d.ReadToken()
	return wrap(err)
}

// readString reads a string, the body of what.
func readString(d *jsontext.Decoder, what string) (string, error) {
	if d.PeekKind() != '"' {
		return "", kindError(d, what, "a string")
	}
	tok, err := d.ReadToken()
	if err != nil {
		return "", wrap(err)
	}
	return tok.String(), nil
}

// openObject reads the '{' that begins what; a *DecodeError if the next
// value is not an object.
func openObject(d *jsontext.Decoder, what string) error {
	if d.PeekKind() != '{' {
		return kindError(d, what, "an object")
	}
	_, err := d.ReadToken()
	return wrap(err)
}

// kindError is the error of a body of what that is not want: the decoder's
// syntax error where the next value is not JSON, ErrNotTyped otherwise.
func kindError(d *jsontext.Decoder, what, want string) error {
	got := d.PeekKind()
	if got == 0 { // invalid: ReadToken says why
		_, err := d.ReadToken()
		return wrap(cmp.Or(err, io.ErrUnexpectedEOF))
	}
	return &DecodeError{Err: fmt.Errorf("%w: %s wants %s, got %s", ErrNotTyped, what, want, kindName(got))}
}

// kindName names a JSON kind as a person would.
func kindName(k jsontext.Kind) string {
	switch k {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "nothing"
}

// wrap makes a decoder's error a *DecodeError; nil stays nil.
func wrap(err error) error {
	if err == nil {
		return nil
	}
	return &DecodeError{Err: err}
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
