package load

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

const schemaMapping = `table:
  name: tbl
  gsis:
    - {name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK, projection: INCLUDE, non_key_attributes: [b, a]}
    - {name: Inverted, partition_key: SK, sort_key: PK, projection: KEYS_ONLY}
entities:
  E:
    source: {table: e}
    pk: E#${id}
    sk: E
`

// describe returns the TableDescription CreateTableInput(m) would give, as
// DescribeTable reports it, for the cases to alter.
func describe(m *mapping.Mapping) *types.TableDescription {
	in := CreateTableInput(m)
	td := &types.TableDescription{TableName: in.TableName, KeySchema: in.KeySchema, AttributeDefinitions: in.AttributeDefinitions}
	for _, g := range in.GlobalSecondaryIndexes {
		td.GlobalSecondaryIndexes = append(td.GlobalSecondaryIndexes, types.GlobalSecondaryIndexDescription{
			IndexName: g.IndexName, KeySchema: g.KeySchema, Projection: g.Projection})
	}
	return td
}

func setType(td *types.TableDescription, attr string, typ types.ScalarAttributeType) {
	for i, d := range td.AttributeDefinitions {
		if aws.ToString(d.AttributeName) == attr {
			td.AttributeDefinitions[i].AttributeType = typ
		}
	}
}

// checkSchema names every way an existing table differs from the mapping:
// key schema, key attribute types, and each GSI's key schema and
// projection; the table CreateTableInput describes has none.
func TestCheckSchema(t *testing.T) {
	m, err := mapping.Parse("m.yaml", []byte(schemaMapping))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		alter func(td *types.TableDescription)
		want  []string
	}{
		{"as created", func(*types.TableDescription) {}, nil},
		{"non-key attributes in another order, and a GSI the mapping does not declare", func(td *types.TableDescription) {
			td.GlobalSecondaryIndexes[0].Projection.NonKeyAttributes = []string{"a", "b"}
			td.GlobalSecondaryIndexes = append(td.GlobalSecondaryIndexes, types.GlobalSecondaryIndexDescription{IndexName: aws.String("Other")})
		}, nil},
		{"number partition key", func(td *types.TableDescription) { setType(td, "PK", types.ScalarAttributeTypeN) },
			[]string{"key attribute PK is of type N: the mapping writes every key attribute as a string (S)"}},
		{"binary GSI keys", func(td *types.TableDescription) {
			setType(td, "GSI1PK", types.ScalarAttributeTypeB)
			setType(td, "GSI1SK", types.ScalarAttributeTypeN)
		}, []string{"key attribute GSI1PK is of type B, key attribute GSI1SK is of type N: the mapping writes every key attribute as a string (S)"}},
		{"no sort key", func(td *types.TableDescription) { td.KeySchema = td.KeySchema[:1] },
			[]string{"it has key schema (partition key PK), the mapping expects (partition key PK, sort key SK)"}},
		{"GSI missing", func(td *types.TableDescription) { td.GlobalSecondaryIndexes = td.GlobalSecondaryIndexes[1:] },
			[]string{"GSI GSI1 is missing: add it to the table or remove it from the mapping"}},
		{"GSI keys swapped", func(td *types.TableDescription) {
			ks := td.GlobalSecondaryIndexes[1].KeySchema
			ks[0].AttributeName, ks[1].AttributeName = ks[1].AttributeName, ks[0].AttributeName
		}, []string{"GSI Inverted has key schema (partition key PK, sort key SK), the mapping expects (partition key SK, sort key PK)"}},
		{"projections", func(td *types.TableDescription) {
			td.GlobalSecondaryIndexes[0].Projection = &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"a"}}
			td.GlobalSecondaryIndexes[1].Projection = &types.Projection{ProjectionType: types.ProjectionTypeAll}
		}, []string{"GSI GSI1 projects INCLUDE (a), the mapping declares INCLUDE (a, b)", "GSI Inverted projects ALL, the mapping declares KEYS_ONLY"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			td := describe(m)
			tc.alter(td)
			err := checkSchema(m, td)
			var got []string
			var tm *TableMismatchError
			switch {
			case errors.As(err, &tm):
				if tm.Table != "tbl" {
					t.Errorf("Table = %q, want tbl", tm.Table)
				}
				got = tm.Differences
			case err != nil:
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("differences (-want +got):\n%s", d)
			}
		})
	}
}
