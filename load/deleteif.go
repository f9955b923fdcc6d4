package load

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DeleteIf deletes the item of key (its partition and sort key
// attributes) with DeleteItem, on the condition that its attribute attr
// still holds the string value (a condition expression built with
// feature/dynamodb/expression): an item another writer gave another value
// since it was read is left alone. It reports whether the item was
// deleted; false with a nil error when the condition failed
// (ConditionalCheckFailedException), which includes an item already gone.
// BatchWriteItem's delete requests take no condition, hence one request an
// item.
//
// As for Write: the SDK retries throttling, 5xx and network errors; the
// write limit (LimitWriteUnits) is waited for, a write unit before the
// request and what DynamoDB reports beyond it after; the call counts as a
// request and its consumed write units are summed into Stats (a delete is
// charged the deleted item's size; a failed condition, a write unit
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html#write-operation-consumption);
// past Deadline it ends with the deadline's message. Other errors are
// returned wrapped, naming the key.
func (d *DynamoDB) DeleteIf(ctx context.Context, key map[string]types.AttributeValue, attr, value string) (bool, error) {
	if d.Deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, d.Deadline,
			fmt.Errorf("a delete was still being retried after the retry deadline of %s (DynamoDB throttling or unreachable)", d.Deadline))
		defer cancel()
		ok, err := d.deleteIf(ctx, key, attr, value)
		if err != nil && ctx.Err() != nil {
			return false, context.Cause(ctx)
		}
		return ok, err
	}
	return d.deleteIf(ctx, key, attr, value)
}

func (d *DynamoDB) deleteIf(ctx context.Context, key map[string]types.AttributeValue, attr, value string) (bool, error) {
	expr, err := expression.NewBuilder().WithCondition(expression.Name(attr).Equal(expression.Value(value))).Build()
	if err != nil {
		return false, err
	}
	const estimate = 1 // the deleted item's size is known only from the answer
	if d.limit != nil {
		if err := d.limit.wait(ctx, estimate); err != nil {
			return false, err
		}
	}
	d.requests.Add(1)
	out, err := d.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(d.table), Key: key,
		ConditionExpression:       expr.Condition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ReturnConsumedCapacity:    types.ReturnConsumedCapacityTotal,
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return false, nil
	case err != nil:
		k := d.keyOf(key)
		return false, fmt.Errorf("DeleteItem %s / %s on table %s: %w", k[0], k[1], d.table, err)
	}
	var used float64
	if out.ConsumedCapacity != nil {
		used = aws.ToFloat64(out.ConsumedCapacity.CapacityUnits)
	}
	d.consumed.Add(int64(used * 10))
	if d.limit != nil {
		if extra := int64(used) - estimate; extra > 0 {
			if err := d.limit.wait(ctx, extra); err != nil {
				return true, err
			}
		}
		d.limit.succeeded()
	}
	return true, nil
}
