package ddbjson

import (
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Canonical returns item as canonical DynamoDB JSON: two items are equal
// exactly when these bytes are. Names and map keys in byte order, set members
// sorted (binary by base64), lists in order, strings escaped as encoding/json
// does, numbers as their canonical text. Unknown value types are written as
// null, so it never fails. Verify compares, hashes and reports it: the bytes
// are a format, and changing them breaks existing journals and reports.
func Canonical(item map[string]types.AttributeValue) []byte {
	b, _ := appendMap(nil, item, canonical) // the canonical form never fails
	return b
}

// CanonicalValue returns one value in Canonical's form; null for nil, unknown.
func CanonicalValue(v types.AttributeValue) []byte {
	b, _ := appendValue(nil, v, canonical) // the canonical form never fails
	return b
}

// htmlSafe is the ASCII bytes encoding/json, escaping HTML, writes unescaped.
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendCanonicalString appends s exactly as encoding/json.Marshal writes it
// (TestCanonicalStringIsEncodingJSON and FuzzCanonicalString check).
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
