package verify

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ParseCanonical decodes an item's DynamoDB JSON, as Canonical writes it
// (and as ChangedItem.Before and After hold it), back into attribute
// values. It is Canonical's inverse up to the order of set members, which
// Canonical sorts. It fails on JSON that is not an object of DynamoDB
// JSON values.
func ParseCanonical(b []byte) (map[string]types.AttributeValue, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("verify: item: %w", err)
	}
	item := make(map[string]types.AttributeValue, len(raw))
	for name, r := range raw {
		v, err := ParseCanonicalValue(r)
		if err != nil {
			return nil, fmt.Errorf("verify: attribute %q: %w", name, err)
		}
		if v == nil {
			return nil, fmt.Errorf("verify: attribute %q: null", name)
		}
		item[name] = v
	}
	return item, nil
}

// ParseCanonicalValue decodes one attribute value's DynamoDB JSON
// (`{"S":"Ada"}`), as an AttrChange's Before or After holds it. JSON null,
// an absent attribute, gives nil and no error.
func ParseCanonicalValue(b []byte) (types.AttributeValue, error) {
	if len(bytes.TrimSpace(b)) == 0 || string(bytes.TrimSpace(b)) == "null" {
		return nil, nil
	}
	var tagged map[string]json.RawMessage
	if err := json.Unmarshal(b, &tagged); err != nil {
		return nil, err
	}
	if len(tagged) != 1 {
		return nil, fmt.Errorf("want one type tag (S, N, B, BOOL, NULL, L, M, SS, NS, BS), got %d", len(tagged))
	}
	for tag, body := range tagged {
		return parseTagged(tag, body)
	}
	return nil, nil // not reached
}

// parseTagged decodes the body of a DynamoDB JSON value of type tag.
func parseTagged(tag string, body json.RawMessage) (types.AttributeValue, error) {
	var err error
	switch tag {
	case "S", "N", "B":
		var s string
		if err = json.Unmarshal(body, &s); err != nil {
			break
		}
		switch tag {
		case "S":
			return &types.AttributeValueMemberS{Value: s}, nil
		case "N":
			return &types.AttributeValueMemberN{Value: s}, nil
		}
		v, e := base64.StdEncoding.DecodeString(s)
		return &types.AttributeValueMemberB{Value: v}, e
	case "BOOL":
		var v bool
		err = json.Unmarshal(body, &v)
		return &types.AttributeValueMemberBOOL{Value: v}, err
	case "NULL":
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case "L":
		return parseList(body)
	case "M":
		m, e := ParseCanonical(body)
		return &types.AttributeValueMemberM{Value: m}, e
	case "SS", "NS", "BS":
		return parseSet(tag, body)
	default:
		err = fmt.Errorf("unknown type tag %q", tag)
	}
	return nil, err
}

func parseList(body json.RawMessage) (types.AttributeValue, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(body, &elems); err != nil {
		return nil, err
	}
	l := make([]types.AttributeValue, len(elems))
	for i, e := range elems {
		v, err := ParseCanonicalValue(e)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		if v == nil {
			return nil, fmt.Errorf("element %d: null", i)
		}
		l[i] = v
	}
	return &types.AttributeValueMemberL{Value: l}, nil
}

func parseSet(tag string, body json.RawMessage) (types.AttributeValue, error) {
	var ss []string
	if err := json.Unmarshal(body, &ss); err != nil {
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
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("member %d: %w", i, err)
		}
		bs[i] = b
	}
	return &types.AttributeValueMemberBS{Value: bs}, nil
}
