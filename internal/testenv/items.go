package testenv

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// CanonicalItem renders an item as DynamoDB JSON ({"attr":{"S":"x"}}) with
// sorted keys, so items compare as strings.
func CanonicalItem(item map[string]types.AttributeValue) string {
	b, err := json.Marshal(plainMap(item))
	if err != nil {
		panic(err)
	}
	return string(b)
}

// CanonicalValue renders one attribute value as DynamoDB JSON.
func CanonicalValue(av types.AttributeValue) string {
	b, err := json.Marshal(plain(av))
	if err != nil {
		panic(err)
	}
	return string(b)
}

// CanonicalItems renders each item with CanonicalItem.
func CanonicalItems(items []map[string]types.AttributeValue) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = CanonicalItem(it)
	}
	return out
}

func plainMap(m map[string]types.AttributeValue) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = plain(v)
	}
	return out
}

func plain(av types.AttributeValue) any {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *types.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *types.AttributeValueMemberB:
		return map[string]any{"B": v.Value}
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": v.Value}
	case *types.AttributeValueMemberL:
		l := make([]any, len(v.Value))
		for i, e := range v.Value {
			l[i] = plain(e)
		}
		return map[string]any{"L": l}
	case *types.AttributeValueMemberM:
		return map[string]any{"M": plainMap(v.Value)}
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}
	case *types.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}
	case *types.AttributeValueMemberBS:
		return map[string]any{"BS": v.Value}
	}
	panic(fmt.Sprintf("unknown attribute value %T", av))
}
