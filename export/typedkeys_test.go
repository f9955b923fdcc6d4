package export

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/ddbjson"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// ImportTable creates the key attributes of the types the mapping
// declares, and the exported items carry their keys as those types, in
// DynamoDB JSON ({"N": "…"}, {"B": "…"}).
func TestImportTableTypedKeys(t *testing.T) {
	m, err := mapping.Parse("m.yaml", []byte(`table:
  name: scores
  sort_key_type: N
  gsis: [{name: ByDigest, partition_key: DPK, partition_key_type: B}]
entities:
  E: {source: {table: e}, pk: "P#${id}", sk: "${n}", indexes: {ByDigest: {pk: "${d}"}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	in := ImportTableInput(m, Location{Bucket: "b", Prefix: "p/"}, "NONE")
	var got []string
	for _, d := range in.TableCreationParameters.AttributeDefinitions {
		got = append(got, aws.ToString(d.AttributeName)+":"+string(d.AttributeType))
	}
	if d := cmp.Diff([]string{"PK:S", "SK:N", "DPK:B"}, got); d != "" {
		t.Errorf("AttributeDefinitions (-want +got):\n%s", d)
	}
	line, err := ddbjson.AppendItem(nil, map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "P#1"}, "SK": &types.AttributeValueMemberN{Value: "-2.5"},
		"DPK": &types.AttributeValueMemberB{Value: []byte{0, 255}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"DPK":{"B":"AP8="},"PK":{"S":"P#1"},"SK":{"N":"-2.5"}}`; string(line) != want {
		t.Errorf("item = %s, want %s", line, want)
	}
}
