package ddbjson

import (
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Canonical returns item as DynamoDB JSON in its canonical form, so that
// two items are equal exactly when their canonical forms are equal byte
// for byte: {"attr":{"S":"…"},…} with attribute names and map keys in byte
// order, set members sorted (a binary set by the members' base64 text),
// lists in their order, and every string (names included) escaped as
// encoding/json.Marshal escapes it. Numbers are compared as their text,
// which is DynamoDB's and the transform's canonical decimal text. A value
// of a type it does not know (nil, *types.UnknownUnionMember) is written
// as null, so Canonical never fails; DecodeItem refuses that null.
//
// It is what verify compares, hashes into its journal and reports as an
// item's before and after, so its bytes are a format: change them and
// journals and reports written before no longer match.
func Canonical(item map[string]types.AttributeValue) []byte {
	b, _ := appendMap(nil, item, canonical) // the canonical form never fails
	return b
}

// CanonicalValue returns one attribute value in Canonical's form:
// {"SS":["a","b"]}; null for nil or a type it does not know.
func CanonicalValue(v types.AttributeValue) []byte {
	b, _ := appendValue(nil, v, canonical) // the canonical form never fails
	return b
}

// htmlSafe is the ASCII bytes encoding/json writes as they are, with its
// HTML escaping on: all but control characters, '"', '\\', '<', '>' and
// '&'.
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendCanonicalString appends s as a JSON string exactly as
// encoding/json.Marshal writes it (TestCanonicalStringIsEncodingJSON and
// FuzzCanonicalString hold it to that): short escapes for \b, \f, \n, \r
// and \t, \u00XX for the other control characters and for <, > and &,
// \ufffd for each byte of invalid UTF-8, \u2028 and \u2029.
func appendCanonicalString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if htmlSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
