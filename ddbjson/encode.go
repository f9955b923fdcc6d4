package ddbjson

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// AppendLine appends item to b as one S3 import line, {"Item":{…}} and a
// newline: attributes in byte order (alike lines compress better), padded
// standard base64, numbers as given, strings escaping only what JSON
// requires. An unknown value type fails, leaving a partial line in b.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/S3DataImport.Format.html
func AppendLine(b []byte, item map[string]types.AttributeValue) ([]byte, error) {
	b = append(b, `{"Item":`...)
	b, err := appendMap(b, item, line)
	if err != nil {
		return b, err
	}
	return append(b, "}\n"...), nil
}

// AppendItem appends item as AppendLine does, without wrapper and newline.
func AppendItem(b []byte, item map[string]types.AttributeValue) ([]byte, error) {
	return appendMap(b, item, line)
}

// AppendValue appends one attribute value as AppendLine writes it: {"S":"Ada"}.
func AppendValue(b []byte, v types.AttributeValue) ([]byte, error) {
	return appendValue(b, v, line)
}

// LineBytes is the size of item's line, newline included (0 if AppendLine
// fails). Safe for concurrent use; it encodes into a pooled buffer.
func LineBytes(item map[string]types.AttributeValue) int64 {
	bp := lineBufs.Get().(*[]byte)
	b, err := AppendLine((*bp)[:0], item)
	n := int64(len(b))
	*bp = b
	lineBufs.Put(bp)
	if err != nil {
		return 0
	}
	return n
}

var lineBufs = sync.Pool{New: func() any { return new([]byte) }}

// form is which of the two encodings a value is written in.
type form bool

const (
	// line is the import format: sets as given, minimal escapes, unknowns fail.
	line form = false
	// canonical is Canonical's: sets sorted, json escapes, unknown types null.
	canonical form = true
)

func (f form) appendString(b []byte, s string) []byte {
	if f == canonical {
		return appendCanonicalString(b, s)
	}
	return appendString(b, s)
}

type attr struct {
	name  string
	value types.AttributeValue
}

func appendMap(b []byte, m map[string]types.AttributeValue, f form) ([]byte, error) {
	// Name and value together on the stack: no second lookup per attribute.
	var stack [32]attr
	attrs := sortedAttrs(m, stack[:0])
	b = append(b, '{')
	for i, a := range attrs {
		if i > 0 {
			b = append(b, ',')
		}
		b = f.appendString(b, a.name)
		b = append(b, ':')
		var err error
		if b, err = appendValue(b, a.value, f); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// sortedAttrs appends m's attributes to attrs in byte order of their names.
func sortedAttrs(m map[string]types.AttributeValue, attrs []attr) []attr {
	for k, v := range m {
		attrs = append(attrs, attr{k, v})
	}
	// Insertion sort: an item has a few dozen attributes at most.
	for i := 1; i < len(attrs); i++ {
		for j := i; j > 0 && nameLess(attrs[j].name, attrs[j-1].name); j-- {
			attrs[j], attrs[j-1] = attrs[j-1], attrs[j]
		}
	}
	return attrs
}

// nameLess is x < y, deciding inline on differing first bytes (the usual case).
func nameLess(x, y string) bool {
	if len(x) > 0 && len(y) > 0 && x[0] != y[0] {
		return x[0] < y[0]
	}
	return x < y
}

// appendValue is the one switch writing DynamoDB JSON values, in either form.
func appendValue(b []byte, v types.AttributeValue, f form) ([]byte, error) {
	var err error
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		b = f.appendString(append(b, `{"S":`...), v.Value)
	case *types.AttributeValueMemberN:
		// A number's text needs no escape.
		b = f.appendString(append(b, `{"N":`...), v.Value)
	case *types.AttributeValueMemberB:
		b = appendBase64(append(b, `{"B":`...), v.Value)
	case *types.AttributeValueMemberBOOL:
		b = strconv.AppendBool(append(b, `{"BOOL":`...), v.Value)
	case *types.AttributeValueMemberNULL:
		b = append(b, `{"NULL":true`...)
	case *types.AttributeValueMemberSS:
		b = appendStrings(append(b, `{"SS":`...), v.Value, f)
	case *types.AttributeValueMemberNS:
		b = appendStrings(append(b, `{"NS":`...), v.Value, f)
	case *types.AttributeValueMemberBS:
		b = appendBinaries(append(b, `{"BS":`...), v.Value, f)
	case *types.AttributeValueMemberL:
		b = append(b, `{"L":[`...)
		for i, x := range v.Value {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendValue(b, x, f); err != nil {
				return b, err
			}
		}
		b = append(b, ']')
	case *types.AttributeValueMemberM:
		if b, err = appendMap(append(b, `{"M":`...), v.Value, f); err != nil {
			return b, err
		}
	default:
		if f == canonical {
			return append(b, "null"...), nil
		}
		return b, fmt.Errorf("ddbjson: attribute value of type %T", v)
	}
	return append(b, '}'), nil
}

func appendBase64(b, p []byte) []byte {
	b = base64.StdEncoding.AppendEncode(append(b, '"'), p)
	return append(b, '"')
}

// appendStrings appends a string or number set, sorted in canonical form.
func appendStrings(b []byte, ss []string, f form) []byte {
	if f == canonical && !slices.IsSorted(ss) {
		ss = slices.Sorted(slices.Values(ss))
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = f.appendString(b, s)
	}
	return append(b, ']')
}

// appendBinaries appends a binary set as base64, sorted so in canonical form.
func appendBinaries(b []byte, bs [][]byte, f form) []byte {
	if f == canonical {
		enc := make([]string, len(bs))
		for i, x := range bs {
			enc[i] = base64.StdEncoding.EncodeToString(x)
		}
		slices.Sort(enc)
		return appendStrings(b, enc, f)
	}
	b = append(b, '[')
	for i, x := range bs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendBase64(b, x)
	}
	return append(b, ']')
}

const hex = "0123456789abcdef"

// appendString appends s as a JSON string, the line's way (strconv's \x escapes
// are not JSON), copying strings needing no escape whole.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	if !needsEscape(s) {
		b = append(b, s...)
		return append(b, '"')
	}
	return append(appendEscaped(b, s), '"')
}

// appendStringValue appends an S or N value's string and "}, after its opening.
func appendStringValue(b []byte, s string) []byte {
	if !needsEscape(s) {
		b = append(b, s...)
		return append(b, '"', '}')
	}
	return append(appendEscaped(b, s), '"', '}')
}

// appendEscaped appends s's escaped inside, copying runs without escapes whole.
func appendEscaped(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !escaped[c] {
			continue
		}
		b = append(b, s[start:i]...)
		if c < 0x20 {
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		} else {
			b = append(b, '\\', c)
		}
		start = i + 1
	}
	return append(b, s[start:]...)
}

// escaped marks the bytes JSON escapes: control characters, '"' and '\\'.
var escaped = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// needsEscape reports whether s holds a byte JSON escapes, a word of 8 bytes
// at a time: a byte below 0x20, or '"' or '\\' once xored, sets its top bit
// in (x - 0x01…) &^ x & 0x80… (the exact zero-byte test of "Bit Twiddling
// Hacks"). Words overlap at the end; a short string is padded with 'a's.
func needsEscape(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	var x, acc uint64
	switch n := len(s); {
	case n >= 8:
		for i := 0; ; i += 8 {
			if i > n-8 {
				i = n - 8
			}
			x = load64(s[i:])
			q, bs := x^(ones*'"'), x^(ones*'\\')
			acc |= ((x - ones*0x20) | (q - ones) | (bs - ones)) &^ x
			if i == n-8 {
				return acc&highs != 0
			}
		}
	case n >= 4:
		x = uint64(load32(s)) | uint64(load32(s[n-4:]))<<32
	case n > 0:
		x = uint64(s[0]) | uint64(s[n/2])<<8 | uint64(s[n-1])<<16 | 0x6161616161000000 // 'a's
	default:
		return false
	}
	q, bs := x^(ones*'"'), x^(ones*'\\')
	return ((x-ones*0x20)|(q-ones)|(bs-ones))&^x&highs != 0
}

// load32 is s's first 4 bytes as a little-endian word (one load).
func load32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// load64 is s's first 8 bytes as a little-endian word (one load).
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
