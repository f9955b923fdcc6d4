package plan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/plan"
)

// settingsFile uses every table setting (see its comment).
var settingsFile = filepath.Join("testdata", "settings.yaml")

// checkGolden compares got with the golden file at path, or rewrites it
// under -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s (-want +got):\n%s", path, d)
	}
}

// TestSettingsGolden renders testdata/settings.yaml in every format, and its
// CreateTable request and CloudFormation resource alone, and compares them
// with testdata/settings.*.golden (-update rewrites them).
func TestSettingsGolden(t *testing.T) {
	m, err := mapping.Load(settingsFile)
	if err != nil {
		t.Fatal(err)
	}
	d := plan.Build(m)
	for _, format := range []string{plan.FormatText, plan.FormatMarkdown, plan.FormatJSON} {
		t.Run(format, func(t *testing.T) {
			var b bytes.Buffer
			if err := plan.Render(&b, d, format); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "settings."+format+".golden"), b.Bytes())
		})
	}
	for name, v := range map[string]any{"create-table": d.CreateTable, "cloudformation": d.CloudFormation} {
		t.Run(name, func(t *testing.T) {
			b, err := json.MarshalIndent(v, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "settings."+name+".json.golden"), append(b, '\n'))
		})
	}
}

// recorder is DynamoDB at the HTTP seam of a real *dynamodb.Client: it
// keeps the body of each request, by operation, and answers "{}".
type recorder struct{ bodies map[string][]any }

func (r *recorder) Do(req *http.Request) (*http.Response, error) {
	raw, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	var body any
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, err
	}
	_, op, _ := strings.Cut(req.Header.Get("X-Amz-Target"), ".")
	r.bodies[op] = append(r.bodies[op], body)
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

// roundTrip decodes printed (JSON) into a new *T.
func roundTrip[T any](t *testing.T, printed map[string]any) *T {
	t.Helper()
	b, err := json.Marshal(printed)
	if err != nil {
		t.Fatal(err)
	}
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The requests plan prints for the settings are the ones pg2dynamo sends:
// the printed JSON, read back into the SDK's input and sent through a real
// client (whose validation it passes), goes onto the wire exactly as
// printed, and exactly as load.CreateTableInput and
// load.UpdateContinuousBackupsInput go. The CloudFormation resource is the
// CreateTable request plus the point-in-time recovery specification.
func TestSettingsRequestsAsSent(t *testing.T) {
	m, err := mapping.Load(settingsFile)
	if err != nil {
		t.Fatal(err)
	}
	d := plan.Build(m)
	if d.UpdateContinuousBackups == nil {
		t.Fatal("no UpdateContinuousBackups request for a mapping that enables point-in-time recovery")
	}
	r := &recorder{bodies: map[string][]any{}}
	client := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://dynamodb.invalid"),
		Credentials: credentials.NewStaticCredentialsProvider("key", "secret", ""), HTTPClient: r, RetryMaxAttempts: 1})
	ctx := context.Background()
	for _, in := range []*dynamodb.CreateTableInput{roundTrip[dynamodb.CreateTableInput](t, d.CreateTable), load.CreateTableInput(m)} {
		if _, err := client.CreateTable(ctx, in); err != nil {
			t.Fatalf("CreateTable: %v", err)
		}
	}
	for _, in := range []*dynamodb.UpdateContinuousBackupsInput{roundTrip[dynamodb.UpdateContinuousBackupsInput](t, d.UpdateContinuousBackups), load.UpdateContinuousBackupsInput(m)} {
		if _, err := client.UpdateContinuousBackups(ctx, in); err != nil {
			t.Fatalf("UpdateContinuousBackups: %v", err)
		}
	}
	for op, printed := range map[string]map[string]any{"CreateTable": d.CreateTable, "UpdateContinuousBackups": d.UpdateContinuousBackups} {
		sent := r.bodies[op]
		if len(sent) != 2 {
			t.Fatalf("%s: %d requests sent, want 2", op, len(sent))
		}
		if diff := cmp.Diff(jsonValue(t, printed), sent[0]); diff != "" {
			t.Errorf("%s: the printed request as sent (-printed +sent):\n%s", op, diff)
		}
		if diff := cmp.Diff(sent[1], sent[0]); diff != "" {
			t.Errorf("%s: the printed request differs from the one load builds (-load +printed):\n%s", op, diff)
		}
	}

	props := d.CloudFormation["Resources"].(map[string]any)["Orders2026Table"].(map[string]any)["Properties"].(map[string]any)
	rest := maps.Clone(props)
	delete(rest, "PointInTimeRecoverySpecification")
	if diff := cmp.Diff(d.CreateTable, rest); diff != "" {
		t.Errorf("CloudFormation properties besides PointInTimeRecoverySpecification (-CreateTable +CloudFormation):\n%s", diff)
	}
	if diff := cmp.Diff(d.UpdateContinuousBackups["PointInTimeRecoverySpecification"], props["PointInTimeRecoverySpecification"]); diff != "" {
		t.Errorf("PointInTimeRecoverySpecification (-UpdateContinuousBackups +CloudFormation):\n%s", diff)
	}
}

// jsonValue is v as encoding/json decodes it (numbers as float64).
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
