package load

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// ErrTableNotFound is returned by EnsureTable when the table does not exist
// and creating it was not asked for.
var ErrTableNotFound = errors.New("table does not exist")

// PreflightTimeout bounds the first DescribeTable of a run.
const PreflightTimeout = 20 * time.Second

// TableActiveTimeout bounds the wait for a created table to become ACTIVE.
const TableActiveTimeout = 5 * time.Minute

// CreateTableInput is the CreateTable request for the mapping's table: the
// partition and sort key (type S), every GSI with its projection, and the
// billing mode with its capacities.
func CreateTableInput(m *mapping.Mapping) *dynamodb.CreateTableInput {
	t := m.Table
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(t.Name),
		KeySchema:   keySchema(t.PartitionKey, t.SortKey),
		BillingMode: types.BillingMode(t.BillingMode),
	}
	if t.BillingMode == mapping.Provisioned {
		in.ProvisionedThroughput = &types.ProvisionedThroughput{
			ReadCapacityUnits: aws.Int64(t.ReadCapacity), WriteCapacityUnits: aws.Int64(t.WriteCapacity)}
	}
	attrs := []string{t.PartitionKey, t.SortKey}
	for _, g := range t.GSIs {
		gi := types.GlobalSecondaryIndex{
			IndexName:  aws.String(g.Name),
			KeySchema:  keySchema(g.PartitionKey, g.SortKey),
			Projection: &types.Projection{ProjectionType: types.ProjectionType(g.Projection)},
		}
		if len(g.NonKeyAttributes) > 0 {
			gi.Projection.NonKeyAttributes = g.NonKeyAttributes
		}
		if t.BillingMode == mapping.Provisioned {
			gi.ProvisionedThroughput = &types.ProvisionedThroughput{
				ReadCapacityUnits: aws.Int64(g.ReadCapacity), WriteCapacityUnits: aws.Int64(g.WriteCapacity)}
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, gi)
		for _, a := range []string{g.PartitionKey, g.SortKey} {
			if a != "" && !slices.Contains(attrs, a) {
				attrs = append(attrs, a)
			}
		}
	}
	for _, a := range attrs {
		in.AttributeDefinitions = append(in.AttributeDefinitions,
			types.AttributeDefinition{AttributeName: aws.String(a), AttributeType: types.ScalarAttributeTypeS})
	}
	return in
}

func keySchema(pk, sk string) []types.KeySchemaElement {
	ks := []types.KeySchemaElement{{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash}}
	if sk != "" {
		ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange})
	}
	return ks
}

// TableAPI is what EnsureTable calls: *dynamodb.Client, or a fake at this
// seam in tests. DescribeTable is also what dynamodb.NewTableExistsWaiter
// polls.
type TableAPI interface {
	dynamodb.DescribeTableAPIClient
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, opts ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
}

// EnsureTable checks that the mapping's table exists and fits the mapping
// (see CheckTable). If it does not exist and create is true, it creates it
// and waits (up to TableActiveTimeout) until it is ACTIVE; if create is
// false it returns an error wrapping ErrTableNotFound. An existing table
// that does not fit is a *TableMismatchError. created reports whether the
// table was created.
func EnsureTable(ctx context.Context, client TableAPI, m *mapping.Mapping, create bool) (created bool, err error) {
	name := m.Table.Name
	td, err := DescribeTable(ctx, client, name)
	switch {
	case err != nil:
		return false, err
	case td == nil:
		if !create {
			return false, fmt.Errorf("%w: %s (pass --create-table to create it from the mapping)", ErrTableNotFound, name)
		}
		if _, err := client.CreateTable(ctx, CreateTableInput(m)); err != nil {
			return false, fmt.Errorf("create table %s: %w", name, err)
		}
		w := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
			o.MinDelay = 100 * time.Millisecond
			o.MaxDelay = 5 * time.Second
		})
		if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, TableActiveTimeout); err != nil {
			return true, fmt.Errorf("wait for table %s to become ACTIVE: %w", name, err)
		}
		return true, nil
	}
	return false, checkSchema(m, td)
}

// CheckTable checks, with one DescribeTable (see DescribeTable), that the
// mapping's table, if it exists, fits the mapping as EnsureTable requires
// before writing, and writes nothing: for the commands that only read
// (diff, migrate --dry-run, verify). exists reports whether the table
// exists; a table that does not is no error. A table that does not fit is
// a *TableMismatchError.
func CheckTable(ctx context.Context, client dynamodb.DescribeTableAPIClient, m *mapping.Mapping) (exists bool, err error) {
	td, err := DescribeTable(ctx, client, m.Table.Name)
	if err != nil || td == nil {
		return false, err
	}
	return true, checkSchema(m, td)
}

// TableMismatchError is an existing table that does not fit the mapping:
// items built from the mapping could not be written to it (a key
// attribute of another type fails every write) or would not be read back
// as the mapping declares (a GSI that projects other attributes).
type TableMismatchError struct {
	// Table is the table's name.
	Table string
	// Differences are the table's differences from the mapping, one
	// clause each: the key schema, the types of key attributes, then each
	// GSI of the mapping (missing, its key schema, its projection), in
	// mapping order.
	Differences []string
}

func (e *TableMismatchError) Error() string {
	return fmt.Sprintf("table %s does not match the mapping: %s", e.Table, strings.Join(e.Differences, "; "))
}

// DescribeTable returns the description of table name, or nil when it does
// not exist. It is the first request of every command that talks to
// DynamoDB (EnsureTable for migrate; CheckTable, before verify.Compare,
// for verify, diff and migrate --dry-run): DescribeTable with at most 3
// attempts, all within PreflightTimeout, so that a DynamoDB that cannot be
// reached fails the command in seconds, with an error that says so, rather
// than after the client's full retry budget (minutes). DynamoDB's own errors (access
// denied, …) are returned wrapped; so is a retried error of DynamoDB's
// (throttling, 5xx) that the timeout cut short.
func DescribeTable(ctx context.Context, client dynamodb.DescribeTableAPIClient, name string) (*types.TableDescription, error) {
	pctx, cancel := context.WithTimeout(ctx, PreflightTimeout)
	defer cancel()
	out, err := client.DescribeTable(pctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)},
		func(o *dynamodb.Options) { o.RetryMaxAttempts = 3 })
	var ae smithy.APIError
	var nf *types.ResourceNotFoundException
	switch {
	case err != nil && !errors.As(err, &ae) && ctx.Err() == nil:
		return nil, fmt.Errorf("cannot reach DynamoDB (DescribeTable %s, at most 3 attempts in %s): %w", name, PreflightTimeout, err)
	case errors.As(err, &nf):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("describe table %s: %w", name, err)
	}
	return out.Table, nil
}

// checkSchema compares an existing table with the mapping: the key
// schema of the table and of each of the mapping's GSIs (attribute names
// and roles), the type of every key attribute the mapping writes (always
// S), and each GSI's projection (its type, and the non-key attributes of
// INCLUDE, in any order). GSIs of the table that the mapping does not
// declare are left alone. It returns a *TableMismatchError naming every
// difference, or nil.
func checkSchema(m *mapping.Mapping, td *types.TableDescription) error {
	t := m.Table
	var diffs []string
	want := keySchema(t.PartitionKey, t.SortKey)
	if !sameKeys(want, td.KeySchema) {
		diffs = append(diffs, fmt.Sprintf("it has key schema %s, the mapping expects %s", describeKeys(td.KeySchema), describeKeys(want)))
	}
	// Every key attribute the mapping writes is a string; DynamoDB refuses
	// an item whose key attribute has another type than the table's.
	keyAttrs := []string{t.PartitionKey, t.SortKey}
	for _, g := range t.GSIs {
		keyAttrs = append(keyAttrs, g.PartitionKey, g.SortKey)
	}
	var badTypes []string
	for _, a := range keyAttrs {
		i := slices.IndexFunc(td.AttributeDefinitions, func(d types.AttributeDefinition) bool { return aws.ToString(d.AttributeName) == a })
		if a == "" || i < 0 {
			continue
		}
		if typ := td.AttributeDefinitions[i].AttributeType; typ != types.ScalarAttributeTypeS {
			bad := fmt.Sprintf("key attribute %s is of type %s", a, typ)
			if !slices.Contains(badTypes, bad) {
				badTypes = append(badTypes, bad)
			}
		}
	}
	if len(badTypes) > 0 {
		diffs = append(diffs, strings.Join(badTypes, ", ")+": the mapping writes every key attribute as a string (S)")
	}
	for _, g := range t.GSIs {
		i := slices.IndexFunc(td.GlobalSecondaryIndexes, func(d types.GlobalSecondaryIndexDescription) bool {
			return aws.ToString(d.IndexName) == g.Name
		})
		if i < 0 {
			diffs = append(diffs, fmt.Sprintf("GSI %s is missing: add it to the table or remove it from the mapping", g.Name))
			continue
		}
		gd := td.GlobalSecondaryIndexes[i]
		if want := keySchema(g.PartitionKey, g.SortKey); !sameKeys(want, gd.KeySchema) {
			diffs = append(diffs, fmt.Sprintf("GSI %s has key schema %s, the mapping expects %s", g.Name, describeKeys(gd.KeySchema), describeKeys(want)))
		}
		var got types.Projection
		if gd.Projection != nil {
			got = *gd.Projection
		}
		want := types.Projection{ProjectionType: types.ProjectionType(g.Projection), NonKeyAttributes: g.NonKeyAttributes}
		if !sameProjection(want, got) {
			diffs = append(diffs, fmt.Sprintf("GSI %s projects %s, the mapping declares %s", g.Name, describeProjection(got), describeProjection(want)))
		}
	}
	if len(diffs) > 0 {
		return &TableMismatchError{Table: t.Name, Differences: diffs}
	}
	return nil
}

// sameProjection compares projection types and, as sets, the non-key
// attributes.
func sameProjection(a, b types.Projection) bool {
	x, y := slices.Clone(a.NonKeyAttributes), slices.Clone(b.NonKeyAttributes)
	slices.Sort(x)
	slices.Sort(y)
	return a.ProjectionType == b.ProjectionType && slices.Equal(x, y)
}

// describeProjection renders "ALL", "KEYS_ONLY" or "INCLUDE (a, b)", the
// attributes sorted.
func describeProjection(p types.Projection) string {
	s := string(p.ProjectionType)
	if s == "" {
		s = "nothing"
	}
	if len(p.NonKeyAttributes) > 0 {
		attrs := slices.Clone(p.NonKeyAttributes)
		slices.Sort(attrs)
		s += " (" + strings.Join(attrs, ", ") + ")"
	}
	return s
}

func sameKeys(a, b []types.KeySchemaElement) bool {
	return slices.EqualFunc(a, b, func(x, y types.KeySchemaElement) bool {
		return aws.ToString(x.AttributeName) == aws.ToString(y.AttributeName) && x.KeyType == y.KeyType
	})
}

func describeKeys(ks []types.KeySchemaElement) string {
	s := ""
	for i, k := range ks {
		if i > 0 {
			s += ", "
		}
		role := "partition key"
		if k.KeyType == types.KeyTypeRange {
			role = "sort key"
		}
		s += fmt.Sprintf("%s %s", role, aws.ToString(k.AttributeName))
	}
	return "(" + s + ")"
}
