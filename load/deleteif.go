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

// DeleteIf deletes the item of key with DeleteItem if its attribute attr still
// holds value, and reports whether it did (false, nil error: the condition
// failed or the item is gone). One request an item: BatchWriteItem takes no
// conditions. Otherwise as Write; a failed condition costs a write unit.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html#write-operation-consumption
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

// PutIf puts item with PutItem if cond holds and reports whether it did; on a
// failed condition old is the item holding the key (ALL_OLD; nil if none
// returned). Otherwise as DeleteIf.
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

// PutIfTypes puts item (PutIf) unless an item whose typeAttr is not among
// typeValues (at least one) holds its key; holder is that item's type ("" if
// not returned).
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
	return put, StringAttr(old, typeAttr), err
}

// conditional runs send (estimate units) in Deadline and the write limit;
// false, nil: its condition failed.
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
