package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// whereFlags collects repeated --where NAME=VALUE flags.
type whereFlags []string

func (w *whereFlags) String() string { return strings.Join(*w, ",") }

func (w *whereFlags) Set(s string) error {
	if name, _, ok := strings.Cut(s, "="); !ok || name == "" {
		return fmt.Errorf("%q: want NAME=VALUE", s)
	}
	*w = append(*w, s)
	return nil
}

// findKeyCmd scans the table for the first item whose attributes equal every
// --where NAME=VALUE (a VALUE that parses as a number matches a string or a
// number) and prints its partition key as NAME=VALUE, ready for query --pk.
// The demo finds a user's item collection this way, without knowing how
// pg2dynamo renders the user's ID into the key (e.g. zero-padded).
func findKeyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var where whereFlags
	fs := flag.NewFlagSet("find-key", flag.ContinueOnError)
	fs.SetOutput(stderr)
	endpoint := fs.String("endpoint-url", "", "DynamoDB endpoint URL (required)")
	table := fs.String("table", "", "table name (required)")
	fs.Var(&where, "where", "NAME=VALUE the item must have (repeatable, at least one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *table == "" || len(where) == 0 || fs.NArg() > 0 {
		return usageError{"find-key needs --table and at least one --where NAME=VALUE, and no other arguments"}
	}
	filter, err := whereCondition(where)
	if err != nil {
		return err
	}
	client, err := newClient(ctx, *endpoint)
	if err != nil {
		return err
	}
	keys, err := keyAttributes(ctx, client, *table, "")
	if err != nil {
		return err
	}
	item, err := scanFirst(ctx, client, *table, filter)
	if err != nil {
		return err
	}
	if item == nil {
		return fmt.Errorf("table %s has no item with %s", *table, where.String())
	}
	fmt.Fprintf(stdout, "%s=%v\n", keys[0], plain(item[keys[0]]))
	return nil
}

// whereCondition ANDs one equality per NAME=VALUE; a VALUE that parses as a
// number matches either its string or its number.
func whereCondition(where []string) (expression.ConditionBuilder, error) {
	var conds []expression.ConditionBuilder
	for _, w := range where {
		name, value, _ := strings.Cut(w, "=")
		c := expression.Name(name).Equal(expression.Value(value))
		if _, err := strconv.ParseFloat(value, 64); err == nil {
			c = c.Or(expression.Name(name).Equal(expression.Value(&types.AttributeValueMemberN{Value: value})))
		}
		conds = append(conds, c)
	}
	if len(conds) == 1 {
		return conds[0], nil
	}
	return expression.And(conds[0], conds[1], conds[2:]...), nil
}

// scanFirst scans table page by page and returns the first item that
// matches filter, or nil when none does.
func scanFirst(ctx context.Context, client *dynamodb.Client, table string, filter expression.ConditionBuilder) (map[string]types.AttributeValue, error) {
	expr, err := expression.NewBuilder().WithFilter(filter).Build()
	if err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	p := dynamodb.NewScanPaginator(client, &dynamodb.ScanInput{
		TableName:                 aws.String(table),
		FilterExpression:          expr.Filter(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", table, err)
		}
		if len(out.Items) > 0 {
			return out.Items[0], nil
		}
	}
	return nil, nil
}
