package verify

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Canonical renders an item as DynamoDB JSON with its attribute names (and
// map keys) sorted, so that two items are equal exactly when their
// canonical forms are equal byte for byte. Numbers are compared as the
// text DynamoDB returns, which is the canonical decimal text pg2dynamo
// writes.
func Canonical(item map[string]types.AttributeValue) []byte {
	var b bytes.Buffer
	writeMap(&b, item)
	return b.Bytes()
}

func writeMap(b *bytes.Buffer, m map[string]types.AttributeValue) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	b.WriteByte('{')
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, k)
		b.WriteByte(':')
		writeValue(b, m[k])
	}
	b.WriteByte('}')
}

func writeString(b *bytes.Buffer, s string) {
	out, _ := json.Marshal(s) // strings always marshal
	b.Write(out)
}

func writeValue(b *bytes.Buffer, v types.AttributeValue) {
	tagged := func(tag string, body func()) {
		b.WriteString(`{"` + tag + `":`)
		body()
		b.WriteByte('}')
	}
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		tagged("S", func() { writeString(b, v.Value) })
	case *types.AttributeValueMemberN:
		tagged("N", func() { writeString(b, v.Value) })
	case *types.AttributeValueMemberB:
		tagged("B", func() { writeString(b, base64.StdEncoding.EncodeToString(v.Value)) })
	case *types.AttributeValueMemberBOOL:
		tagged("BOOL", func() { b.WriteString(strconv.FormatBool(v.Value)) })
	case *types.AttributeValueMemberNULL:
		tagged("NULL", func() { b.WriteString("true") })
	case *types.AttributeValueMemberL:
		tagged("L", func() {
			b.WriteByte('[')
			for i, e := range v.Value {
				if i > 0 {
					b.WriteByte(',')
				}
				writeValue(b, e)
			}
			b.WriteByte(']')
		})
	case *types.AttributeValueMemberM:
		tagged("M", func() { writeMap(b, v.Value) })
	case *types.AttributeValueMemberSS:
		tagged("SS", func() { writeStrings(b, v.Value) })
	case *types.AttributeValueMemberNS:
		tagged("NS", func() { writeStrings(b, v.Value) })
	case *types.AttributeValueMemberBS:
		enc := make([]string, len(v.Value))
		for i, x := range v.Value {
			enc[i] = base64.StdEncoding.EncodeToString(x)
		}
		tagged("BS", func() { writeStrings(b, enc) })
	default:
		b.WriteString("null")
	}
}

// writeStrings writes a set sorted: DynamoDB sets have no order.
func writeStrings(b *bytes.Buffer, ss []string) {
	s := slices.Clone(ss)
	slices.Sort(s)
	b.WriteByte('[')
	for i, x := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, x)
	}
	b.WriteByte(']')
}
