package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
)

// A value is an attribute value as reports show it: text and DynamoDB type
// (`"Ada"` S, 42 N, true BOOL, base64 B), lists, maps and sets nested; or
// absent.
type value struct {
	// Kind is "absent", "scalar", "set", "list" or "map".
	Kind string
	// Type is DynamoDB's type descriptor; Title names it ("string").
	Type, Title string
	// Text is a scalar's or set member's: a JSON-quoted string, a DynamoDB
	// number, base64 binary.
	Text   string
	Elems  []value // a list's elements or a set's members, in order
	Fields []field // a map's entries, by name
}

// field is one entry of a map value.
type field struct {
	Name  string
	Value value
}

// typeTitles names DynamoDB's type descriptors.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html#HowItWorks.DataTypes
var typeTitles = map[string]string{"S": "string", "N": "number", "B": "binary, in base64", "BOOL": "boolean", "NULL": "null",
	"L": "list", "M": "map", "SS": "string set", "NS": "number set", "BS": "binary set, in base64"}

var absent = value{Kind: "absent"}

// parseValue reads an attribute value's DynamoDB JSON (null is absent);
// unreadable JSON shows as its text, type "JSON".
func parseValue(raw json.RawMessage) value {
	av, err := ddbjson.DecodeValue(raw)
	if err != nil {
		return value{Kind: "scalar", Type: "JSON", Title: "not DynamoDB JSON", Text: string(raw)}
	}
	return toValue(av)
}

// parseItem reads an item's DynamoDB JSON; false when it cannot.
func parseItem(raw json.RawMessage) (map[string]value, bool) {
	item, err := ddbjson.DecodeItem(raw)
	if err != nil {
		return nil, false
	}
	out := make(map[string]value, len(item))
	for k, av := range item {
		out[k] = toValue(av)
	}
	return out, true
}

// toValue converts av (nil: absent).
func toValue(av types.AttributeValue) value {
	scalar := func(typ, text string) value {
		return value{Kind: "scalar", Type: typ, Title: typeTitles[typ], Text: text}
	}
	set := func(typ string, members []string, quote bool) value {
		v := value{Kind: "set", Type: typ, Title: typeTitles[typ]}
		for _, m := range members {
			if quote {
				m = quoted(m)
			}
			v.Elems = append(v.Elems, value{Kind: "scalar", Text: m})
		}
		return v
	}
	switch av := av.(type) {
	case *types.AttributeValueMemberS:
		return scalar("S", quoted(av.Value))
	case *types.AttributeValueMemberN:
		return scalar("N", av.Value)
	case *types.AttributeValueMemberB:
		return scalar("B", base64.StdEncoding.EncodeToString(av.Value))
	case *types.AttributeValueMemberBOOL:
		if av.Value {
			return scalar("BOOL", "true")
		}
		return scalar("BOOL", "false")
	case *types.AttributeValueMemberNULL:
		return scalar("NULL", "null")
	case *types.AttributeValueMemberSS:
		return set("SS", av.Value, true)
	case *types.AttributeValueMemberNS:
		return set("NS", av.Value, false)
	case *types.AttributeValueMemberBS:
		enc := make([]string, len(av.Value))
		for i, b := range av.Value {
			enc[i] = base64.StdEncoding.EncodeToString(b)
		}
		return set("BS", enc, false)
	case *types.AttributeValueMemberL:
		v := value{Kind: "list", Type: "L", Title: typeTitles["L"]}
		for _, e := range av.Value {
			v.Elems = append(v.Elems, toValue(e))
		}
		return v
	case *types.AttributeValueMemberM:
		v := value{Kind: "map", Type: "M", Title: typeTitles["M"]}
		for _, k := range slices.Sorted(maps.Keys(av.Value)) {
			v.Fields = append(v.Fields, field{Name: k, Value: toValue(av.Value[k])})
		}
		return v
	}
	return absent
}

// quoted is s as a JSON string, with <, > and & as they are.
func quoted(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// String is v on one line, as text and markdown print it: `"Ada" S`, `[1 N, "x"
// S] L`, `{name: "x" S} M`, `{"a", "b"} SS`, or "absent".
func (v value) String() string {
	var b strings.Builder
	v.write(&b)
	return b.String()
}

func (v value) write(b *strings.Builder) {
	switch v.Kind {
	case "absent":
		b.WriteString("absent")
		return
	case "scalar":
		b.WriteString(v.Text)
	case "set":
		b.WriteByte('{')
		for i, e := range v.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(e.Text)
		}
		b.WriteByte('}')
	case "list":
		b.WriteByte('[')
		for i, e := range v.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			e.write(b)
		}
		b.WriteByte(']')
	case "map":
		b.WriteByte('{')
		for i, f := range v.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f.Name + ": ")
			f.Value.write(b)
		}
		b.WriteByte('}')
	}
	b.WriteString(" " + v.Type)
}
