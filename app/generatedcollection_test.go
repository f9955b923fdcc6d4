package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// needPython skips t when python3 lacks what AWS's generated code and its
// generator need (the CI machine has them).
func needPython(t *testing.T) {
	t.Helper()
	if out, err := exec.Command("python3", "-c", "import boto3, pydantic, jinja2").CombinedOutput(); err != nil {
		t.Skipf("running AWS's generated repositories needs python3 with boto3, pydantic 2 and Jinja2 (the CI machine has them): %v\n%s", err, out)
	}
}

// generateRepositories runs the DynamoDB MCP server's code generator
// (vendored in testdata/mcpcodegen) on design and returns the directory
// of the entities.py and repositories.py it writes.
func generateRepositories(t *testing.T, design string) string {
	t.Helper()
	gen := t.TempDir()
	cmd := exec.Command("python3", "-m", "awslabs.dynamodb_mcp_server.repo_generation_tool.codegen",
		"--schema", design, "--output", gen, "--no-lint")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+testenv.RepoFile(t, "app", "testdata", "mcpcodegen"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("codegen: %v\n%s", err, out)
	}
	return gen
}

// runGenerated runs script (of testdata/generatedapp) over the generated
// repositories in gen against table on t's dynalite, with input on its
// standard input, and decodes its standard output into out (numbers as
// json.Number).
func runGenerated(t *testing.T, script, gen, table string, input, out any) {
	t.Helper()
	in, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("python3", testenv.RepoFile(t, "app", "testdata", "generatedapp", script), gen, table)
	cmd.Env = append(os.Environ(), "AWS_ENDPOINT_URL_DYNAMODB="+dynalite(t).Endpoint, "AWS_ACCESS_KEY_ID=test",
		"AWS_SECRET_ACCESS_KEY=test", "AWS_DEFAULT_REGION=us-east-1", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(stdout))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		t.Fatalf("%s's answers: %v\n%.2000s", script, err, stdout)
	}
}

// elearningDesign is the part of AWS's elearning design the test reads.
type elearningDesign struct {
	Tables []struct {
		Entities map[string]struct {
			PK             string `json:"pk_template"`
			SK             string `json:"sk_template"`
			AccessPatterns []struct {
				Name       string `json:"name"`
				Operation  string `json:"operation"`
				Parameters []struct {
					Name string `json:"name"`
				} `json:"parameters"`
			} `json:"access_patterns"`
		} `json:"entities"`
	} `json:"tables"`
}

var templateField = regexp.MustCompile(`\{(\w+)\}`)

// render builds a key from a template as the generated code does, by
// plain formatting of each field (an f-string: digits of an integer
// unpadded, a string as it is).
func render(tpl string, row map[string]any) string {
	return templateField.ReplaceAllStringFunc(tpl, func(m string) string { return fmt.Sprint(row[m[1:len(m)-1]]) })
}

func templateFields(tpl string) []string {
	var out []string
	for _, m := range templateField.FindAllStringSubmatch(tpl, -1) {
		out = append(out, m[1])
	}
	return out
}

// The repositories AWS's DynamoDB MCP server generates for its elearning
// design, whose item collections hold several entity types (a user's
// profile, enrollments and certificates under TENANT#t#USER#u) and whose
// keys put integers in text (LESSON#{lesson_order}#{lesson_id}), read the
// table pg2dynamo migrates from a database built from the design's own
// fields: the generated get_<entity> finds every row of every table by
// keys built from its fields (LESSON#10#l10, not zero-padded), and each
// Query pattern of the design (written as the generated stub's comments
// show: the entity's partition key, begins_with its sort key's prefix)
// returns exactly the rows whose keys render to its partition, over pages
// of 5, in the byte order of their sort keys as the generated code renders
// them: text order, lesson 10 before lesson 9, as the design's keys mean
// (the draft notes it). Every item parses in the generated model made
// strict.
func TestGeneratedRepositoriesReadAnItemCollection(t *testing.T) {
	needPython(t)
	parallel(t)
	designFile := testenv.RepoFile(t, "draft", "testdata", "mcp", "valid", "elearning_schema.json")
	data, err := os.ReadFile(designFile)
	if err != nil {
		t.Fatal(err)
	}
	var fx fixtureDesign
	var d elearningDesign
	if err := json.Unmarshal(data, &fx); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, fixtureSQL(fx))
	psqlFile(t, url, testenv.RepoFile(t, "app", "testdata", "generatedapp", "elearning_rows.sql"))
	table := testenv.TableName("elearning")
	file := filepath.Join(t.TempDir(), "mapping.yaml")
	if r := runCLI(t, "init", "--from-design", designFile, "--source", url, "--table", table, "--out", file); r.code != ExitOK {
		t.Fatalf("init --from-design: exit %d\n%s", r.code, r.stderr)
	}
	// verify would fail get_course_lessons: its keys' text order is not
	// PostgreSQL's lesson_order (the draft says so); this test checks the
	// order the design's keys mean.
	if r := runCLI(t, migrateArgs(t, file, url, table, "--create-table", "--no-verify")...); r.code != ExitOK {
		t.Fatalf("migrate: exit %d\n%s", r.code, r.stderr)
	}
	gen := generateRepositories(t, designFile)

	type call struct {
		Repo   string `json:"repo"`
		Method string `json:"method"`
		Args   []any  `json:"args"`
	}
	var calls []call
	var want []any
	entities := d.Tables[0].Entities
	for _, name := range slices.Sorted(mapKeys(entities)) {
		e := entities[name]
		rows := psqlJSON(t, url, fmt.Sprintf("SELECT row_to_json(r) FROM %s r", snakePlural(name)))
		if len(rows) == 0 {
			t.Fatalf("no rows of %s", name)
		}
		// GetItem: the generated get_<entity>, by the key templates' fields.
		keyFields := templateFields(e.PK + e.SK)
		for _, row := range rows {
			var args []any
			for _, f := range keyFields {
				args = append(args, row[f])
			}
			calls = append(calls, call{name + "Repository", "get_" + snakeCase(name), args})
			want = append(want, row)
		}
		// Query: each pattern, for each partition the rows render.
		slices.SortFunc(rows, func(a, b map[string]any) int { return strings.Compare(render(e.SK, a), render(e.SK, b)) })
		for _, ap := range e.AccessPatterns {
			if ap.Operation != "Query" {
				continue
			}
			groups := map[string][]any{}
			var order []string
			var params []string
			for _, p := range ap.Parameters {
				params = append(params, p.Name)
			}
			args := map[string][]any{}
			for _, row := range rows {
				pk := render(e.PK, row)
				if _, ok := groups[pk]; !ok {
					order = append(order, pk)
					for _, p := range params {
						args[pk] = append(args[pk], row[p])
					}
				}
				groups[pk] = append(groups[pk], row)
			}
			for _, pk := range order {
				calls = append(calls, call{name + "Repository", ap.Name, args[pk]})
				want = append(want, groups[pk])
			}
		}
	}
	var got []any
	runGenerated(t, "read_elearning.py", gen, table, calls, &got)
	if len(got) != len(calls) {
		t.Fatalf("%d answers to %d calls", len(got), len(calls))
	}
	queries := 0
	for i, c := range calls {
		if d := cmp.Diff(want[i], got[i]); d != "" {
			t.Errorf("%s.%s%v (-SQL +generated):\n%s", c.Repo, c.Method, c.Args, d)
		}
		if l, ok := want[i].([]any); ok {
			queries++
			if len(l) == 0 {
				t.Errorf("%s.%s%v: no rows to compare", c.Repo, c.Method, c.Args)
			}
		}
	}
	if queries == 0 {
		t.Fatal("no Query pattern was run")
	}
	lessons := psqlJSON(t, url, "SELECT json_build_object('n', count(*)) FROM tenant_lessons WHERE lesson_order >= 10")
	if fmt.Sprint(lessons[0]["n"]) == "0" {
		t.Fatal("no lesson_order of two digits: text order and number order would agree")
	}
}

// snakeCase is an entity name as the generated code names its methods:
// TenantProgress → tenant_progress.
func snakeCase(name string) string {
	var b strings.Builder
	for i, r := range name {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
