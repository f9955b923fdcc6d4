package export

import (
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DecodeItem decodes an item in DynamoDB JSON ({"attr": {"S": "…"}, …}),
// as a report of failed items gives it.
func DecodeItem(raw json.RawMessage) (map[string]types.AttributeValue, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	out := make(map[string]types.AttributeValue, len(m))
	for k, v := range m {
		av, err := decodeValue(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

func decodeValue(raw json.RawMessage) (types.AttributeValue, error) {
	var tagged map[string]json.RawMessage
	if err := json.Unmarshal(raw, &tagged); err != nil || len(tagged) != 1 {
		return nil, fmt.Errorf("not one typed value: %.80s", raw)
	}
	for tag, v := range tagged {
		switch tag {
		case "S", "N", "B":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, err
			}
			switch tag {
			case "S":
				return &types.AttributeValueMemberS{Value: s}, nil
			case "N":
				return &types.AttributeValueMemberN{Value: s}, nil
			}
			b, err := base64.StdEncoding.DecodeString(s)
			return &types.AttributeValueMemberB{Value: b}, err
		case "BOOL":
			b, err := strconv.ParseBool(string(v))
			return &types.AttributeValueMemberBOOL{Value: b}, err
		case "NULL":
			return &types.AttributeValueMemberNULL{Value: true}, nil
		case "SS", "NS":
			var ss []string
			if err := json.Unmarshal(v, &ss); err != nil {
				return nil, err
			}
			if tag == "SS" {
				return &types.AttributeValueMemberSS{Value: ss}, nil
			}
			return &types.AttributeValueMemberNS{Value: ss}, nil
		case "BS":
			var ss []string
			if err := json.Unmarshal(v, &ss); err != nil {
				return nil, err
			}
			bs := make([][]byte, len(ss))
			for i, s := range ss {
				var err error
				if bs[i], err = base64.StdEncoding.DecodeString(s); err != nil {
					return nil, err
				}
			}
			return &types.AttributeValueMemberBS{Value: bs}, nil
		case "L":
			var l []json.RawMessage
			if err := json.Unmarshal(v, &l); err != nil {
				return nil, err
			}
			out := make([]types.AttributeValue, len(l))
			for i, x := range l {
				var err error
				if out[i], err = decodeValue(x); err != nil {
					return nil, err
				}
			}
			return &types.AttributeValueMemberL{Value: out}, nil
		case "M":
			m, err := DecodeItem(v)
			return &types.AttributeValueMemberM{Value: m}, err
		}
		return nil, fmt.Errorf("unknown type %q", tag)
	}
	return nil, nil
}

func newGzipReader(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }
