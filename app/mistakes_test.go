package app

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// fiveMistakes is a mapping over shopSQL with five mistakes, each of
// another kind, each found by another check.
const fiveMistakes = `table:
  name: shop
  gsis:
    - {name: GSI1, partition_key: GSI1PK, sort_key: GSI1SK}
entities:
  Customer:
    source: {table: customers}
    pk: CUSTOMER#{id}
    sk: PROFILE
    embed:
      addresses: {source: {table: addresses}, join: {customer_id: id}, max_items: ten}
  Order:
    source: {table: orders}
    pk: CUSTOMER#${customer_id}
    sk: ORDER#${id}
    atributes: {exclude: [total]}
    indexes:
      GSI1: {pk: "STATUS#${status}", sk: "${created_at}"}
      GSI2: {pk: SHIPPED, sk: "${shipped_at}"}
`

// fiveMistakesReported is what every command reports of fiveMistakes, in
// file order: a "{col}" (the file's own check, with what the source says of
// the column), a value of the wrong type (decoding), an unknown field
// (structure), an unknown column (the source) and an unknown index (the
// file's own check).
var fiveMistakesReported = []string{
	`mapping.yaml:8:18: entities.Customer.pk: template "CUSTOMER#{id}": "{id}" is literal text, not a placeholder: did you mean ${id}? (at character 10); id is a column of customers`,
	`mapping.yaml:11:83: entities.Customer.embed.addresses.max_items: expected a whole number, got a string ("ten")`,
	`mapping.yaml:16:5: entities.Order.atributes: unknown field "atributes"; expected one of: source, pk, sk, indexes, attributes, type, embed, duplicate, aggregates, ids, mirror`,
	`mapping.yaml:18:18: entities.Order.indexes.GSI1.pk: unknown column "status"; orders has columns: id, customer_id, created_at, total, shipped_at`,
	`mapping.yaml:19:7: entities.Order.indexes.GSI2: unknown index "GSI2": expected one of the table's gsis (GSI1)`,
}

// Five mistakes of five kinds take one run, not four: plan --with-source
// and migrate report all five, each located, and exit 2; migrate creates
// no table and writes nothing.
func TestFiveMistakesInOneRun(t *testing.T) {
	url := testenv.NewDatabase(t)
	testenv.Exec(t, url, shopSQL)
	mappingFile := writeMapping(t, fiveMistakes)
	table := testenv.TableName("five")
	for name, args := range map[string][]string{
		"plan --with-source": {"plan", "--mapping", mappingFile, "--with-source", "--source", url},
		"migrate":            migrateArgs(t, mappingFile, url, table, "--create-table"),
	} {
		t.Run(name, func(t *testing.T) {
			r := runCLI(t, args...)
			if r.code != ExitUsage {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, ExitUsage, r.stdout, r.stderr)
			}
			got := strings.Split(strings.TrimSpace(strings.TrimPrefix(r.stderr, "pg2dynamo: ")), "\n")
			for i := range got {
				if j := strings.Index(got[i], "mapping.yaml:"); j >= 0 {
					got[i] = got[i][j:]
				}
			}
			if d := cmp.Diff(fiveMistakesReported, got); d != "" {
				t.Errorf("errors (-want +got):\n%s", d)
			}
			if name == "migrate" && tableExists(t, args[slices.Index(args, "--table")+1]) {
				t.Error("migrate created the table")
			}
		})
	}
}

// Without its source, a command still reports what the file shows of the
// five mistakes (exit 2), and says the rest was not checked.
func TestFiveMistakesWithoutTheSource(t *testing.T) {
	mappingFile := writeMapping(t, fiveMistakes)
	r := runCLI(t, "plan", "--mapping", mappingFile, "--with-source", "--source", "postgres://postgres@127.0.0.1:1/none?connect_timeout=5")
	if r.code != ExitUsage {
		t.Fatalf("exit %d, want %d\nstderr:\n%s", r.code, ExitUsage, r.stderr)
	}
	var fileOnly []string
	for _, line := range fiveMistakesReported {
		if !strings.Contains(line, "unknown column") {
			fileOnly = append(fileOnly, strings.TrimSuffix(line, "; id is a column of customers"))
		}
	}
	lines := strings.Split(strings.TrimPrefix(r.stderr, "pg2dynamo: "), "\n")
	for i := range lines {
		lines[i] = strings.TrimPrefix(lines[i], filepath.Dir(mappingFile)+"/")
	}
	if d := cmp.Diff(fileOnly, lines[:len(fileOnly)]); d != "" {
		t.Errorf("errors (-want +got):\n%s", d)
	}
	if !strings.HasPrefix(lines[len(fileOnly)], "not checked against the source: ") {
		t.Errorf("line after the errors: %q, want the connection's failure", lines[len(fileOnly)])
	}
}
