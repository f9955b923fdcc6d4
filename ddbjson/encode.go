package ddbjson

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// AppendLine appends item to b as one line of the S3 import format,
// {"Item":{"attr":{"S":"…"},…}} and a newline, and returns the extended
// buffer. Attributes (and map keys, at every depth) come in byte order of
// their names: a JSON object's members have no order, but lines alike
// then repeat each other, which gzip compresses in fewer and longer
// matches, faster. Binary values are base64 (standard alphabet, padded),
// numbers their decimal text as given, BOOL true or false, NULL true;
// strings escape only what JSON requires ('"', '\\' and control
// characters, as \u00XX) and are otherwise copied as they are (DynamoDB
// holds strings in UTF-8; invalid UTF-8 would be copied too, and read
// back as U+FFFD).
//
// It fails, with b extended by part of the line, on a value of a type it
// does not know (nil, or the SDK's *types.UnknownUnionMember); a caller
// that keeps b must cut it back.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/S3DataImport.Format.html
func AppendLine(b []byte, item map[string]types.AttributeValue) ([]byte, error) {
	b = append(b, `{"Item":`...)
	b, err := appendMap(b, item, line)
	if err != nil {
		return b, err
	}
	return append(b, "}\n"...), nil
}

// AppendItem appends item as AppendLine does, but as the plain object
// {"attr":{"S":"…"},…}, with no "Item" wrapper and no newline. It fails
// as AppendLine does.
func AppendItem(b []byte, item map[string]types.AttributeValue) ([]byte, error) {
	return appendMap(b, item, line)
}

// AppendValue appends one attribute value as AppendLine writes it, the
// object of its type descriptor: {"S":"Ada"}, {"L":[{"N":"1"}]}. It fails
// as AppendLine does.
func AppendValue(b []byte, v types.AttributeValue) ([]byte, error) {
	return appendValue(b, v, line)
}

// LineBytes is the size of item's line (AppendLine), newline included:
// its share of an export before compression; 0 if AppendLine fails. Safe
// for concurrent use; it encodes into a pooled buffer, as diff and plan
// call it for every item.
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
	// line is the import format's: sets as given, strings escaped only
	// as JSON requires, an unknown value type an error.
	line form = false
	// canonical is Canonical's: sets sorted, strings escaped as
	// encoding/json escapes them, an unknown value type null.
	canonical form = true
)

// appendString appends s as a JSON string in form f.
func (f form) appendString(b []byte, s string) []byte {
	if f == canonical {
		return appendCanonicalString(b, s)
	}
	return appendString(b, s)
}

// attr is one attribute of a map being encoded.
type attr struct {
	name  string
	value types.AttributeValue
}

func appendMap(b []byte, m map[string]types.AttributeValue, f form) ([]byte, error) {
	// Name and value together, on the stack, in one pass over the map:
	// no second lookup per attribute.
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

// sortedAttrs appends m's attributes to attrs, in byte order of their
// names, and returns attrs.
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

// nameLess is x < y, deciding inline on the first bytes when they differ
// (as they mostly do between an item's attribute names).
func nameLess(x, y string) bool {
	if len(x) > 0 && len(y) > 0 && x[0] != y[0] {
		return x[0] < y[0]
	}
	return x < y
}

// appendValue is the one switch over the attribute value types that
// writes DynamoDB JSON, in either form.
func appendValue(b []byte, v types.AttributeValue, f form) ([]byte, error) {
	var err error
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		b = f.appendString(append(b, `{"S":`...), v.Value)
	case *types.AttributeValueMemberN:
		// A number's text (digits, sign, point, exponent) needs no
		// escape, as the transform's canonical numbers have it.
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

// appendBase64 appends p as a JSON string of its base64: its alphabet
// needs no escape.
func appendBase64(b, p []byte) []byte {
	b = base64.StdEncoding.AppendEncode(append(b, '"'), p)
	return append(b, '"')
}

// appendStrings appends a string or number set, its members sorted in
// the canonical form (DynamoDB sets have no order; the set itself is
// left as it is).
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

// appendBinaries appends a binary set as base64 strings; the canonical
// form sorts them by their base64 text.
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

// appendString appends s as a JSON string, the line's way: strconv's
// quoting escapes control characters as \x.., which JSON has not, so they
// and the other JSON escapes are written here. A string that needs no
// escape (nearly every one) is found so eight bytes at a time and copied
// whole.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	if !needsEscape(s) {
		b = append(b, s...)
		return append(b, '"')
	}
	return append(appendEscaped(b, s), '"')
}

// appendStringValue appends the rest of an S or N value's object, whose
// opening ({"S":") is written: s as the inside of a JSON string (as
// appendString), then "}.
func appendStringValue(b []byte, s string) []byte {
	if !needsEscape(s) {
		b = append(b, s...)
		return append(b, '"', '}')
	}
	return append(appendEscaped(b, s), '"', '}')
}

// appendEscaped appends s, which needs escaping, as the inside of a JSON
// string: runs without escapes are copied whole.
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

// escaped marks the bytes JSON escapes in a string: the control
// characters, '"' and '\\'.
var escaped = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// needsEscape reports whether s holds a byte JSON escapes (escaped). It
// tests a word of 8 bytes at once: a byte below 0x20, or equal to '"' or
// '\\' once xored with it, sets its top bit in (x - 0x01…) &^ x & 0x80…
// (the zero-byte test of "Bit Twiddling Hacks", exact as to whether a
// word has one). A string of 8 bytes or more is tested word by word, the
// last overlapping the one before, the words' tests or'ed rather than
// branched on; a shorter one as one word of its bytes, overlapping, and
// of 'a's for those it lacks.
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

// load32 is the first 4 bytes of s, at least 4 long, as a little-endian
// word (one load, as the compiler combines them).
func load32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// load64 is the first 8 bytes of s, at least 8 long, as a little-endian
// word (one load, as the compiler combines them).
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
