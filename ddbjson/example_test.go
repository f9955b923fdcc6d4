package ddbjson_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
)

func ExampleAppendLine() {
	item := map[string]types.AttributeValue{
		"PK":   &types.AttributeValueMemberS{Value: "USER#1"},
		"age":  &types.AttributeValueMemberN{Value: "36"},
		"tags": &types.AttributeValueMemberSS{Value: []string{"b", "a"}},
		"note": &types.AttributeValueMemberS{Value: "<ok>\n"},
	}
	line, err := ddbjson.AppendLine(nil, item)
	if err != nil {
		panic(err)
	}
	os.Stdout.Write(line)
	fmt.Printf("%s\n", ddbjson.Canonical(item))
	// Output:
	// {"Item":{"PK":{"S":"USER#1"},"age":{"N":"36"},"note":{"S":"<ok>\u000a"},"tags":{"SS":["b","a"]}}}
	// {"PK":{"S":"USER#1"},"age":{"N":"36"},"note":{"S":"\u003cok\u003e\n"},"tags":{"SS":["a","b"]}}
}

func ExampleDecodeLine() {
	item, err := ddbjson.DecodeLine([]byte(`{"Item":{"PK":{"S":"USER#1"},"blob":{"B":"AAH/"}}}`))
	fmt.Println(item["blob"].(*types.AttributeValueMemberB).Value, err) //nolint:staticcheck // QF1010: the bytes themselves are the example's output

	_, err = ddbjson.DecodeLine([]byte(`{"Item":{"PK":{"S":"USER#1"},"meta":{"M":{"tags":{"L":[{"S":"x"},{"Q":"y"}]}}}}}`))
	var de *ddbjson.DecodeError
	fmt.Println(errors.As(err, &de), de.Path, errors.Is(err, ddbjson.ErrNotTyped))
	fmt.Println(err)
	// Output:
	// [0 1 255] <nil>
	// true meta.tags[1] true
	// ddbjson: meta.tags[1]: not DynamoDB JSON: unknown type descriptor "Q"
}
