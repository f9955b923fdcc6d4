package load

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// settingsMapping uses every table setting pg2dynamo sends: warm
// throughput and maximum on-demand throughput (table and GSI), deletion
// protection, point-in-time recovery and a GSI with multi-attribute keys.
const settingsMapping = `table:
  name: tbl
  warm_throughput: {read_units_per_second: 15000, write_units_per_second: 5000}
  max_read_request_units: 20000
  max_write_request_units: 8000
  point_in_time_recovery: {enabled: true, recovery_period_in_days: 7}
  deletion_protection: true
  gsis:
    - name: GSI1
      partition_key: GSI1PK
      warm_throughput: {read_units_per_second: 13000}
      max_write_request_units: 900
    - name: ByTenant
      partition_keys: [{name: tenant_id, type: S}, {name: region, type: S}]
      sort_keys: [{name: created_at, type: S}, {name: order_no, type: N}]
      projection: KEYS_ONLY
entities:
  E:
    source: {table: e}
    pk: E#${id}
    sk: E
    indexes:
      GSI1: {pk: "G#${g}"}
`

// settingsRequest is the CreateTable request settingsMapping gives, as the
// SDK serializes it onto the wire.
const settingsRequest = `{
  "AttributeDefinitions": [
    {"AttributeName": "PK", "AttributeType": "S"},
    {"AttributeName": "SK", "AttributeType": "S"},
    {"AttributeName": "GSI1PK", "AttributeType": "S"},
    {"AttributeName": "tenant_id", "AttributeType": "S"},
    {"AttributeName": "region", "AttributeType": "S"},
    {"AttributeName": "created_at", "AttributeType": "S"},
    {"AttributeName": "order_no", "AttributeType": "N"}
  ],
  "BillingMode": "PAY_PER_REQUEST",
  "DeletionProtectionEnabled": true,
  "GlobalSecondaryIndexes": [
    {
      "IndexName": "GSI1",
      "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"}],
      "OnDemandThroughput": {"MaxWriteRequestUnits": 900},
      "Projection": {"ProjectionType": "ALL"},
      "WarmThroughput": {"ReadUnitsPerSecond": 13000}
    },
    {
      "IndexName": "ByTenant",
      "KeySchema": [
        {"AttributeName": "tenant_id", "KeyType": "HASH"},
        {"AttributeName": "region", "KeyType": "HASH"},
        {"AttributeName": "created_at", "KeyType": "RANGE"},
        {"AttributeName": "order_no", "KeyType": "RANGE"}
      ],
      "Projection": {"ProjectionType": "KEYS_ONLY"}
    }
  ],
  "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
  "OnDemandThroughput": {"MaxReadRequestUnits": 20000, "MaxWriteRequestUnits": 8000},
  "TableName": "tbl",
  "WarmThroughput": {"ReadUnitsPerSecond": 15000, "WriteUnitsPerSecond": 5000}
}`

// recordedCall is one request a recordingHTTP received.
type recordedCall struct {
	op   string // X-Amz-Target without the service prefix: "CreateTable"
	body any    // the JSON body, decoded
}

// recordingHTTP is DynamoDB at the HTTP seam of a real *dynamodb.Client:
// it records every request and answers with canned responses (a missing
// table until CreateTable, then ACTIVE). The client's own middleware runs
// in full: validation of the input, serialization and signing.
type recordingHTTP struct {
	mu      sync.Mutex
	calls   []recordedCall
	created bool
	// fail, if set, is the error body answered (HTTP 400) to that operation.
	fail map[string]string
}

func (h *recordingHTTP) Do(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	var body any
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, fmt.Errorf("request body is not JSON: %w", err)
	}
	_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	h.calls = append(h.calls, recordedCall{op, body})
	status, answer := http.StatusOK, "{}"
	switch {
	case h.fail[op] != "":
		status, answer = http.StatusBadRequest, h.fail[op]
	case op == "DescribeTable" && !h.created:
		status, answer = http.StatusBadRequest, `{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"Requested resource not found"}`
	case op == "DescribeTable":
		answer = `{"Table":{"TableName":"tbl","TableStatus":"ACTIVE"}}`
	case op == "CreateTable":
		h.created = true
		answer = `{"TableDescription":{"TableName":"tbl","TableStatus":"CREATING"}}`
	case op == "UpdateContinuousBackups":
		answer = `{"ContinuousBackupsDescription":{"ContinuousBackupsStatus":"ENABLED","PointInTimeRecoveryDescription":{"PointInTimeRecoveryStatus":"ENABLED","RecoveryPeriodInDays":7}}}`
	}
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body: io.NopCloser(strings.NewReader(answer)), Request: r}, nil
}

func (h *recordingHTTP) ops() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, c := range h.calls {
		out = append(out, c.op)
	}
	return out
}

// body returns the decoded body of the first call of op, or nil.
func (h *recordingHTTP) body(op string) any {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.calls {
		if c.op == op {
			return c.body
		}
	}
	return nil
}

func recordingClient(h *recordingHTTP) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String("http://dynamodb.invalid"),
		Credentials:      credentials.NewStaticCredentialsProvider("key", "secret", ""),
		HTTPClient:       h,
		RetryMaxAttempts: 1,
	})
}

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// EnsureTable, through a real SDK client, sends a CreateTable request that
// passes the SDK's validation and carries every setting, waits for the
// table, then enables point-in-time recovery with its recovery period.
func TestEnsureTableSendsSettings(t *testing.T) {
	m, err := mapping.Parse("m.yaml", []byte(settingsMapping))
	if err != nil {
		t.Fatal(err)
	}
	h := &recordingHTTP{}
	created, err := EnsureTable(context.Background(), recordingClient(h), m, true)
	if err != nil || !created {
		t.Fatalf("EnsureTable: created %v, %v; want true, nil", created, err)
	}
	if d := cmp.Diff([]string{"DescribeTable", "CreateTable", "DescribeTable", "UpdateContinuousBackups"}, h.ops()); d != "" {
		t.Errorf("operations (-want +got):\n%s", d)
	}
	if d := cmp.Diff(decodeJSON(t, settingsRequest), h.body("CreateTable")); d != "" {
		t.Errorf("CreateTable request (-want +got):\n%s", d)
	}
	wantPITR := `{"TableName": "tbl", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true, "RecoveryPeriodInDays": 7}}`
	if d := cmp.Diff(decodeJSON(t, wantPITR), h.body("UpdateContinuousBackups")); d != "" {
		t.Errorf("UpdateContinuousBackups request (-want +got):\n%s", d)
	}
}

// The harness above does run the SDK's validation: an input the SDK
// refuses never reaches the wire.
func TestRecordingClientValidates(t *testing.T) {
	m, err := mapping.Parse("m.yaml", []byte(settingsMapping))
	if err != nil {
		t.Fatal(err)
	}
	noProjection := CreateTableInput(m)
	noProjection.GlobalSecondaryIndexes[1].Projection = nil
	noEnabled := UpdateContinuousBackupsInput(m)
	noEnabled.PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled = nil
	h := &recordingHTTP{}
	client := recordingClient(h)
	ctx := context.Background()
	_, err1 := client.CreateTable(ctx, noProjection)
	_, err2 := client.UpdateContinuousBackups(ctx, noEnabled)
	for _, err := range []error{err1, err2} {
		var ip smithy.InvalidParamsError
		if !errors.As(err, &ip) {
			t.Errorf("error %v, want a smithy.InvalidParamsError", err)
		}
	}
	if ops := h.ops(); len(ops) > 0 {
		t.Errorf("invalid requests were sent: %v", ops)
	}
}

// UpdateContinuousBackupsInput follows the mapping: nothing without
// point-in-time recovery (or with it disabled), DynamoDB's default period
// when none is given.
func TestUpdateContinuousBackupsInput(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"", "null"},
		{"  point_in_time_recovery: {enabled: false}\n", "null"},
		{"  point_in_time_recovery: {enabled: true}\n", `{"TableName":"tbl","PointInTimeRecoverySpecification":{"PointInTimeRecoveryEnabled":true}}`},
		{"  point_in_time_recovery: {enabled: true, recovery_period_in_days: 35}\n",
			`{"TableName":"tbl","PointInTimeRecoverySpecification":{"PointInTimeRecoveryEnabled":true,"RecoveryPeriodInDays":35}}`},
	} {
		m, err := mapping.Parse("m.yaml", []byte("table:\n  name: tbl\n"+tc.yaml+"entities:\n  E: {source: {table: e}, pk: E, sk: E}\n"))
		if err != nil {
			t.Fatal(err)
		}
		in := UpdateContinuousBackupsInput(m)
		var got any
		if in != nil {
			got = map[string]any{"TableName": aws.ToString(in.TableName), "PointInTimeRecoverySpecification": pitrJSON(in.PointInTimeRecoverySpecification)}
		}
		if d := cmp.Diff(decodeJSON(t, tc.want), got); d != "" {
			t.Errorf("%q: request (-want +got):\n%s", tc.yaml, d)
		}
	}
}

func pitrJSON(s *types.PointInTimeRecoverySpecification) any {
	out := map[string]any{"PointInTimeRecoveryEnabled": aws.ToBool(s.PointInTimeRecoveryEnabled)}
	if s.RecoveryPeriodInDays != nil {
		out["RecoveryPeriodInDays"] = float64(*s.RecoveryPeriodInDays)
	}
	return out
}

// fakeBackups adds UpdateContinuousBackups to fakeTables.
type fakeBackups struct {
	*fakeTables
	got []*dynamodb.UpdateContinuousBackupsInput
	err error
}

func (f *fakeBackups) UpdateContinuousBackups(_ context.Context, in *dynamodb.UpdateContinuousBackupsInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateContinuousBackupsOutput, error) {
	f.got = append(f.got, in)
	if f.err != nil {
		return nil, f.err
	}
	return &dynamodb.UpdateContinuousBackupsOutput{}, nil
}

// Enabling point-in-time recovery never fails silently: a client that
// cannot is refused before anything is created, and a refused
// UpdateContinuousBackups fails the run, saying the table was created.
// An existing table is left as it is.
func TestEnsureTablePointInTimeRecovery(t *testing.T) {
	m, err := mapping.Parse("m.yaml", []byte(settingsMapping))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t.Run("a client without UpdateContinuousBackups", func(t *testing.T) {
		api := &fakeTables{}
		created, err := EnsureTable(ctx, api, m, true)
		if created || !errors.Is(err, ErrNoContinuousBackups) {
			t.Errorf("created %v, error %v; want false and ErrNoContinuousBackups", created, err)
		}
		if len(api.created) > 0 {
			t.Errorf("created %v", api.created)
		}
	})
	t.Run("UpdateContinuousBackups refused", func(t *testing.T) {
		denied := &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "no"}
		api := &fakeBackups{fakeTables: &fakeTables{}, err: denied}
		created, err := EnsureTable(ctx, api, m, true)
		want := "table tbl was created, but enabling point-in-time recovery failed (enable it with aws dynamodb update-continuous-backups; a re-run does not): api error AccessDeniedException: no"
		if !created || fmt.Sprint(err) != want || !errors.Is(err, denied) {
			t.Errorf("created %v, error %v; want true, %q wrapping the API error", created, err, want)
		}
	})
	t.Run("an existing table", func(t *testing.T) {
		api := &fakeBackups{fakeTables: &fakeTables{tables: map[string]*types.TableDescription{"tbl": describe(m)}}}
		if created, err := EnsureTable(ctx, api, m, true); created || err != nil {
			t.Errorf("created %v, %v; want false, nil", created, err)
		}
		if len(api.got) > 0 {
			t.Errorf("UpdateContinuousBackups called on an existing table")
		}
	})
}

// checkSchema compares a multi-attribute GSI's key schema, element by
// element in order, and its attributes' declared types.
func TestCheckSchemaMultiAttribute(t *testing.T) {
	m, err := mapping.Parse("m.yaml", []byte(settingsMapping))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		alter func(td *types.TableDescription)
		want  []string
	}{
		{"as created", func(*types.TableDescription) {}, nil},
		{"sort key attributes swapped", func(td *types.TableDescription) {
			ks := td.GlobalSecondaryIndexes[1].KeySchema
			ks[2], ks[3] = ks[3], ks[2]
		}, []string{"GSI ByTenant has key schema (partition key tenant_id, partition key region, sort key order_no, sort key created_at), " +
			"the mapping expects (partition key tenant_id, partition key region, sort key created_at, sort key order_no)"}},
		{"one partition key attribute", func(td *types.TableDescription) {
			ks := td.GlobalSecondaryIndexes[1].KeySchema
			td.GlobalSecondaryIndexes[1].KeySchema = append(ks[:1:1], ks[2:]...)
		}, []string{"GSI ByTenant has key schema (partition key tenant_id, sort key created_at, sort key order_no), " +
			"the mapping expects (partition key tenant_id, partition key region, sort key created_at, sort key order_no)"}},
		{"key attribute types", func(td *types.TableDescription) {
			setType(td, "order_no", types.ScalarAttributeTypeS)
			setType(td, "tenant_id", types.ScalarAttributeTypeB)
			setType(td, "GSI1PK", types.ScalarAttributeTypeN)
		}, []string{
			"key attribute GSI1PK is of type N: the mapping writes every key attribute as a string (S) unless it declares its type (partition_key_type, sort_key_type)",
			"key attribute tenant_id is of type B, the mapping declares S",
			"key attribute order_no is of type S, the mapping declares N",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			td := describe(m)
			tc.alter(td)
			var got []string
			var tm *TableMismatchError
			if err := checkSchema(m, td); errors.As(err, &tm) {
				got = tm.Differences
			} else if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("differences (-want +got):\n%s", d)
			}
		})
	}
}

// What dynalite, the test server, does with the settings: it accepts and
// ignores warm throughput, maximum on-demand throughput and deletion
// protection, has no UpdateContinuousBackups, and refuses a GSI key schema
// of more than one HASH or RANGE element. So migrate --create-table
// against it fails, saying why, for a mapping with point-in-time recovery
// or multi-attribute keys; the requests themselves are checked above
// (TestEnsureTableSendsSettings). Should dynalite learn them, this test
// says so.
func TestEnsureTableDynalite(t *testing.T) {
	client, err := NewClient(context.Background(), ClientConfig{EndpointURL: testenv.SharedDynalite(t).Endpoint, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	parse := func(t *testing.T, yaml string) *mapping.Mapping {
		m, err := mapping.Parse("m.yaml", []byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		m.Table.Name = testenv.TableName("settings")
		return m
	}
	withoutMulti := settingsMapping[:strings.Index(settingsMapping, "    - name: ByTenant")] + settingsMapping[strings.Index(settingsMapping, "entities:"):]
	t.Run("point-in-time recovery", func(t *testing.T) {
		m := parse(t, withoutMulti)
		created, err := EnsureTable(ctx, client, m, true)
		var ae smithy.APIError
		if !created || !errors.As(err, &ae) || ae.ErrorCode() != "UnknownOperationException" {
			t.Fatalf("created %v, error %v; want the table created and dynalite's UnknownOperationException", created, err)
		}
		out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(m.Table.Name)})
		if err != nil {
			t.Fatal(err)
		}
		if out.Table.WarmThroughput != nil || out.Table.OnDemandThroughput != nil || out.Table.DeletionProtectionEnabled != nil {
			t.Errorf("dynalite now describes the settings: warm %v, on demand %v, deletion protection %v",
				out.Table.WarmThroughput, out.Table.OnDemandThroughput, out.Table.DeletionProtectionEnabled)
		}
		if created, err := EnsureTable(ctx, client, m, true); created || err != nil {
			t.Errorf("second EnsureTable: created %v, %v; want the existing table to fit", created, err)
		}
	})
	t.Run("multi-attribute keys", func(t *testing.T) {
		m := parse(t, strings.Replace(settingsMapping, "  point_in_time_recovery: {enabled: true, recovery_period_in_days: 7}\n", "", 1))
		created, err := EnsureTable(ctx, client, m, true)
		var ae smithy.APIError
		if created || !errors.As(err, &ae) || ae.ErrorCode() != "ValidationException" || !strings.HasPrefix(err.Error(), "create table "+m.Table.Name+": ") {
			t.Fatalf("created %v, error %v; want CreateTable refused with a ValidationException", created, err)
		}
		if !strings.Contains(err.Error(), "GSI ByTenant has multi-attribute keys") {
			t.Errorf("the error does not name the GSI with multi-attribute keys: %v", err)
		}
	})
}
