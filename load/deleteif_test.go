package load

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"
)

// conditionalAPI answers DeleteItem as DynamoDB does a conditional
// delete: the condition fails for the keys in retyped, and every request
// is recorded.
type conditionalAPI struct {
	*fakeAPI
	retyped map[string]bool
	err     error
	inputs  []*dynamodb.DeleteItemInput
}

func (f *conditionalAPI) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	f.inputs = append(f.inputs, in)
	switch {
	case f.err != nil:
		return nil, f.err
	case f.retyped[pk(in.Key)]:
		return nil, &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	}
	return &dynamodb.DeleteItemOutput{ConsumedCapacity: &types.ConsumedCapacity{CapacityUnits: aws.Float64(2)}}, nil
}

// DeleteIf sends one DeleteItem conditional on the type attribute, reports
// a failed condition as not deleted (no error), counts requests and the
// write units DynamoDB reports, and wraps other errors naming the key.
func TestDeleteIf(t *testing.T) {
	ctx := context.Background()
	key := func(k string) map[string]types.AttributeValue { return items(k)[0].Attrs }
	api := &conditionalAPI{fakeAPI: &fakeAPI{}, retyped: map[string]bool{"b": true}}
	d := NewDynamoDB(api, "t", "PK", "SK")
	for _, tc := range []struct {
		key  string
		want bool
	}{{"a", true}, {"b", false}} {
		got, err := d.DeleteIf(ctx, key(tc.key), "type", "Order")
		if err != nil || got != tc.want {
			t.Errorf("DeleteIf(%s) = %v, %v; want %v, nil", tc.key, got, err, tc.want)
		}
	}
	in := api.inputs[0]
	gotCond := []string{aws.ToString(in.ConditionExpression), in.ExpressionAttributeNames["#0"],
		in.ExpressionAttributeValues[":0"].(*types.AttributeValueMemberS).Value, string(in.ReturnConsumedCapacity)}
	if diff := cmp.Diff([]string{"#0 = :0", "type", "Order", "TOTAL"}, gotCond); diff != "" {
		t.Errorf("condition (-want +got):\n%s", diff)
	}
	if s := d.Stats(); s.Requests != 2 || s.ConsumedWriteUnits != 2 {
		t.Errorf("stats %+v, want 2 requests and 2 write units (the one deleted)", s)
	}
	denied := &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "no"}
	api.err = denied
	if _, err := d.DeleteIf(ctx, key("c"), "type", "Order"); !errors.Is(err, denied) || err.Error() != "DeleteItem c / S on table t: api error AccessDeniedException: no" {
		t.Errorf("got %v, want the error naming the key", err)
	}
}
