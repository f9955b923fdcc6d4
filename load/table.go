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

// ErrTableNotFound is EnsureTable's error for a table it may not create.
var ErrTableNotFound = errors.New("table does not exist")

// PreflightTimeout bounds the first DescribeTable of a run.
const PreflightTimeout = 20 * time.Second

// TableActiveTimeout bounds the wait for a table being created to be ACTIVE.
const TableActiveTimeout = 5 * time.Minute

// CreateTableInput is the CreateTable request for the mapping's table: keys,
// GSIs, attribute types, billing, throughput settings and deletion
// protection (point-in-time recovery: UpdateContinuousBackupsInput).
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_CreateTable.html
func CreateTableInput(m *mapping.Mapping) *dynamodb.CreateTableInput {
	t := m.Table
	in := &dynamodb.CreateTableInput{
		TableName:          aws.String(t.Name),
		KeySchema:          keySchema(t.PartitionKey, t.SortKey),
		BillingMode:        types.BillingMode(t.BillingMode),
		WarmThroughput:     warmThroughput(t.WarmThroughput),
		OnDemandThroughput: onDemandThroughput(t.MaxReadRequestUnits, t.MaxWriteRequestUnits),
	}
	if t.DeletionProtection {
		in.DeletionProtectionEnabled = aws.Bool(true)
	}
	if t.BillingMode == mapping.Provisioned {
		in.ProvisionedThroughput = &types.ProvisionedThroughput{
			ReadCapacityUnits: aws.Int64(t.ReadCapacity), WriteCapacityUnits: aws.Int64(t.WriteCapacity)}
	}
	for _, g := range t.GSIs {
		gi := types.GlobalSecondaryIndex{
			IndexName:          aws.String(g.Name),
			KeySchema:          indexKeySchema(g),
			Projection:         &types.Projection{ProjectionType: types.ProjectionType(g.Projection)},
			WarmThroughput:     warmThroughput(g.WarmThroughput),
			OnDemandThroughput: onDemandThroughput(g.MaxReadRequestUnits, g.MaxWriteRequestUnits),
		}
		if len(g.NonKeyAttributes) > 0 {
			gi.Projection.NonKeyAttributes = g.NonKeyAttributes
		}
		if t.BillingMode == mapping.Provisioned {
			gi.ProvisionedThroughput = &types.ProvisionedThroughput{
				ReadCapacityUnits: aws.Int64(g.ReadCapacity), WriteCapacityUnits: aws.Int64(g.WriteCapacity)}
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, gi)
	}
	for _, a := range t.KeyAttributeTypes() {
		in.AttributeDefinitions = append(in.AttributeDefinitions,
			types.AttributeDefinition{AttributeName: aws.String(a.Name), AttributeType: types.ScalarAttributeType(a.Type)})
	}
	return in
}

func warmThroughput(w *mapping.WarmThroughput) *types.WarmThroughput {
	if w == nil {
		return nil
	}
	return &types.WarmThroughput{ReadUnitsPerSecond: w.ReadUnitsPerSecond, WriteUnitsPerSecond: w.WriteUnitsPerSecond}
}

// onDemandThroughput is a maximum on-demand throughput, nil when uncapped.
func onDemandThroughput(read, write *int64) *types.OnDemandThroughput {
	if read == nil && write == nil {
		return nil
	}
	return &types.OnDemandThroughput{MaxReadRequestUnits: read, MaxWriteRequestUnits: write}
}

// UpdateContinuousBackupsInput enables point-in-time recovery (nil: none).
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateContinuousBackups.html
func UpdateContinuousBackupsInput(m *mapping.Mapping) *dynamodb.UpdateContinuousBackupsInput {
	p := m.Table.PointInTimeRecovery
	if p == nil || !p.Enabled {
		return nil
	}
	spec := &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true)}
	if d := p.RecoveryPeriodInDays; d != nil {
		spec.RecoveryPeriodInDays = aws.Int32(int32(*d)) // 1 to 35: checked by mapping.Load
	}
	return &dynamodb.UpdateContinuousBackupsInput{TableName: aws.String(m.Table.Name), PointInTimeRecoverySpecification: spec}
}

// AfterImportInputs are the UpdateTable requests, one change each, giving an
// imported table what TableCreationParameters cannot carry.
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TableCreationParameters.html
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTable.html
func AfterImportInputs(m *mapping.Mapping) []*dynamodb.UpdateTableInput {
	t := m.Table
	var out []*dynamodb.UpdateTableInput
	if t.DeletionProtection {
		out = append(out, &dynamodb.UpdateTableInput{TableName: aws.String(t.Name), DeletionProtectionEnabled: aws.Bool(true)})
	}
	if w := warmThroughput(t.WarmThroughput); w != nil {
		out = append(out, &dynamodb.UpdateTableInput{TableName: aws.String(t.Name), WarmThroughput: w})
	}
	return out
}

// indexKeySchema is GSI g's key schema (multi-attribute: HASH then RANGE).
func indexKeySchema(g mapping.GSI) []types.KeySchemaElement {
	if !g.MultiAttribute() {
		return keySchema(g.PartitionKey, g.SortKey)
	}
	var ks []types.KeySchemaElement
	for _, a := range g.PartitionKeys {
		ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(a.Name), KeyType: types.KeyTypeHash})
	}
	for _, a := range g.SortKeys {
		ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(a.Name), KeyType: types.KeyTypeRange})
	}
	return ks
}

func keySchema(pk, sk string) []types.KeySchemaElement {
	ks := []types.KeySchemaElement{{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash}}
	if sk != "" {
		ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange})
	}
	return ks
}

// TableAPI is what EnsureTable calls; point-in-time recovery also needs
// ContinuousBackupsAPI.
type TableAPI interface {
	dynamodb.DescribeTableAPIClient
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, opts ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
}

// ContinuousBackupsAPI enables point-in-time recovery for EnsureTable.
type ContinuousBackupsAPI interface {
	UpdateContinuousBackups(ctx context.Context, in *dynamodb.UpdateContinuousBackupsInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateContinuousBackupsOutput, error)
}

// ErrNoContinuousBackups is returned by EnsureTable, before creating anything,
// for point-in-time recovery without a ContinuousBackupsAPI client.
var ErrNoContinuousBackups = errors.New("the DynamoDB client cannot call UpdateContinuousBackups")

// EnsureTable checks that the mapping's table exists and fits it, creating a
// missing one if create (else ErrTableNotFound), waiting for ACTIVE, enabling
// point-in-time recovery. After CreateTable, a failure says the table exists:
// a later run finds it and neither applies nor checks the settings.
// Tables other runs create are awaited. A misfit is a *TableMismatchError.
func EnsureTable(ctx context.Context, client TableAPI, m *mapping.Mapping, create bool) (created bool, err error) {
	name := m.Table.Name
	td, err := DescribeTable(ctx, client, name)
	if err != nil {
		return false, err
	}
	if td == nil {
		if !create {
			return false, fmt.Errorf("%w: %s (pass --create-table to create it from the mapping)", ErrTableNotFound, name)
		}
		if created, err = createTable(ctx, client, m); created || err != nil {
			return created, err
		}
		td = &types.TableDescription{TableStatus: types.TableStatusCreating} // another client's
	}
	if td.TableStatus == types.TableStatusCreating {
		if td, err = waitActive(ctx, client, name); err != nil {
			return false, err
		}
	}
	return false, checkSchema(m, td)
}

// createTable creates the mapping's table; false if another client was first.
func createTable(ctx context.Context, client TableAPI, m *mapping.Mapping) (bool, error) {
	name := m.Table.Name
	pitr := UpdateContinuousBackupsInput(m)
	backups, ok := client.(ContinuousBackupsAPI)
	if pitr != nil && !ok {
		return false, fmt.Errorf("create table %s with point-in-time recovery: %w", name, ErrNoContinuousBackups)
	}
	if _, err := client.CreateTable(ctx, CreateTableInput(m)); err != nil {
		var inUse *types.ResourceInUseException
		if errors.As(err, &inUse) {
			return false, nil
		}
		var ae smithy.APIError
		if multi := multiAttributeGSIs(m); len(multi) > 0 && errors.As(err, &ae) && ae.ErrorCode() == "ValidationException" {
			return false, fmt.Errorf("create table %s: GSI %s has multi-attribute keys, which DynamoDB has had since November 2025 and local servers (dynalite, DynamoDB Local) do not implement; create the table on DynamoDB, or remove the GSI from the mapping: %w",
				name, strings.Join(multi, ", "), err)
		}
		return false, fmt.Errorf("create table %s: %w", name, err)
	}
	if _, err := waitActive(ctx, client, name); err != nil {
		return true, err
	}
	if pitr != nil {
		if _, err := backups.UpdateContinuousBackups(ctx, pitr); err != nil {
			return true, fmt.Errorf("table %s was created, but enabling point-in-time recovery failed "+
				"(enable it with aws dynamodb update-continuous-backups; a re-run does not): %w", name, err)
		}
	}
	return true, nil
}

// waitActive waits up to TableActiveTimeout for table name to become ACTIVE.
func waitActive(ctx context.Context, client dynamodb.DescribeTableAPIClient, name string) (*types.TableDescription, error) {
	w := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = 5 * time.Second
	})
	out, err := w.WaitForOutput(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, TableActiveTimeout)
	if err != nil {
		return nil, fmt.Errorf("wait for table %s to become ACTIVE: %w", name, err)
	}
	return out.Table, nil
}

// CheckTable checks, without writing, that the mapping's table fits it if it
// exists (exists false is no error); a misfit is a *TableMismatchError.
func CheckTable(ctx context.Context, client dynamodb.DescribeTableAPIClient, m *mapping.Mapping) (exists bool, err error) {
	td, err := DescribeTable(ctx, client, m.Table.Name)
	if err != nil || td == nil {
		return false, err
	}
	return true, checkSchema(m, td)
}

// TableMismatchError is an existing table whose items the mapping could not
// write (a key attribute's type) or read back as declared (a GSI projection).
type TableMismatchError struct {
	// Table is the table's name.
	Table string
	// Differences are the differences, one clause each, in mapping order.
	Differences []string
}

func (e *TableMismatchError) Error() string {
	return fmt.Sprintf("table %s does not match the mapping: %s", e.Table, strings.Join(e.Differences, "; "))
}

// DescribeTable returns table name's description, or nil when it does not
// exist. Every command's first request, it tries at most 3 times within
// PreflightTimeout: an unreachable DynamoDB fails in seconds, not minutes.
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

// checkSchema returns a *TableMismatchError naming every difference, or nil.
func checkSchema(m *mapping.Mapping, td *types.TableDescription) error {
	t := m.Table
	var diffs []string
	want := keySchema(t.PartitionKey, t.SortKey)
	if !sameKeys(want, td.KeySchema) {
		diffs = append(diffs, fmt.Sprintf("it has key schema %s, the mapping expects %s", describeKeys(td.KeySchema), describeKeys(want)))
	}
	diffs = append(diffs, keyTypeDiffs(m, td)...)
	for _, g := range t.GSIs {
		i := slices.IndexFunc(td.GlobalSecondaryIndexes, func(d types.GlobalSecondaryIndexDescription) bool {
			return aws.ToString(d.IndexName) == g.Name
		})
		if i < 0 {
			diffs = append(diffs, fmt.Sprintf("GSI %s is missing: add it to the table or remove it from the mapping", g.Name))
			continue
		}
		gd := td.GlobalSecondaryIndexes[i]
		if want := indexKeySchema(g); !sameKeys(want, gd.KeySchema) {
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

// keyTypeDiffs names key attributes typed unlike the mapping's (refused items).
func keyTypeDiffs(m *mapping.Mapping, td *types.TableDescription) []string {
	strs := m.KeyAttributes()
	var badS, diffs []string
	for _, a := range m.Table.KeyAttributeTypes() {
		i := slices.IndexFunc(td.AttributeDefinitions, func(d types.AttributeDefinition) bool { return aws.ToString(d.AttributeName) == a.Name })
		if i < 0 {
			continue
		}
		switch typ := td.AttributeDefinitions[i].AttributeType; {
		case string(typ) == a.Type:
		case a.Type == mapping.TypeString && slices.Contains(strs, a.Name):
			badS = append(badS, fmt.Sprintf("key attribute %s is of type %s", a.Name, typ))
		default:
			diffs = append(diffs, fmt.Sprintf("key attribute %s is of type %s, the mapping declares %s", a.Name, typ, a.Type))
		}
	}
	if len(badS) > 0 {
		diffs = append([]string{strings.Join(badS, ", ") + ": the mapping writes every key attribute as a string (S) unless it declares its type (partition_key_type, sort_key_type)"}, diffs...)
	}
	return diffs
}

// sameProjection compares projection types and non-key attribute sets.
func sameProjection(a, b types.Projection) bool {
	x, y := slices.Clone(a.NonKeyAttributes), slices.Clone(b.NonKeyAttributes)
	slices.Sort(x)
	slices.Sort(y)
	return a.ProjectionType == b.ProjectionType && slices.Equal(x, y)
}

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

func multiAttributeGSIs(m *mapping.Mapping) []string {
	var out []string
	for _, g := range m.Table.GSIs {
		if g.MultiAttribute() {
			out = append(out, g.Name)
		}
	}
	return out
}
