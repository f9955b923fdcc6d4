package draft

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// jsonObject is a JSON object with its keys in file order (encoding/json's
// maps lose it, and a design's entities are listed in order). Dups are the
// keys written more than once, each with the value seen last kept, as a
// JSON decoder that keeps one does.
type jsonObject struct {
	Keys []string
	Vals map[string]any
	Dups []string
}

// get returns the value of key k and whether the object has it.
func (o *jsonObject) get(k string) (any, bool) {
	v, ok := o.Vals[k]
	return v, ok
}

// decodeOrdered reads one JSON document into a tree of *jsonObject,
// []any, string, json.Number, bool and nil. An error is a syntax error,
// with its byte offset, or trailing data after the document.
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the JSON document at byte %d", dec.InputOffset())
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		o := &jsonObject{Vals: map[string]any{}}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key := k.(string)
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			if _, dup := o.Vals[key]; dup {
				o.Dups = append(o.Dups, key)
			} else {
				o.Keys = append(o.Keys, key)
			}
			o.Vals[key] = v
		}
		_, err := dec.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token()
		return a, err
	}
	return t, nil
}

// jsonKind names a JSON value's kind: object, array, string, integer,
// number, boolean or null.
func jsonKind(v any) string {
	switch x := v.(type) {
	case *jsonObject:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "an integer"
		}
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// objects is the objects of array x, for walks that leave mistakes to the
// validator.
func objects(x any) []*jsonObject {
	list, _ := x.([]any)
	var out []*jsonObject
	for _, e := range list {
		if o, ok := e.(*jsonObject); ok {
			out = append(out, o)
		}
	}
	return out
}

// str returns v as a string, and whether it is one.
func str(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok
}

// integer returns v as an int, and whether it is a JSON integer.
func integer(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return int(i), err == nil
}
