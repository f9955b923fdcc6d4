package app

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/fixtures"
	"github.com/pg2dynamo/pg2dynamo/mapping"
	"github.com/pg2dynamo/pg2dynamo/pipeline"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
	"github.com/pg2dynamo/pg2dynamo/transform"
	"github.com/pg2dynamo/pg2dynamo/verify"
)

// patternCheck says how to test one access pattern against psql: params
// lists parameter tuples to try (a query returning one row per tuple, the
// pattern's parameters in order), want the reference query for one tuple
// ($1, $2, … bound) returning the expected "Type#id" of each item in order,
// and id the attribute that holds the id per item type. Ids in params
// name the first and last rows at patternScale (10 orgs, 1,000 students,
// 100 lectures); each must exist.
type patternCheck struct {
	params string
	want   string
	id     map[string]string
	// ident, when set, names an item from its keys alone (a KEYS_ONLY
	// index projects nothing else).
	ident func(item map[string]types.AttributeValue) string
}

// patternScale is the fixture scale TestAccessPatternsMatchTheSource
// migrates, half of scale 1 (27,000 items instead of 55,000): what it
// checks is each pattern's order and its first and last rows.
const patternScale = 0.5

var patternChecks = map[string]map[string]patternCheck{
	"customers": {
		"GetCustomerWithAddresses": {
			params: "SELECT customer_id FROM customers WHERE customer_id IN (1, 7, 42) ORDER BY 1",
			want:   "SELECT 'Customer#' || customer_id FROM customers WHERE customer_id = $1",
			id:     map[string]string{"Customer": "customer_id"},
		},
		"AddressesInState": {
			params: "SELECT DISTINCT country, state FROM addresses ORDER BY 1, 2 LIMIT 4",
			want: `SELECT 'Address#' || address_id FROM addresses WHERE country = $1 AND state = $2
				ORDER BY state COLLATE "C", city COLLATE "C", zip COLLATE "C", address_id`,
			id: map[string]string{"Address": "address_id"},
		},
		"AddressesInCity": {
			params: "SELECT DISTINCT country, state, city FROM addresses ORDER BY 1, 2, 3 LIMIT 4",
			want: `SELECT 'Address#' || address_id FROM addresses WHERE country = $1 AND state = $2 AND city = $3
				ORDER BY zip COLLATE "C", address_id`,
			id: map[string]string{"Address": "address_id"},
		},
	},
	"tickets": {
		"UserWithNewestTickets": {
			params: "(SELECT user_id FROM tickets GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 2) UNION ALL (SELECT 3)",
			want: `SELECT 'User#' || $1::bigint UNION ALL
				(SELECT 'Ticket#' || ticket_id FROM tickets WHERE user_id = $1 ORDER BY created_at DESC, ticket_id DESC)`,
			id: map[string]string{"User": "user_id", "Ticket": "ticket_id"},
		},
		"OrgTicketsNewestFirst": {
			params: "SELECT org_id FROM orgs WHERE org_id IN (1, 10) ORDER BY 1",
			want:   "SELECT 'Ticket#' || ticket_id FROM tickets WHERE org_id = $1 ORDER BY created_at DESC, ticket_id DESC",
			id:     map[string]string{"Ticket": "ticket_id"},
		},
		"OrgUsers": {
			params: "SELECT org_id FROM orgs WHERE org_id IN (2, 9) ORDER BY 1",
			want:   "SELECT 'User#' || user_id FROM users WHERE org_id = $1 ORDER BY user_id",
			id:     map[string]string{"User": "user_id"},
		},
		"OrgUpdatedTickets": {
			params: "SELECT org_id FROM orgs WHERE org_id IN (1, 5) ORDER BY 1",
			want:   "SELECT 'Ticket#' || ticket_id FROM tickets WHERE org_id = $1 AND updated_at IS NOT NULL ORDER BY updated_at, ticket_id",
			ident: func(it map[string]types.AttributeValue) string {
				// GSI2SK is <updated_at>#<zero-padded ticket_id>.
				sk := str(it["GSI2SK"])
				return "Ticket#" + strings.TrimLeft(sk[strings.LastIndexByte(sk, '#')+1:], "0")
			},
		},
	},
	"attendance": {
		"StudentLectures": {
			params: "SELECT student_id FROM students WHERE student_id IN (1, 3, 1000) ORDER BY 1",
			want:   "SELECT 'Attendance#' || lecture_id FROM attendance WHERE student_id = $1 ORDER BY lecture_id",
			id:     map[string]string{"Attendance": "lecture_id"},
		},
		"LectureStudents": {
			params: "SELECT lecture_id FROM lectures WHERE lecture_id IN (1, 5, 100) ORDER BY 1",
			want:   "SELECT 'Attendance#' || student_id FROM attendance WHERE lecture_id = $1 ORDER BY student_id",
			id:     map[string]string{"Attendance": "student_id"},
		},
	},
}

// Every access pattern a strategy mapping declares, run as a real Query
// against dynalite after the migration, returns exactly the items, in
// exactly the order, that the source tables say (psql is the reference).
func TestAccessPatternsMatchTheSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, domain := range fixtures.Domains() {
		t.Run(domain, func(t *testing.T) {
			parallel(t)
			url, _ := fixtureSource(t, domain, patternScale)
			conn := testenv.Connect(t, url)
			mappingFile := testenv.RepoFile(t, "fixtures", "mappings", "strategies", domain+".yaml")
			table := testenv.TableName(domain)
			if r := runCLI(t, migrateArgs(t, mappingFile, url, table, "--create-table")...); r.code != ExitOK {
				t.Fatalf("migrate exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			m, err := mapping.Load(mappingFile)
			if err != nil {
				t.Fatal(err)
			}
			src, err := extract.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close(ctx)
			plans, err := pipeline.Prepare(ctx, src, m)
			if err != nil {
				t.Fatal(err)
			}
			checks := patternChecks[domain]
			if len(checks) != len(m.AccessPatterns) {
				t.Fatalf("%d patterns in the mapping, %d checked here", len(m.AccessPatterns), len(checks))
			}
			for _, ap := range m.AccessPatterns {
				pc, ok := checks[ap.Name]
				if !ok {
					t.Fatalf("no check for pattern %s", ap.Name)
				}
				pp, err := transform.CompilePattern(m, ap, plans)
				if err != nil {
					t.Fatal(err)
				}
				rows, err := conn.Query(ctx, pc.params)
				if err != nil {
					t.Fatal(err)
				}
				var tuples [][]any
				for rows.Next() {
					v, err := rows.Values()
					if err != nil {
						t.Fatal(err)
					}
					tuples = append(tuples, v)
				}
				if rows.Err() != nil || len(tuples) == 0 {
					t.Fatalf("%s: parameters: %v (%d tuples)", ap.Name, rows.Err(), len(tuples))
				}
				if _, list, ok := strings.Cut(pc.params, " IN ("); ok {
					if ids := strings.Count(list[:strings.IndexByte(list, ')')], ",") + 1; len(tuples) != ids {
						t.Fatalf("%s: %d of the %d ids in %q exist at scale %g", ap.Name, len(tuples), ids, pc.params, patternScale)
					}
				}
				for _, tuple := range tuples {
					items, err := verify.RunPattern(ctx, dynamoClient(t), table, pp, tuple)
					if err != nil {
						t.Fatal(err)
					}
					var want []string
					wr, err := conn.Query(ctx, pc.want, tuple...)
					if err != nil {
						t.Fatalf("%s reference: %v", ap.Name, err)
					}
					for wr.Next() {
						var s string
						if err := wr.Scan(&s); err != nil {
							t.Fatal(err)
						}
						want = append(want, s)
					}
					if len(want) == 0 {
						t.Fatalf("%s%v: the reference lists no rows; pick parameters with data", ap.Name, tuple)
					}
					got := make([]string, len(items))
					for i, it := range items {
						if pc.ident != nil {
							got[i] = pc.ident(it)
							continue
						}
						typ := str(it["type"])
						got[i] = typ + "#" + number(it[pc.id[typ]])
					}
					if d := cmp.Diff(want, got); d != "" {
						t.Errorf("%s%v (-psql +Query):\n%s", ap.Name, tuple, d)
					}
				}
			}
		})
	}
}

func number(av types.AttributeValue) string {
	if n, ok := av.(*types.AttributeValueMemberN); ok {
		return n.Value
	}
	return fmt.Sprintf("%v", av)
}
