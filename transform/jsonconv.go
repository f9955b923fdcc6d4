package transform

import (
	"bytes"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/go-json-experiment/json/jsontext"
)

// jsonScratch is what a Builder reuses to convert JSON text.
type jsonScratch struct {
	r   strings.Reader
	dec *jsontext.Decoder
	// vals are the elements of the arrays being converted, innermost last.
	vals []types.AttributeValue
	tmp  []byte
}

// jsonOptions: RFC 8259, strict UTF-8 (jsonAttr rejects the rest); the last of
// duplicate names wins, as in jsonAttr.
var jsonOptions = jsontext.AllowDuplicateNames(true)

// fromJSON converts JSON text as jsonAttr does (same value, exact canonical
// numbers), streaming: unescaped names, strings and numbers are substrings of
// s. It returns the nesting depth and size (valueSize), or false for what it
// does not take (invalid JSON or UTF-8, trailing data, an unholdable number),
// left to jsonAttr.
func (b *Builder) fromJSON(s string) (types.AttributeValue, int, int, bool) {
	j := &b.json
	j.r.Reset(s)
	if j.dec == nil {
		j.dec = jsontext.NewDecoder(&j.r, jsonOptions)
	} else {
		j.dec.Reset(&j.r, jsonOptions)
	}
	av, depth, size, ok := b.jsonValue(s)
	if ok && j.dec.PeekKind() != 0 {
		ok = false // another value follows
	}
	if ok {
		_, err := j.dec.ReadToken()
		ok = err == io.EOF // the end, not an error (which would be wrapped)
	}
	if !ok {
		clear(j.vals)
		j.vals = j.vals[:0]
		return nil, 0, 0, false
	}
	return av, depth, size, true
}

// jsonValue converts the decoder's next value, returning its depth and size:
// objects and arrays via jsonObject and jsonArray, scalars here without
// recursion.
func (b *Builder) jsonValue(s string) (types.AttributeValue, int, int, bool) {
	j := &b.json
	switch j.dec.PeekKind() {
	case '{':
		return b.jsonObject(s)
	case '[':
		return b.jsonArray(s)
	case '"':
		raw, err := j.dec.ReadValue()
		if err != nil {
			return nil, 0, 0, false
		}
		start, end := b.jsonSpan(raw)
		if bytes.IndexByte(raw, '\\') < 0 {
			str := s[start+1 : end-1]
			return b.newS(str), 0, len(str), true
		}
		str, ok := b.unquote(raw)
		if !ok {
			return nil, 0, 0, false
		}
		return b.newS(str), 0, len(str), true
	case '0':
		raw, err := j.dec.ReadValue()
		if err != nil {
			return nil, 0, 0, false
		}
		start, end := b.jsonSpan(raw)
		num := s[start:end]
		if !isCanonicalInt(num) {
			if j.tmp, err = appendCanonical(j.tmp[:0], num); err != nil {
				return nil, 0, 0, false
			}
			if string(j.tmp) != num {
				num = string(j.tmp)
			}
		}
		return b.newN(num), 0, numberSize(num), true
	case 't', 'f', 'n':
		raw, err := j.dec.ReadValue()
		if err != nil {
			return nil, 0, 0, false
		}
		switch raw[0] {
		case 't':
			return trueAttr, 0, 1, true
		case 'f':
			return falseAttr, 0, 1, true
		}
		return nullAttr, 0, 1, true
	}
	return nil, 0, 0, false // KindInvalid: an error, read by no one
}

// jsonObject converts the object the decoder is at into an M, as jsonValue.
func (b *Builder) jsonObject(s string) (types.AttributeValue, int, int, bool) {
	d := b.json.dec
	if _, err := d.ReadToken(); err != nil {
		return nil, 0, 0, false
	}
	// The last of duplicate names wins. Up to 8 members fit the map's first
	// allocation.
	m := make(map[string]types.AttributeValue)
	depth, size, dup := 0, 3, false
	for {
		switch d.PeekKind() {
		case '"':
			name, err := d.ReadValue()
			if err != nil {
				return nil, 0, 0, false
			}
			key, ok := b.jsonName(s, name)
			if !ok {
				return nil, 0, 0, false
			}
			av, vd, n, ok := b.jsonValue(s)
			if !ok {
				return nil, 0, 0, false
			}
			before := len(m)
			m[key] = av
			dup = dup || len(m) == before
			depth, size = max(depth, vd), size+1+len(key)+n
		case '}':
			if _, err := d.ReadToken(); err != nil {
				return nil, 0, 0, false
			}
			av := b.m.one()
			av.Value = m
			if dup {
				// A value replaced: measure what is left.
				return av, nestingDepth(av), valueSize(av), true
			}
			return av, depth + 1, size, true
		default:
			return nil, 0, 0, false
		}
	}
}

// jsonArray converts the current array into an L; its elements wait in
// b.json.vals until counted.
func (b *Builder) jsonArray(s string) (types.AttributeValue, int, int, bool) {
	j := &b.json
	d := j.dec
	if _, err := d.ReadToken(); err != nil {
		return nil, 0, 0, false
	}
	base, depth, size := len(j.vals), 0, 3
	for d.PeekKind() != ']' {
		av, vd, n, ok := b.jsonValue(s)
		if !ok {
			return nil, 0, 0, false
		}
		j.vals = append(j.vals, av)
		depth, size = max(depth, vd), size+1+n
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, 0, 0, false
	}
	list := b.newList(len(j.vals) - base)
	copy(list, j.vals[base:])
	clear(j.vals[base:]) // drop references to values handed out
	j.vals = j.vals[:base]
	av := b.l.one()
	av.Value = list
	return av, depth + 1, size, true
}

// jsonSpan returns where in the text the value just read (raw) is.
func (b *Builder) jsonSpan(raw []byte) (start, end int) {
	end = int(b.json.dec.InputOffset())
	return end - len(raw), end
}

// jsonName returns the member name just read; a substring of s without escapes.
func (b *Builder) jsonName(s string, raw []byte) (string, bool) {
	start, end := b.jsonSpan(raw)
	if bytes.IndexByte(raw, '\\') < 0 {
		return s[start+1 : end-1], true
	}
	return b.unquote(raw)
}

// unquote returns the text of a JSON string with escapes (raw, quoted).
func (b *Builder) unquote(raw []byte) (string, bool) {
	var err error
	if b.json.tmp, err = jsontext.AppendUnquote(b.json.tmp[:0], raw); err != nil {
		return "", false
	}
	return string(b.json.tmp), true
}
