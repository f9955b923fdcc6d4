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
	// vals are the elements of the arrays being converted, innermost
	// last.
	vals []types.AttributeValue
	tmp  []byte
}

// jsonOptions: RFC 8259 JSON, strict UTF-8 (text that is not, and a lone
// surrogate escape, are left to jsonAttr, which rejects them); a duplicate
// name is not an error, and its last value wins, as with jsonAttr.
var jsonOptions = jsontext.AllowDuplicateNames(true)

// fromJSON converts JSON text as jsonAttr does — the same attribute value,
// numbers exact and canonical, never through float64 — streaming it from
// the text: names, strings and numbers without escapes are substrings of s.
// It returns the value's nesting depth and size (as valueSize counts it),
// or false for text it does not take: invalid JSON, trailing data, invalid
// UTF-8, a number DynamoDB cannot hold. jsonAttr then gives the result or
// the error.
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

// jsonValue converts the decoder's next value, s being the whole text, and
// returns its nesting depth and size. Objects and arrays are converted by
// jsonObject and jsonArray; the scalars, the leaves of the recursion, here,
// without another call: a string or a number without escapes is a
// substring of s.
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
	// Members go straight into the map: the last of duplicate names
	// wins. Up to 8 members fit the map's first allocation.
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

// jsonArray converts the array the decoder is at into an L, as jsonValue.
// Its elements wait in b.json.vals (after those of the arrays around it)
// until their number is known.
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

// jsonName returns the object member name just read (raw, quoted): a
// substring of s when it has no escapes.
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
