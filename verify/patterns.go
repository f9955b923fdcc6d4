// Package verify proves a migration from the source: it runs the mapping's
// access patterns as real Queries against the table.
package verify

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/transform"
)

// PatternQuery builds the Query of an access pattern for one set of
// parameter values (one Go value per pp.Params, as pgx decodes them), with
// its key condition built by feature/dynamodb/expression.
func PatternQuery(table string, pp *transform.PatternPlan, values []any) (*dynamodb.QueryInput, error) {
	pk, sk, err := pp.Render(values)
	if err != nil {
		return nil, err
	}
	kc := pp.Pattern.Condition
	cond := expression.Key(kc.PartitionAttr).Equal(expression.Value(pk))
	if kc.SortAttr != "" {
		k := expression.Key(kc.SortAttr)
		var sc expression.KeyConditionBuilder
		switch kc.SortOp {
		case "=":
			sc = k.Equal(expression.Value(sk[0]))
		case "<":
			sc = k.LessThan(expression.Value(sk[0]))
		case "<=":
			sc = k.LessThanEqual(expression.Value(sk[0]))
		case ">":
			sc = k.GreaterThan(expression.Value(sk[0]))
		case ">=":
			sc = k.GreaterThanEqual(expression.Value(sk[0]))
		case "begins_with":
			sc = k.BeginsWith(sk[0])
		case "between":
			sc = k.Between(expression.Value(sk[0]), expression.Value(sk[1]))
		default:
			return nil, fmt.Errorf("pattern %s: unknown sort key operator %q", pp.Pattern.Name, kc.SortOp)
		}
		cond = cond.And(sc)
	}
	expr, err := expression.NewBuilder().WithKeyCondition(cond).Build()
	if err != nil {
		return nil, fmt.Errorf("pattern %s: %w", pp.Pattern.Name, err)
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	}
	if pp.Pattern.Index != "" {
		in.IndexName = aws.String(pp.Pattern.Index)
	}
	if sf := pp.Pattern.ScanForward; sf != nil {
		in.ScanIndexForward = aws.Bool(*sf)
	}
	return in, nil
}

// RunPattern runs the access pattern's Query for values, following every
// page, and returns the items in the order DynamoDB returned them.
func RunPattern(ctx context.Context, client *dynamodb.Client, table string, pp *transform.PatternPlan, values []any) ([]map[string]types.AttributeValue, error) {
	in, err := PatternQuery(table, pp, values)
	if err != nil {
		return nil, err
	}
	var items []map[string]types.AttributeValue
	p := dynamodb.NewQueryPaginator(client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("pattern %s: %w", pp.Pattern.Name, err)
		}
		items = append(items, page.Items...)
	}
	return items, nil
}
