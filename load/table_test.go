package load

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
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
			[]string{"key attribute PK is of type N: the mapping writes every key attribute as a string (S) unless it declares its type (partition_key_type, sort_key_type)"}},
		{"binary GSI keys", func(td *types.TableDescription) {
			setType(td, "GSI1PK", types.ScalarAttributeTypeB)
			setType(td, "GSI1SK", types.ScalarAttributeTypeN)
		}, []string{"key attribute GSI1PK is of type B, key attribute GSI1SK is of type N: the mapping writes every key attribute as a string (S) unless it declares its type (partition_key_type, sort_key_type)"}},
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

// fakeTables is DynamoDB at the TableAPI seam: tables by name, ACTIVE
// after creating DescribeTable calls that answer CREATING, and scripted
// errors.
type fakeTables struct {
	mu      sync.Mutex
	tables  map[string]*types.TableDescription
	created []string
	// creating is how many DescribeTable calls answer a table CREATING
	// before it is ACTIVE; creatingSeen counts them.
	creating, creatingSeen int
	// racer, if set, is a table another client creates just before this
	// one's CreateTable, which then fails with ResourceInUseException.
	racer *types.TableDescription
	// describeErr, if set, answers every DescribeTable; afterCreate only
	// those after a CreateTable (what the waiter sees); createErr answers
	// CreateTable.
	describeErr, afterCreate, createErr error
}

func (f *fakeTables) DescribeTable(_ context.Context, in *dynamodb.DescribeTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.describeErr != nil:
		return nil, f.describeErr
	case f.afterCreate != nil && len(f.created) > 0:
		return nil, f.afterCreate
	}
	td, ok := f.tables[aws.ToString(in.TableName)]
	if !ok {
		return nil, &types.ResourceNotFoundException{Message: aws.String("Requested resource not found")}
	}
	out := *td
	out.TableStatus = types.TableStatusActive
	if f.creatingSeen < f.creating {
		f.creatingSeen++
		out.TableStatus = types.TableStatusCreating
	}
	return &dynamodb.DescribeTableOutput{Table: &out}, nil
}

func (f *fakeTables) CreateTable(_ context.Context, in *dynamodb.CreateTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.createErr != nil {
		return nil, f.createErr
	}
	name := aws.ToString(in.TableName)
	if f.racer != nil {
		f.tables = map[string]*types.TableDescription{name: f.racer}
		return nil, &types.ResourceInUseException{Message: aws.String("Attempt to change a resource which is still in use: Table already exists: " + name)}
	}
	f.created = append(f.created, name)
	td := &types.TableDescription{TableName: in.TableName, TableStatus: types.TableStatusActive,
		KeySchema: in.KeySchema, AttributeDefinitions: in.AttributeDefinitions}
	for _, g := range in.GlobalSecondaryIndexes {
		td.GlobalSecondaryIndexes = append(td.GlobalSecondaryIndexes, types.GlobalSecondaryIndexDescription{
			IndexName: g.IndexName, KeySchema: g.KeySchema, Projection: g.Projection})
	}
	if f.tables == nil {
		f.tables = map[string]*types.TableDescription{}
	}
	f.tables[name] = td
	return &dynamodb.CreateTableOutput{TableDescription: td}, nil
}

// EnsureTable creates a missing table only when asked, leaves a fitting one
// alone, refuses one that does not fit, and names the step that failed.
func TestEnsureTable(t *testing.T) {
	m, err := mapping.Parse("m.yaml", []byte(schemaMapping))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	denied := &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "no"}
	numberPK := describe(m)
	setType(numberPK, "PK", types.ScalarAttributeTypeN)
	cases := []struct {
		name        string
		api         *fakeTables
		create      bool
		wantCreated bool
		wantErr     string // "" for none
		wantIs      error
	}{
		{name: "missing, not asked to create", api: &fakeTables{}, create: false,
			wantErr: "table does not exist: tbl (pass --create-table to create it from the mapping)", wantIs: ErrTableNotFound},
		{name: "missing, created", api: &fakeTables{}, create: true, wantCreated: true},
		{name: "exists and fits", api: &fakeTables{tables: map[string]*types.TableDescription{"tbl": describe(m)}}, create: true},
		{name: "exists and does not fit", api: &fakeTables{tables: map[string]*types.TableDescription{"tbl": numberPK}}, create: true,
			wantErr: "table tbl does not match the mapping: key attribute PK is of type N: the mapping writes every key attribute as a string (S) unless it declares its type (partition_key_type, sort_key_type)"},
		{name: "CreateTable refused", api: &fakeTables{createErr: denied}, create: true,
			wantErr: "create table tbl: api error AccessDeniedException: no", wantIs: denied},
		{name: "the wait for ACTIVE fails", api: &fakeTables{afterCreate: denied}, create: true, wantCreated: true,
			wantErr: "wait for table tbl to become ACTIVE: api error AccessDeniedException: no", wantIs: denied},
		{name: "DescribeTable refused", api: &fakeTables{describeErr: denied}, create: true,
			wantErr: "describe table tbl: api error AccessDeniedException: no", wantIs: denied},
		{name: "being created by another client, fits", api: &fakeTables{tables: map[string]*types.TableDescription{"tbl": describe(m)}, creating: 2}},
		{name: "being created by another client, does not fit", api: &fakeTables{tables: map[string]*types.TableDescription{"tbl": numberPK}, creating: 2},
			wantErr: "table tbl does not match the mapping: key attribute PK is of type N: the mapping writes every key attribute as a string (S) unless it declares its type (partition_key_type, sort_key_type)"},
		{name: "created by another client since DescribeTable, fits", api: &fakeTables{racer: describe(m), creating: 2}, create: true},
		{name: "created by another client since DescribeTable, does not fit", api: &fakeTables{racer: numberPK, creating: 2}, create: true,
			wantErr: "table tbl does not match the mapping: key attribute PK is of type N: the mapping writes every key attribute as a string (S) unless it declares its type (partition_key_type, sort_key_type)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			created, err := EnsureTable(ctx, tc.api, m, tc.create)
			if created != tc.wantCreated {
				t.Errorf("created = %v, want %v", created, tc.wantCreated)
			}
			if got := fmt.Sprint(err); (tc.wantErr == "" && err != nil) || (tc.wantErr != "" && got != tc.wantErr) {
				t.Errorf("error %q, want %q", got, tc.wantErr)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error %v does not wrap %v", err, tc.wantIs)
			}
			wantCreates := 0
			if tc.wantCreated {
				wantCreates = 1
			}
			if len(tc.api.created) != wantCreates {
				t.Errorf("%d CreateTable calls, want %d", len(tc.api.created), wantCreates)
			}
			// A table CREATING is waited for until ACTIVE, and only then
			// checked: EnsureTable returns once it may be written.
			if tc.api.creatingSeen != tc.api.creating {
				t.Errorf("EnsureTable returned after %d of the %d answers CREATING", tc.api.creatingSeen, tc.api.creating)
			}
		})
	}
	t.Run("a created table passes its own check", func(t *testing.T) {
		api := &fakeTables{}
		if _, err := EnsureTable(ctx, api, m, true); err != nil {
			t.Fatal(err)
		}
		if created, err := EnsureTable(ctx, api, m, true); created || err != nil {
			t.Errorf("second EnsureTable: created %v, %v; want false, nil", created, err)
		}
	})
}

// CheckTable reports whether the table exists and refuses one that does not
// fit, without creating anything.
func TestCheckTable(t *testing.T) {
	m, err := mapping.Parse("m.yaml", []byte(schemaMapping))
	if err != nil {
		t.Fatal(err)
	}
	noSK := describe(m)
	noSK.KeySchema = noSK.KeySchema[:1]
	cases := []struct {
		name       string
		api        *fakeTables
		wantExists bool
		wantErr    string
	}{
		{"missing", &fakeTables{}, false, ""},
		{"fits", &fakeTables{tables: map[string]*types.TableDescription{"tbl": describe(m)}}, true, ""},
		{"does not fit", &fakeTables{tables: map[string]*types.TableDescription{"tbl": noSK}}, true,
			"table tbl does not match the mapping: it has key schema (partition key PK), the mapping expects (partition key PK, sort key SK)"},
		{"DescribeTable fails", &fakeTables{describeErr: errors.New("dial tcp: connection refused")}, false,
			"cannot reach DynamoDB (DescribeTable tbl, at most 3 attempts in 20s): dial tcp: connection refused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			exists, err := CheckTable(context.Background(), tc.api, m)
			if exists != tc.wantExists {
				t.Errorf("exists = %v, want %v", exists, tc.wantExists)
			}
			if got := fmt.Sprint(err); (tc.wantErr == "" && err != nil) || (tc.wantErr != "" && got != tc.wantErr) {
				t.Errorf("error %q, want %q", got, tc.wantErr)
			}
			var tm *TableMismatchError
			if errors.As(err, &tm) != strings.Contains(tc.wantErr, "does not match") {
				t.Errorf("error %v: *TableMismatchError %v", err, tm != nil)
			}
			if len(tc.api.created) != 0 {
				t.Errorf("CheckTable created %v", tc.api.created)
			}
		})
	}
}

// DescribeTable tells an unreachable DynamoDB from DynamoDB's own errors,
// and a missing table from both; a run's own cancellation is not reported
// as DynamoDB being unreachable.
func TestDescribeTableErrors(t *testing.T) {
	netErr := errors.New("dial tcp 127.0.0.1:1: connection refused")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name    string
		ctx     context.Context
		err     error
		wantErr string
	}{
		{"missing", context.Background(), &types.ResourceNotFoundException{Message: aws.String("not found")}, ""},
		{"unreachable", context.Background(), netErr, "cannot reach DynamoDB (DescribeTable tbl, at most 3 attempts in 20s): " + netErr.Error()},
		{"run cancelled", cancelled, netErr, "describe table tbl: " + netErr.Error()},
		{"API error", context.Background(), &smithy.GenericAPIError{Code: "ThrottlingException", Message: "slow down"},
			"describe table tbl: api error ThrottlingException: slow down"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			td, err := DescribeTable(tc.ctx, &fakeTables{describeErr: tc.err}, "tbl")
			if td != nil {
				t.Errorf("description %v, want none", td)
			}
			if got := fmt.Sprint(err); (tc.wantErr == "" && err != nil) || (tc.wantErr != "" && got != tc.wantErr) {
				t.Errorf("error %q, want %q", got, tc.wantErr)
			}
			if err != nil && !errors.Is(err, tc.err) {
				t.Errorf("error %v does not wrap %v", err, tc.err)
			}
		})
	}
}

// A mapping of N and B key attributes creates them so typed, matches a
// table so typed, and names a table of other types, attribute by
// attribute.
func TestCheckSchemaTypedKeys(t *testing.T) {
	m, err := mapping.Parse("m.yaml", []byte(`table:
  name: tbl
  sort_key_type: N
  gsis:
    - {name: ByDigest, partition_key: DPK, partition_key_type: B, sort_key: DSK, sort_key_type: N}
entities:
  E: {source: {table: e}, pk: "P#${id}", sk: "${n}", indexes: {ByDigest: {pk: "${d}", sk: "${n}"}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	in := CreateTableInput(m)
	var defs []string
	for _, d := range in.AttributeDefinitions {
		defs = append(defs, aws.ToString(d.AttributeName)+":"+string(d.AttributeType))
	}
	if d := cmp.Diff([]string{"PK:S", "SK:N", "DPK:B", "DSK:N"}, defs); d != "" {
		t.Errorf("AttributeDefinitions (-want +got):\n%s", d)
	}
	if err := checkSchema(m, describe(m)); err != nil {
		t.Errorf("checkSchema of the table the mapping creates: %v", err)
	}
	td := describe(m)
	setType(td, "SK", types.ScalarAttributeTypeS)
	setType(td, "DPK", types.ScalarAttributeTypeS)
	setType(td, "PK", types.ScalarAttributeTypeN)
	var tm *TableMismatchError
	if err := checkSchema(m, td); !errors.As(err, &tm) {
		t.Fatalf("checkSchema = %v, want a mismatch", err)
	}
	want := []string{
		"key attribute PK is of type N: the mapping writes every key attribute as a string (S) unless it declares its type (partition_key_type, sort_key_type)",
		"key attribute SK is of type S, the mapping declares N",
		"key attribute DPK is of type S, the mapping declares B",
	}
	if d := cmp.Diff(want, tm.Differences); d != "" {
		t.Errorf("differences (-want +got):\n%s", d)
	}
}
