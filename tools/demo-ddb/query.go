package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// queryArgs are the flags of the query subcommand.
type queryArgs struct {
	endpoint, table, index string
	pk, skPrefix           string // NAME=VALUE
	desc                   bool
	limit, minItems        int
	typeAttr               string
}

// queryCmd runs one Query (every page, up to --limit items) and prints the
// items in the order it returned them: the key attributes and the type
// first, then the other attributes as plain JSON. It fails when fewer than
// --min-items come back.
func queryCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var q queryArgs
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&q.endpoint, "endpoint-url", "", "DynamoDB endpoint URL (required)")
	fs.StringVar(&q.table, "table", "", "table name (required)")
	fs.StringVar(&q.index, "index", "", "GSI to query instead of the table")
	fs.StringVar(&q.pk, "pk", "", "partition key condition NAME=VALUE (required)")
	fs.StringVar(&q.skPrefix, "sk-begins-with", "", "sort key condition NAME=PREFIX (begins_with)")
	fs.BoolVar(&q.desc, "desc", false, "ScanIndexForward false: the sort key descending")
	fs.IntVar(&q.limit, "limit", 50, "print at most this many items")
	fs.IntVar(&q.minItems, "min-items", 0, "fail (exit 1) when the Query returns fewer items")
	fs.StringVar(&q.typeAttr, "type-attribute", "type", "the attribute naming each item's entity")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if q.table == "" || q.pk == "" || fs.NArg() > 0 {
		return usageError{"query needs --table and --pk NAME=VALUE, and no other arguments"}
	}
	input, err := q.input()
	if err != nil {
		return err
	}
	client, err := newClient(ctx, q.endpoint)
	if err != nil {
		return err
	}
	keys, err := keyAttributes(ctx, client, q.table, q.index)
	if err != nil {
		return err
	}
	items, pages, err := query(ctx, client, input, q.limit)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Query %s: %s; %s in %s, in the order the Query returned them:\n",
		q.target(), q.describe(), plural(len(items), "item"), plural(pages, "page"))
	for _, item := range items {
		printItem(stdout, item, append(keys, q.typeAttr))
	}
	if len(items) < q.minItems {
		return fmt.Errorf("query %s: %d items, want at least %d", q.target(), len(items), q.minItems)
	}
	return nil
}

// input builds the QueryInput; the key condition comes from the
// expression builder.
func (q queryArgs) input() (*dynamodb.QueryInput, error) {
	pkName, pkValue, ok := strings.Cut(q.pk, "=")
	if !ok || pkName == "" {
		return nil, usageError{fmt.Sprintf("--pk %q: want NAME=VALUE", q.pk)}
	}
	cond := expression.Key(pkName).Equal(expression.Value(pkValue))
	if q.skPrefix != "" {
		skName, prefix, ok := strings.Cut(q.skPrefix, "=")
		if !ok || skName == "" {
			return nil, usageError{fmt.Sprintf("--sk-begins-with %q: want NAME=PREFIX", q.skPrefix)}
		}
		cond = cond.And(expression.Key(skName).BeginsWith(prefix))
	}
	expr, err := expression.NewBuilder().WithKeyCondition(cond).Build()
	if err != nil {
		return nil, fmt.Errorf("key condition: %w", err)
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(q.table),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ScanIndexForward:          aws.Bool(!q.desc),
	}
	if q.index != "" {
		in.IndexName = aws.String(q.index)
	}
	return in, nil
}

// target names what is queried: "table T" or "index I of table T".
func (q queryArgs) target() string {
	if q.index != "" {
		return fmt.Sprintf("index %s of table %s", q.index, q.table)
	}
	return "table " + q.table
}

// describe renders the key condition and direction as a reader would write
// them, e.g. `PK = "USER#7", sort key descending`.
func (q queryArgs) describe() string {
	name, value, _ := strings.Cut(q.pk, "=")
	s := fmt.Sprintf("%s = %q", name, value)
	if q.skPrefix != "" {
		skName, prefix, _ := strings.Cut(q.skPrefix, "=")
		s += fmt.Sprintf(" AND begins_with(%s, %q)", skName, prefix)
	}
	if q.desc {
		return s + ", sort key descending (ScanIndexForward false)"
	}
	return s + ", sort key ascending"
}

// keyAttributes returns the partition and sort key attribute names of the
// table, or of its GSI index, in that order.
func keyAttributes(ctx context.Context, client *dynamodb.Client, table, index string) ([]string, error) {
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		return nil, fmt.Errorf("describe table %s: %w", table, err)
	}
	schema := out.Table.KeySchema
	if index != "" {
		schema = nil
		for _, g := range out.Table.GlobalSecondaryIndexes {
			if aws.ToString(g.IndexName) == index {
				schema = g.KeySchema
			}
		}
		if schema == nil {
			return nil, fmt.Errorf("table %s has no GSI %s", table, index)
		}
	}
	var names []string
	for _, kt := range []types.KeyType{types.KeyTypeHash, types.KeyTypeRange} {
		for _, k := range schema {
			if k.KeyType == kt {
				names = append(names, aws.ToString(k.AttributeName))
			}
		}
	}
	return names, nil
}

// query runs input page by page until the last page or limit items, and
// returns the items and the number of pages read.
func query(ctx context.Context, client *dynamodb.Client, input *dynamodb.QueryInput, limit int) ([]map[string]types.AttributeValue, int, error) {
	var items []map[string]types.AttributeValue
	pages := 0
	p := dynamodb.NewQueryPaginator(client, input)
	for p.HasMorePages() && len(items) < limit {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, pages, fmt.Errorf("query %s: %w", aws.ToString(input.TableName), err)
		}
		pages++
		items = append(items, out.Items...)
	}
	if len(items) > limit {
		items = items[:limit]
	}
	return items, pages, nil
}

// printItem writes item as two lines: first the attributes named in first
// (the keys and the type, where present) as NAME=VALUE, then the others as
// one JSON object with sorted keys.
func printItem(w io.Writer, item map[string]types.AttributeValue, first []string) {
	var head []string
	rest := make(map[string]any, len(item))
	for name, av := range item {
		rest[name] = plain(av)
	}
	for _, name := range first {
		if v, ok := rest[name]; ok {
			head = append(head, fmt.Sprintf("%s=%v", name, v))
			delete(rest, name)
		}
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rest); err != nil { // plain only builds JSON-encodable values
		b.WriteString(err.Error() + "\n")
	}
	fmt.Fprintf(w, "  %s\n      %s", strings.Join(head, "  "), b.String())
}

// plain converts an attribute value into the Go value closest to its JSON:
// S as a string, N as a json.Number, B as []byte (base64 in JSON), sets as
// arrays, L and M recursively.
func plain(av types.AttributeValue) any {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return json.Number(v.Value)
	case *types.AttributeValueMemberB:
		return v.Value
	case *types.AttributeValueMemberBOOL:
		return v.Value
	case *types.AttributeValueMemberNULL:
		return nil
	case *types.AttributeValueMemberSS:
		return v.Value
	case *types.AttributeValueMemberNS:
		ns := make([]json.Number, len(v.Value))
		for i, n := range v.Value {
			ns[i] = json.Number(n)
		}
		return ns
	case *types.AttributeValueMemberBS:
		return v.Value
	case *types.AttributeValueMemberL:
		l := make([]any, len(v.Value))
		for i, e := range v.Value {
			l[i] = plain(e)
		}
		return l
	case *types.AttributeValueMemberM:
		m := make(map[string]any, len(v.Value))
		for k, e := range v.Value {
			m[k] = plain(e)
		}
		return m
	}
	return fmt.Sprintf("%T", av)
}

// plural renders n and noun, adding an s unless n is 1: "1 page", "3 items".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
