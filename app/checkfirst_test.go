package app

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// The tests of this file hold pg2dynamo to exit code 2's promise: what can
// be checked before anything is created or written is checked then, and
// refused with exit 2, by every command that reads the mapping.

// readCommands returns, for each command that checks the mapping against
// the source, its arguments over mappingFile, source and table (migrate
// with --create-table).
func readCommands(t *testing.T, mappingFile, source, table string) map[string][]string {
	endpoint := dynalite(t).Endpoint
	common := []string{"--mapping", mappingFile, "--source", source, "--endpoint-url", endpoint, "--table", table}
	return map[string][]string{
		"migrate":            migrateArgs(t, mappingFile, source, table, "--create-table"),
		"migrate --dry-run":  migrateArgs(t, mappingFile, source, table, "--dry-run"),
		"diff":               append([]string{"diff"}, common...),
		"verify":             append([]string{"verify"}, common...),
		"plan --with-source": {"plan", "--mapping", mappingFile, "--with-source", "--source", source},
	}
}

// errorLine returns the line of stderr that starts at the mapping file's
// base name, "" when there is none.
func errorLine(stderr, base, path string) string {
	for _, line := range strings.Split(stderr, "\n") {
		if i := strings.Index(line, base+":"); i >= 0 && strings.Contains(line, path) {
			return line[i:]
		}
	}
	return ""
}

// An access pattern whose parameter no entity has, or whose width differs
// from the items', is a mapping error found with the others: every command
// refuses it with exit 2, and migrate creates no table and writes nothing
// (before, migrate wrote every item, then exited 2 in its verification).
func TestAccessPatternsCheckedBeforeWriting(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, shopSQL)
	cases := []struct{ name, pattern, want string }{
		{"unknown parameter", `"PK = COUNTRY#${country}"`,
			`mapping.yaml:21:22: access_patterns.P.key_condition: parameter "country" is not a column of any entity's source`},
		{"parameters of no one source", `"PK = CUSTOMER#${customer_id} AND begins_with(SK, ${name})"`,
			`mapping.yaml:21:22: access_patterns.P.key_condition: no entity's source has all of the parameters [customer_id name] together: cannot sample them`},
	}
	for _, tc := range cases {
		mappingFile := writeMapping(t, planMapping+"access_patterns:\n  P: {key_condition: "+tc.pattern+"}\n")
		for name, args := range readCommands(t, mappingFile, url, testenv.TableName("pat")) {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				r := runCLI(t, args...)
				if r.code != ExitUsage {
					t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, ExitUsage, r.stdout, r.stderr)
				}
				if got := errorLine(r.stderr, "mapping.yaml", "access_patterns.P"); got != tc.want {
					t.Errorf("error:\n got %s\nwant %s\nstderr:\n%s", got, tc.want, r.stderr)
				}
				if strings.HasPrefix(name, "migrate") && tableExists(t, args[slices.Index(args, "--table")+1]) {
					t.Error("the table was created")
				}
			})
		}
	}
}

// A query source that cannot be read in pg2dynamo's read-only snapshot, or
// as the subquery pg2dynamo reads it as, is a mapping error located at the
// query: exit 2, and no table is created. Before, each surfaced only when
// the entity was read, after the table was created (exit 1).
func TestQuerySourcesCheckedBeforeWriting(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, shopSQL)
	const base = `table: {name: qqq}
entities:
  C:
    source: {query: "%s"}
    pk: C#${id}
    sk: C
`
	cases := []struct{ name, query, want string }{
		{"FOR UPDATE", "SELECT id, name FROM customers FOR UPDATE",
			`mapping.yaml:4:21: entities.C.source.query: the query locks rows (FOR UPDATE, FOR SHARE or a like clause): pg2dynamo reads in a read-only transaction, where PostgreSQL refuses locks, and its snapshot needs none: remove the locking clause`},
		{"FOR SHARE of a CTE", "WITH c AS (SELECT id, name FROM customers FOR SHARE) SELECT * FROM c",
			`mapping.yaml:4:21: entities.C.source.query: the query locks rows (FOR UPDATE, FOR SHARE or a like clause): pg2dynamo reads in a read-only transaction, where PostgreSQL refuses locks, and its snapshot needs none: remove the locking clause`},
		{"parameter", "SELECT id, name FROM customers WHERE id > $1",
			`mapping.yaml:4:21: entities.C.source.query: the query has 1 parameter ($1): nothing supplies a value; write the value into the query`},
		{"stray parenthesis", "SELECT id FROM customers) AS x, (SELECT 1 AS one",
			`mapping.yaml:4:21: entities.C.source.query: the query is not one complete statement on its own: syntax error at or near ")" (SQLSTATE 42601); pg2dynamo reads it as a subquery, FROM (query) AS src, which a parenthesis it closes would change`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mappingFile := writeMapping(t, strings.Replace(base, "%s", tc.query, 1))
			table := testenv.TableName("q")
			for name, args := range readCommands(t, mappingFile, url, table) {
				r := runCLI(t, args...)
				if r.code != ExitUsage {
					t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", name, r.code, ExitUsage, r.stdout, r.stderr)
				}
				if got := errorLine(r.stderr, "mapping.yaml", "entities.C.source.query"); got != tc.want {
					t.Errorf("%s: error:\n got %s\nwant %s\nstderr:\n%s", name, got, tc.want, r.stderr)
				}
			}
			if tableExists(t, table) {
				t.Error("the table was created")
			}
		})
	}
}

// createTable creates table with partition key PK and sort key SK of the
// given types and gsis, as someone else might have.
func createTable(t *testing.T, table string, pkType types.ScalarAttributeType, extra func(*dynamodb.CreateTableInput)) {
	t.Helper()
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(table),
		BillingMode: types.BillingModePayPerRequest,
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange}},
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("PK"), AttributeType: pkType},
			{AttributeName: aws.String("SK"), AttributeType: types.ScalarAttributeTypeS}},
	}
	if extra != nil {
		extra(in)
	}
	c := dynamoClient(t)
	if _, err := c.CreateTable(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	// dynalite makes a table ACTIVE at once, or nearly (under load, the
	// first DescribeTable can still see CREATING): poll every 50 ms, not
	// after the waiter's default of 20 s.
	w := dynamodb.NewTableExistsWaiter(c, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 50*time.Millisecond, time.Second
	})
	if err := w.Wait(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(table)}, eventWait); err != nil {
		t.Fatalf("waiting for table %s to be ACTIVE: %v", table, err)
	}
}

// An existing table whose key attributes are not strings, or whose GSIs
// are not the mapping's (key schema, key types, projection), is refused by
// migrate before anything is written, naming every difference; diff and
// migrate --dry-run run the same check and say migrate would refuse the
// table. All exit 2. Before, the schema check compared only key names and
// roles: every row became a failed BatchWriteItem, a PutItem and a reject,
// and diff reported every item new with its cost.
func TestExistingTableWithOtherKeyTypesIsRefused(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, `CREATE TABLE accounts (id integer PRIMARY KEY, owner text NOT NULL, balance numeric);
		INSERT INTO accounts VALUES (1, 'ann', 10), (2, 'bob', 20), (3, 'ann', 30);`)
	mappingFile := writeMapping(t, gsiMapping)

	numberPK := testenv.TableName("keytypes")
	createTable(t, numberPK, types.ScalarAttributeTypeN, func(in *dynamodb.CreateTableInput) {
		in.AttributeDefinitions = append(in.AttributeDefinitions,
			types.AttributeDefinition{AttributeName: aws.String("GSI1PK"), AttributeType: types.ScalarAttributeTypeS},
			types.AttributeDefinition{AttributeName: aws.String("GSI1SK"), AttributeType: types.ScalarAttributeTypeN})
		in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{
			{IndexName: aws.String("GSI1"), KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String("GSI1PK"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String("GSI1SK"), KeyType: types.KeyTypeRange}},
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}},
			{IndexName: aws.String("Inverted"), KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String("SK"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String("PK"), KeyType: types.KeyTypeRange}},
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"id"}}},
		}
	})
	differences := "table " + numberPK + " does not match the mapping: " +
		"key attribute PK is of type N, key attribute GSI1SK is of type N: the mapping writes every key attribute as a string (S) unless it declares its type (partition_key_type, sort_key_type); " +
		"GSI GSI1 projects KEYS_ONLY, the mapping declares INCLUDE (balance); " +
		"GSI Inverted projects INCLUDE (id), the mapping declares KEYS_ONLY"
	args := migrateArgs(t, mappingFile, url, numberPK)
	r := runCLI(t, args...)
	if want := "pg2dynamo: " + differences + "\n"; r.code != ExitUsage || r.stderr != want {
		t.Errorf("migrate: exit %d, stderr:\n%s\nwant exit %d, stderr:\n%s", r.code, r.stderr, ExitUsage, want)
	}
	if n := len(scanAll(t, dynamoClient(t), numberPK)); n != 0 {
		t.Errorf("%d items written to the refused table", n)
	}
	if _, err := os.Lstat(rejectsPath(args)); !os.IsNotExist(err) {
		t.Errorf("the refused run left a rejects file (%v): nothing was tried", err)
	}
	if _, err := os.Lstat(checkpointPath(args)); !os.IsNotExist(err) {
		t.Errorf("the refused run left a checkpoint (%v): a refused run leaves the file as it was", err)
	}

	endpoint := dynalite(t).Endpoint
	for name, args := range map[string][]string{
		"diff":              {"diff", "--mapping", mappingFile, "--source", url, "--endpoint-url", endpoint, "--table", numberPK},
		"migrate --dry-run": migrateArgs(t, mappingFile, url, numberPK, "--dry-run"),
	} {
		r := runCLI(t, args...)
		want := "pg2dynamo: " + name + ": " + differences + "; migrate would refuse to write to it\n"
		if r.code != ExitUsage || !strings.HasSuffix(r.stderr, want) || strings.Contains(r.stdout, "new") {
			t.Errorf("%s: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d, stderr ending:\n%s", name, r.code, r.stdout, r.stderr, ExitUsage, want)
		}
	}
}

// A table with another key schema: diff and migrate --dry-run refuse it as
// migrate does (exit 2), instead of reporting every item new.
func TestDryRunRefusesTableWithOtherKeySchema(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, shopSQL)
	mappingFile := writeMapping(t, planMapping)
	table := testenv.TableName("schema")
	createTable(t, table, types.ScalarAttributeTypeS, func(in *dynamodb.CreateTableInput) {
		in.KeySchema = in.KeySchema[:1]
		in.AttributeDefinitions = in.AttributeDefinitions[:1]
	})
	differences := "table " + table + " does not match the mapping: it has key schema (partition key PK), the mapping expects (partition key PK, sort key SK); " +
		"GSI GSI1 is missing: add it to the table or remove it from the mapping"
	endpoint := dynalite(t).Endpoint
	for name, args := range map[string][]string{
		"migrate":           migrateArgs(t, mappingFile, url, table),
		"diff":              {"diff", "--mapping", mappingFile, "--source", url, "--endpoint-url", endpoint, "--table", table},
		"migrate --dry-run": migrateArgs(t, mappingFile, url, table, "--dry-run"),
	} {
		r := runCLI(t, args...)
		want := "pg2dynamo: " + differences + "\n"
		if name != "migrate" {
			want = "pg2dynamo: " + name + ": " + differences + "; migrate would refuse to write to it\n"
		}
		if r.code != ExitUsage || !strings.HasSuffix(r.stderr, want) {
			t.Errorf("%s: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d, stderr ending:\n%s", name, r.code, r.stdout, r.stderr, ExitUsage, want)
		}
	}
}

// --endpoint-url without a scheme is a flag error (exit 2) found before
// PostgreSQL or DynamoDB is asked anything, not "cannot reach DynamoDB"
// (exit 1). The source here does not exist: it is never connected to.
func TestEndpointURLIsValidated(t *testing.T) {
	mappingFile := writeMapping(t, accountsMapping)
	const source = "postgres://postgres@127.0.0.1:1/never?connect_timeout=1"
	for _, endpoint := range []string{"127.0.0.1:8000", "localhost:8000", "ftp://localhost:8000", "http://", "http:///x"} {
		for _, cmd := range []string{"migrate", "verify", "diff"} {
			t.Run(cmd+" "+endpoint, func(t *testing.T) {
				args := []string{cmd, "--mapping", mappingFile, "--source", source, "--endpoint-url", endpoint}
				if cmd == "migrate" {
					args = append(args, "--progress", "none", "--rejects", filepath.Join(t.TempDir(), "r.jsonl"),
						"--checkpoint", filepath.Join(t.TempDir(), "c.json"))
				}
				r := runCLI(t, args...)
				want := `pg2dynamo: --endpoint-url "` + endpoint + `": expected an http:// or https:// URL with a host, such as http://localhost:8000 (the flag, AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL)` + "\n"
				if r.code != ExitUsage || r.stderr != want {
					t.Errorf("exit %d, stderr:\n%s\nwant exit %d, stderr:\n%s", r.code, r.stderr, ExitUsage, want)
				}
			})
		}
	}
}

// Without --source, DATABASE_URL or any PG* variable, libpq's defaults
// choose the database and the user; when the mapping then names relations
// that database lacks, the message says which database and user were used,
// and why. (Where the defaults reach no server, the connection error says
// the same.)
func TestSourceDefaultsAreNamed(t *testing.T) {
	for _, v := range []string{"DATABASE_URL", "PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGSERVICE", "PGSERVICEFILE", "PGPASSWORD", "PGOPTIONS"} {
		t.Setenv(v, "")
	}
	u, err := user.Current()
	if err != nil {
		t.Skipf("no current user to predict libpq's default: %v", err)
	}
	mappingFile := writeMapping(t, strings.Replace(accountsMapping, "{table: accounts}", "{table: pg2dynamo_no_such_relation}", 1))
	args := []string{"migrate", "--mapping", mappingFile, "--endpoint-url", dynalite(t).Endpoint,
		"--progress", "none", "--rejects", filepath.Join(t.TempDir(), "r.jsonl"), "--checkpoint", filepath.Join(t.TempDir(), "c.json")}
	r := runCLI(t, args...)
	reason := "(libpq defaults: no --source, DATABASE_URL or PG* variables)"
	switch r.code {
	case ExitUsage: // the defaults reached a server: the mapping check failed
		want := "connected to database " + u.Username + " as user " + u.Username + " on "
		if !strings.Contains(r.stderr, `relation "pg2dynamo_no_such_relation" does not exist`) ||
			!strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, reason) {
			t.Errorf("stderr:\n%s\nwant the missing relation, then %q… %s", r.stderr, want, reason)
		}
	case ExitFailed: // no server where the defaults point
		want := "could not connect to database " + u.Username + " as user " + u.Username + " on "
		if !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, reason) {
			t.Errorf("stderr:\n%s\nwant %q… %s", r.stderr, want, reason)
		}
	default:
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
