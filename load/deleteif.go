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
	expr, err := expression.NewBuilder().WithCondition(expression.Name(attr).Equal(expression.Value(value))).Build()
	if err != nil {
		return false, err
	}
	const estimate = 1 // the deleted item's size is known only from the answer
	return d.conditional(ctx, "delete", estimate, func(ctx context.Context) (*types.ConsumedCapacity, error) {
		out, err := d.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: aws.String(d.table), Key: key,
			ConditionExpression:       expr.Condition(),
			ExpressionAttributeNames:  expr.Names(),
			ExpressionAttributeValues: expr.Values(),
			ReturnConsumedCapacity:    types.ReturnConsumedCapacityTotal,
		}, d.countThrottles)
		if err != nil {
			k := d.keyOf(key)
			return nil, fmt.Errorf("DeleteItem %s / %s on table %s: %w", k[0], k[1], d.table, err)
		}
		return out.ConsumedCapacity, nil
	})
}

// PutIf puts item with PutItem on condition cond (built with
// feature/dynamodb/expression): an item of its key that fails cond is
// left alone. It reports whether the item was put; false with a nil error
// when the condition failed (ConditionalCheckFailedException), with old
// the item that holds the key as DynamoDB returns it
// (ReturnValuesOnConditionCheckFailure ALL_OLD; nil from an endpoint that
// returns none). BatchWriteItem's put requests take no condition, hence
// one request an item. Retries, the write limit (the item's estimated
// write units waited for before the request), Stats and Deadline are as
// DeleteIf's; a failed condition is charged a write unit too.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
func (d *DynamoDB) PutIf(ctx context.Context, item map[string]types.AttributeValue, cond expression.ConditionBuilder) (put bool, old map[string]types.AttributeValue, err error) {
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return false, nil, err
	}
	estimate := int64(1)
	if d.limit != nil {
		estimate = d.limit.estimate(item)
	}
	put, err = d.conditional(ctx, "put", estimate, func(ctx context.Context) (*types.ConsumedCapacity, error) {
		out, err := d.client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: aws.String(d.table), Item: item,
			ConditionExpression:                 expr.Condition(),
			ExpressionAttributeNames:            expr.Names(),
			ExpressionAttributeValues:           expr.Values(),
			ReturnConsumedCapacity:              types.ReturnConsumedCapacityTotal,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}, d.countThrottles)
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			old = ccf.Item
		}
		if err != nil {
			k := d.keyOf(item)
			return nil, fmt.Errorf("PutItem %s / %s on table %s: %w", k[0], k[1], d.table, err)
		}
		return out.ConsumedCapacity, nil
	})
	return put, old, err
}

// PutIfTypes puts item (PutIf) unless an item of another type holds its
// key: on the condition that the table holds no item of the key, or one
// whose attribute typeAttr is one of types (at least one). It reports
// whether it put the item; when not, holder is the type of the item that
// holds the key ("" when DynamoDB did not return it). A comparison that
// reads only types' items (verify.Options.Types) puts the items it found
// missing so: it did not see an item of another type under their keys.
func (d *DynamoDB) PutIfTypes(ctx context.Context, item map[string]types.AttributeValue, typeAttr string, typeValues []string) (put bool, holder string, err error) {
	if len(typeValues) == 0 {
		return false, "", fmt.Errorf("PutIfTypes: no type given")
	}
	vals := make([]expression.OperandBuilder, len(typeValues))
	for i, t := range typeValues {
		vals[i] = expression.Value(t)
	}
	cond := expression.AttributeNotExists(expression.Name(d.keys[0])).Or(expression.Name(typeAttr).In(vals[0], vals[1:]...))
	put, old, err := d.PutIf(ctx, item, cond)
	if v, ok := old[typeAttr].(*types.AttributeValueMemberS); ok {
		holder = v.Value
	}
	return put, holder, err
}

// conditional runs send, one conditional write (what: "put" or
// "delete") estimated at estimate write units, within Deadline and the
// write limit, and counts its request and consumed write units. It
// reports false with a nil error when send's condition failed.
func (d *DynamoDB) conditional(ctx context.Context, what string, estimate int64, send func(context.Context) (*types.ConsumedCapacity, error)) (bool, error) {
	if d.Deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, d.Deadline,
			fmt.Errorf("a %s was still being retried after the retry deadline of %s (DynamoDB throttling or unreachable)", what, d.Deadline))
		defer cancel()
		ok, err := d.sendConditional(ctx, estimate, send)
		if err != nil && ctx.Err() != nil {
			return false, context.Cause(ctx)
		}
		return ok, err
	}
	return d.sendConditional(ctx, estimate, send)
}

func (d *DynamoDB) sendConditional(ctx context.Context, estimate int64, send func(context.Context) (*types.ConsumedCapacity, error)) (bool, error) {
	if d.limit != nil {
		if err := d.limit.wait(ctx, estimate); err != nil {
			return false, err
		}
	}
	d.requests.Add(1)
	cc, err := send(ctx)
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return false, nil
	case err != nil:
		return false, err
	}
	var used float64
	if cc != nil {
		used = aws.ToFloat64(cc.CapacityUnits)
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
