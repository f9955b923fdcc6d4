package testenv

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
)

// CanonicalItem renders an item in ddbjson's canonical form (names and set
// members sorted), so equal items are equal strings.
func CanonicalItem(item map[string]types.AttributeValue) string {
	return string(ddbjson.Canonical(item))
}

// CanonicalValue renders one attribute value in ddbjson's canonical form.
func CanonicalValue(av types.AttributeValue) string {
	return string(ddbjson.CanonicalValue(av))
}

// CanonicalItems renders each item with CanonicalItem.
func CanonicalItems(items []map[string]types.AttributeValue) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = CanonicalItem(it)
	}
	return out
}
