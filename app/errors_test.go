package app

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

const accountsSQL = `
CREATE TABLE accounts (id integer PRIMARY KEY, owner text, balance numeric, score real);
INSERT INTO accounts VALUES
  (1, 'ann', 10.50, 1.5),
  (2, NULL, 3, 2),
  (3, 'cid', 123456789012345678901234567890123456789, 3),
  (4, 'dee', 0, 'NaN'),
  (5, 'eve', -0.000100, NULL);`

const accountsMapping = `name: accounts
table:
  name: accounts
entities:
  Account:
    source: {table: accounts}
    pk: OWNER#${owner}
    sk: ACCOUNT#${id}
`

func writeMapping(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mapping.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func tableExists(t *testing.T, table string) bool {
	t.Helper()
	_, err := dynamoClient(t).DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	var nf *types.ResourceNotFoundException
	if errors.As(err, &nf) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// A mapping that names things wrongly is refused before anything is
// written, with the file, line, column and path of the mistake.
func TestMigrateMappingErrors(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, accountsSQL)
	cases := []struct {
		name, mapping, want string
	}{
		{
			name:    "column typo",
			mapping: strings.Replace(accountsMapping, "${id}", "${idd}", 1),
			want:    `mapping.yaml:8:9: entities.Account.sk: unknown column "idd" (did you mean "id"?); accounts has columns: id, owner, balance, score`,
		},
		{
			name:    "unknown mapping field",
			mapping: accountsMapping + "    partition: x\n",
			want:    `mapping.yaml:9:5: entities.Account.partition: unknown field "partition"; expected one of: source, pk, sk, indexes, attributes, type, embed, duplicate, aggregates, ids, mirror`,
		},
		{
			name:    "unclosed placeholder",
			mapping: strings.Replace(accountsMapping, "${owner}", "${owner", 1),
			want:    `mapping.yaml:7:15: entities.Account.pk: template "OWNER#${owner": unclosed "${": expected "}" after the column name (at character 7)`,
		},
		{
			name:    "unknown table",
			mapping: strings.Replace(accountsMapping, "{table: accounts}", "{table: acounts}", 1),
			want:    `mapping.yaml:6:21: entities.Account.source.table: relation "acounts" does not exist`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			table := testenv.TableName("bad")
			r := runCLI(t, migrateArgs(t, writeMapping(t, tc.mapping), url, table, "--create-table")...)
			if r.code != ExitUsage {
				t.Fatalf("exit %d, want %d (usage)\nstderr:\n%s", r.code, ExitUsage, r.stderr)
			}
			// The message names the file by the path given; compare from its base name.
			line, _, _ := strings.Cut(r.stderr[strings.Index(r.stderr, "mapping.yaml"):], "\n")
			if !strings.HasPrefix(line, tc.want) {
				t.Errorf("error line:\n got %s\nwant %s…", line, tc.want)
			}
			if tableExists(t, table) {
				t.Errorf("table %s was created although the mapping is invalid", table)
			}
		})
	}
}

// Rows that cannot become items are listed with their reason; every other
// row is written, and the summary reconciles.
func TestMigrateRejectsBadRows(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, accountsSQL)
	table := testenv.TableName("accounts")
	args := migrateArgs(t, writeMapping(t, accountsMapping), url, table, "--create-table")
	rejectsPath := rejectsPath(args)

	r := runCLI(t, args...)
	if r.code != ExitRejected {
		t.Fatalf("exit %d, want %d (rows rejected)\nstdout:\n%s\nstderr:\n%s", r.code, ExitRejected, r.stdout, r.stderr)
	}
	want := []pipeline.Reject{
		{Entity: "Account", SourceKey: map[string]any{"id": "2", "owner": nil}, Column: "owner",
			Reason: `NULL in key attribute PK (template "OWNER#${owner}")`},
		{Entity: "Account", SourceKey: map[string]any{"id": "3", "owner": "cid"}, Column: "balance",
			Reason: "number with 39 significant digits: DynamoDB numbers hold at most 38"},
		{Entity: "Account", SourceKey: map[string]any{"id": "4", "owner": "dee"}, Column: "score",
			Reason: "NaN and Infinity are not DynamoDB numbers"},
	}
	if d := cmp.Diff(want, readRejects(t, rejectsPath)); d != "" {
		t.Errorf("rejects file (-want +got):\n%s", d)
	}
	got := testenv.CanonicalItems(scanAll(t, dynamoClient(t), table))
	wantItems := []string{
		`{"PK":{"S":"OWNER#ann"},"SK":{"S":"ACCOUNT#0000000001"},"balance":{"N":"10.5"},"id":{"N":"1"},"owner":{"S":"ann"},"score":{"N":"1.5"},"type":{"S":"Account"}}`,
		`{"PK":{"S":"OWNER#eve"},"SK":{"S":"ACCOUNT#0000000005"},"balance":{"N":"-0.0001"},"id":{"N":"5"},"owner":{"S":"eve"},"type":{"S":"Account"}}`,
	}
	if d := cmp.Diff(wantItems, got); d != "" {
		t.Errorf("table (-want +got):\n%s", d)
	}
	if got := summaryTotal(t, r.stdout); got != [4]string{"5", "2", "3", "0"} {
		t.Errorf("summary does not reconcile 5 rows = 2 written + 3 rejected:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "3 rows rejected: see "+rejectsPath) {
		t.Errorf("stderr does not point at the rejects file:\n%s", r.stderr)
	}
}

func readRejects(t *testing.T, path string) []pipeline.Reject {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []pipeline.Reject
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r pipeline.Reject
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("rejects line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

// Neither the PostgreSQL password nor the AWS secret key appears in what
// pg2dynamo prints when a run fails.
func TestSecretsStayOutOfOutput(t *testing.T) {
	const pgPassword, awsSecret = "pg-Sekr1t-pw", "aws-Sekr1t-key"
	t.Setenv("AWS_SECRET_ACCESS_KEY", awsSecret)
	mappingFile := writeMapping(t, accountsMapping)
	good := testenv.NewDatabase(t)
	testenv.Exec(t, good, accountsSQL)
	withPassword := strings.Replace(good, "postgres@", "postgres:"+pgPassword+"@", 1)
	cases := []struct {
		name, source string
		extra        []string
		want         string // the message says this
	}{
		{"database that does not exist", "postgres://postgres:" + pgPassword + "@127.0.0.1:5432/pg2dynamo_no_such_db", nil,
			`pg2dynamo: connect to source postgres://postgres@127.0.0.1:5432/pg2dynamo_no_such_db: failed to connect to`},
		{"server that does not answer", "postgres://postgres:" + pgPassword + "@127.0.0.1:1/db?connect_timeout=2", nil,
			`pg2dynamo: connect to source postgres://postgres@127.0.0.1:1/db: failed to connect to`},
		{"malformed URL", "postgres://postgres:" + pgPassword + "@127.0.0.1:notaport/db", nil,
			`pg2dynamo: source: cannot parse`},
		{"DynamoDB that does not answer", withPassword, []string{"--endpoint-url", "http://127.0.0.1:1", "--max-attempts", "1"},
			`pg2dynamo: cannot reach DynamoDB (DescribeTable `},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, append(migrateArgs(t, mappingFile, tc.source, testenv.TableName("secret")), tc.extra...)...)
			if r.code != ExitFailed {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", r.code, ExitFailed, r.stderr)
			}
			if !strings.HasPrefix(r.stderr, tc.want) {
				t.Fatalf("error message:\n%s\nwant it to start %q", r.stderr, tc.want)
			}
			for _, secret := range []string{pgPassword, awsSecret} {
				if strings.Contains(r.stdout+r.stderr, secret) {
					t.Errorf("output contains a secret:\n%s%s", r.stdout, r.stderr)
				}
			}
		})
	}
}

// Rows that render the same key far apart (in different batches) are
// caught too: 1000 rows in 30 key groups give 30 items and 970 rejects.
func TestMigrateDuplicateKeysAcrossBatches(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE g (id integer PRIMARY KEY, grp integer);
		INSERT INTO g SELECT i, i % 30 FROM generate_series(1, 1000) i;`)
	table := testenv.TableName("g")
	args := migrateArgs(t, writeMapping(t, "name: groups\ntable: {name: groups}\nentities:\n  G:\n    source: {table: g}\n    pk: G#${grp}\n    sk: G\n"),
		url, table, "--create-table")
	r := runCLI(t, args...)
	if r.code != ExitRejected {
		t.Fatalf("exit %d, want %d\n%s%s", r.code, ExitRejected, r.stdout, r.stderr)
	}
	if n := len(readRejects(t, rejectsPath(args))); n != 970 {
		t.Errorf("%d rejects, want 970", n)
	}
	if n := len(scanAll(t, dynamoClient(t), table)); n != 30 {
		t.Errorf("%d items, want 30", n)
	}
	if got := summaryTotal(t, r.stdout); got != [4]string{"1000", "30", "970", "0"} {
		t.Errorf("summary does not reconcile 1000 = 30 + 970:\n%s", r.stdout)
	}
}

// fixtures load drops tables: it never falls back to DATABASE_URL or the
// PG* variables, and refuses to run without --source and --domain.
func TestFixturesLoadNeedsExplicitTarget(t *testing.T) {
	t.Setenv("DATABASE_URL", testenv.NewDatabase(t))
	for _, args := range [][]string{
		{"fixtures", "load"},
		{"fixtures", "load", "--domain", "tickets"},
		{"fixtures", "load", "--source", "postgres://127.0.0.1/x"},
		{"fixtures", "load", "--source", "postgres://127.0.0.1/x", "--domain", "tickets", "--scale", "0"},
		{"fixtures", "bogus"},
	} {
		r := runCLI(t, args...)
		if r.code != ExitUsage || !strings.HasPrefix(r.stderr, "pg2dynamo: ") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d with a message", args, r.code, r.stderr, ExitUsage)
		}
	}
}

// A run that succeeds with rejects writes neither the PostgreSQL password
// nor the AWS secret into its output, rejects, checkpoint or reports.
func TestSecretsStayOutOfFiles(t *testing.T) {
	const pgPassword, awsSecret = "pg-Sekr1t-pw2", "aws-Sekr1t-key2"
	t.Setenv("AWS_SECRET_ACCESS_KEY", awsSecret)
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, accountsSQL)
	withPassword := strings.Replace(url, "postgres@", "postgres:"+pgPassword+"@", 1)
	mappingFile := writeMapping(t, accountsMapping)
	table := testenv.TableName("secret")
	dir := t.TempDir()
	args := migrateArgs(t, mappingFile, withPassword, table, "--create-table")
	r1 := runCLI(t, args...)
	r2 := runCLI(t, "verify", "--mapping", mappingFile, "--source", withPassword, "--endpoint-url", dynalite(t).Endpoint,
		"--table", table, "--report-json", filepath.Join(dir, "r.json"), "--html", filepath.Join(dir, "r.html"))
	if r1.code != ExitRejected || r2.code != ExitOK {
		t.Fatalf("migrate exit %d, verify exit %d\n%s%s", r1.code, r2.code, r1.stderr, r2.stderr)
	}
	files := []string{rejectsPath(args), checkpointPath(args), filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html")}
	texts := []string{r1.stdout + r1.stderr + r2.stdout + r2.stderr}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	for i, text := range texts {
		for _, secret := range []string{pgPassword, awsSecret} {
			if strings.Contains(text, secret) {
				t.Errorf("a secret is in %v", append([]string{"the output"}, files...)[i])
			}
		}
	}
}
