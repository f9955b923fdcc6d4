package plan_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/plan"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestMain(m *testing.M) { testenv.Main(m) }

// mappings are the shipped mappings whose plans are golden files.
func mappings(t *testing.T) map[string]string {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{"northwind": filepath.Join(root, "examples", "northwind", "mapping.yaml")}
	for _, d := range []string{"customers", "tickets", "attendance"} {
		out[d] = filepath.Join(root, "fixtures", "mappings", "strategies", d+".yaml")
	}
	out["scores"] = filepath.Join(root, "plan", "testdata", "scores.yaml")
	out["keyvalue"] = filepath.Join(root, "plan", "testdata", "keyvalue.yaml")
	return out
}

// TestPlanGolden renders every shipped mapping in every format and compares
// with testdata/<mapping>.<format>.golden (-update rewrites them).
func TestPlanGolden(t *testing.T) {
	for name, file := range mappings(t) {
		m, err := mapping.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{plan.FormatText, plan.FormatMarkdown, plan.FormatJSON} {
			t.Run(name+"/"+format, func(t *testing.T) {
				var b bytes.Buffer
				if err := plan.Render(&b, plan.Build(m), format); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join("testdata", name+"."+format+".golden")
				if *update {
					if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(string(want), b.String()); d != "" {
					t.Errorf("%s (-want +got):\n%s", path, d)
				}
			})
		}
	}
}

// The CreateTable JSON plan prints is accepted by a DynamoDB-compatible
// server exactly as printed (sent as the body of a CreateTable call), and
// creates the key schema and GSIs the mapping declares.
func TestCreateTableJSONAcceptedAsIs(t *testing.T) {
	d := testenv.SharedDynalite(t)
	client, err := load.NewClient(context.Background(), load.ClientConfig{EndpointURL: d.Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	for name, file := range mappings(t) {
		t.Run(name, func(t *testing.T) {
			m, err := mapping.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			m.Table.Name = testenv.TableName(name)
			body, err := json.Marshal(plan.Build(m).CreateTable)
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest(http.MethodPost, d.Endpoint, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/x-amz-json-1.0")
			req.Header.Set("X-Amz-Target", "DynamoDB_20120810.CreateTable")
			req.Header.Set("X-Amz-Date", time.Now().UTC().Format("20060102T150405Z"))
			req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=0")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			respBody, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("CreateTable: HTTP %d: %s", resp.StatusCode, respBody)
			}
			out, err := client.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(m.Table.Name)})
			if err != nil {
				t.Fatal(err)
			}
			got := []string{keys(out.Table.KeySchema)}
			want := []string{"PK HASH, SK RANGE"}
			if m.Table.SortKey == "" {
				want = []string{"PK HASH"} // a table without a sort key
			}
			for _, g := range out.Table.GlobalSecondaryIndexes {
				got = append(got, aws.ToString(g.IndexName)+": "+keys(g.KeySchema))
			}
			for _, g := range m.Table.GSIs {
				want = append(want, fmt.Sprintf("%s: %s HASH, %s RANGE", g.Name, g.PartitionKey, g.SortKey))
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("created table (-want +got):\n%s", d)
			}
			// Every key attribute of the type the mapping declares.
			types := map[string]string{}
			for _, a := range out.Table.AttributeDefinitions {
				types[aws.ToString(a.AttributeName)] = string(a.AttributeType)
			}
			for _, a := range m.Table.KeyAttributeTypes() {
				if types[a.Name] != a.Type {
					t.Errorf("key attribute %s created of type %q, the mapping declares %s", a.Name, types[a.Name], a.Type)
				}
			}
		})
	}
}

func keys(ks []types.KeySchemaElement) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = aws.ToString(k.AttributeName) + " " + string(k.KeyType)
	}
	return strings.Join(parts, ", ")
}
