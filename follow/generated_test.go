package follow_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// docsSchema is gen-key.yaml's table, with slug as column.
func docsSchema(slug string) string {
	return `CREATE TABLE docs (doc_id int PRIMARY KEY, title text NOT NULL, ` + slug + `);
		ALTER TABLE docs REPLICA IDENTITY FULL;
		INSERT INTO docs (doc_id, title) SELECT i, 'Doc ' || i FROM generate_series(1, 10) i`
}

// A mapping that needs a STORED generated column from a change's rows (a
// table key; the join of a duplicate, and of an aggregate) is refused by
// migrate --follow --create-table (exit 2), naming the mapping's line,
// the column and its expression, before anything is created: no
// replication slot, no publication, no DynamoDB table.
func TestFollowRefusesGeneratedIdentityColumns(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, mapping, schema string
		want                  []string
	}{
		{name: "table key", mapping: "gen-key.yaml",
			schema: docsSchema(`slug text GENERATED ALWAYS AS (lower(title)) STORED`),
			want: []string{"gen-key.yaml:11:", "entities.Doc.pk", "column slug of public.docs renders a table key of Doc, and it is generated (GENERATED ALWAYS AS (lower(title)) STORED)",
				"delete the items of Doc whose keys changed or whose rows are gone", "the expression reads title"}},
		{name: "joins", mapping: "gen-join.yaml",
			schema: `CREATE TABLE orgs (org_id int PRIMARY KEY, name text NOT NULL, code text GENERATED ALWAYS AS ('O' || org_id) STORED UNIQUE);
				CREATE TABLE members (member_id int PRIMARY KEY, org_id int NOT NULL REFERENCES orgs, name text, org_ref text GENERATED ALWAYS AS ('O' || org_id) STORED);
				ALTER TABLE orgs REPLICA IDENTITY FULL; ALTER TABLE members REPLICA IDENTITY FULL;
				INSERT INTO orgs VALUES (1, 'acme'); INSERT INTO members VALUES (1, 1, 'm1')`,
			want: []string{"entities.Member.duplicate[0].join", "column code of public.orgs joins public.orgs to Member",
				"find the Member rows that duplicate a changed row", "entities.Org.aggregates.member_count.join",
				"column org_ref of public.members joins public.members to Org", "GENERATED ALWAYS AS ('O'::text || org_id) STORED",
				"find the Org rows that embed or count a changed row", "the expression reads org_id"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			url, endpoint := logicalDatabase(t), ownDynalite(t)
			testenv.Exec(t, url, c.schema)
			mappingFile := filepath.Join("testdata", c.mapping)
			table := testenv.TableName(strings.TrimSuffix(c.mapping, ".yaml"))
			dir := t.TempDir()
			code, out := run(context.Background(), "migrate", "--mapping", mappingFile, "--source", url, "--endpoint-url", endpoint, "--table", table,
				"--follow", "--until-caught-up", "--create-table", "--progress", "none",
				"--rejects", filepath.Join(dir, "rejects.jsonl"), "--checkpoint", filepath.Join(dir, "checkpoint.json"))
			if code != 2 {
				t.Fatalf("migrate --follow: exit %d, want 2 (refused)\n%s", code, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("the refusal does not say %q\n%s", w, out)
				}
			}
			nothingCreated(t, url, endpoint, table)
		})
	}
}

// nothingCreated fails the test if a follow of table made its replication
// slot, its publication or the DynamoDB table.
func nothingCreated(t *testing.T, url, endpoint, table string) {
	t.Helper()
	ctx := context.Background()
	conn := testenv.Connect(t, url)
	name := follow.DefaultName(table)
	if _, exists, err := follow.SlotPosition(ctx, conn, name); err != nil || exists {
		t.Errorf("replication slot %s: exists %v (%v), want none", name, exists, err)
	}
	if _, exists, err := extract.NewCatalog(conn).Publication(ctx, name); err != nil || exists {
		t.Errorf("publication %s: exists %v (%v), want none", name, exists, err)
	}
	c, err := load.NewClient(ctx, load.ClientConfig{EndpointURL: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if nf := (*types.ResourceNotFoundException)(nil); !errors.As(err, &nf) {
		t.Errorf("DynamoDB table %s: DescribeTable %v, want ResourceNotFoundException (no table created)", table, err)
	}
}

// STORED generated columns that the items only read (attributes, a GSI
// key, a duplicated attribute) are followed: updates that change them, a
// row moved to another org and an org deleted with its members (a
// cascade) leave the table equal to a full load, and verify agrees.
func TestFollowGeneratedColumnsAsAttributes(t *testing.T) {
	t.Parallel()
	f := followChanges(t, filepath.Join("testdata", "gen-attrs.yaml"),
		`CREATE TABLE orgs (org_id int PRIMARY KEY, name text NOT NULL, label text GENERATED ALWAYS AS (upper(name)) STORED);
		CREATE TABLE members (member_id int PRIMARY KEY, org_id int NOT NULL REFERENCES orgs ON DELETE CASCADE, name text NOT NULL,
			handle text GENERATED ALWAYS AS (lower(name) || '@' || org_id) STORED);
		ALTER TABLE orgs REPLICA IDENTITY FULL; ALTER TABLE members REPLICA IDENTITY FULL;
		INSERT INTO orgs VALUES (1, 'acme'), (2, 'other'), (3, 'gone');
		INSERT INTO members (member_id, org_id, name) SELECT i, 1 + i % 3, 'Member ' || i FROM generate_series(1, 30) i`,
		`UPDATE members SET name = 'Renamed' WHERE member_id = 1`,
		`UPDATE orgs SET name = 'acme renamed' WHERE org_id = 1`,
		`UPDATE members SET org_id = 2 WHERE member_id = 3`,
		`DELETE FROM orgs WHERE org_id = 3`)
	if f.code != 0 {
		t.Fatalf("migrate --follow --resume: exit %d\n%s", f.code, f.out)
	}
	f.inStep(t)
}

// A table key column that becomes a STORED generated column while the
// follow streams (dropped and added again, then a row updated) stops the
// follow (exit 1) naming the column, its expression and the mapping's
// line; the advice followed (the table made to fit the mapping again,
// then --resume --prune) ends in step.
func TestLiveFollowKeyColumnBecomesGenerated(t *testing.T) {
	t.Parallel()
	f := loaded(t, filepath.Join("testdata", "gen-key.yaml"),
		docsSchema(`slug text`)+`; UPDATE docs SET slug = lower(title)`)
	p := startFollow(t, liveArgs(f)...)
	p.waitFor(t, following, "the follow to start")
	testenv.Exec(t, f.url, `ALTER TABLE docs DROP COLUMN slug; ALTER TABLE docs ADD COLUMN slug text GENERATED ALWAYS AS (lower(title)) STORED`)
	testenv.Exec(t, f.url, `UPDATE docs SET title = 'Moved' WHERE doc_id = 1`)
	if ended := p.watch(t, "the follow to stop", appliedChanges(1).MatchString); !ended {
		p.cmd.Process.Signal(syscall.SIGINT)
		p.exit(t)
		t.Fatalf("the follow applied the update and went on, want it stopped naming the generated column\n%s", firstLines(p.out.String(), 40))
	}
	code := p.exit(t)
	out := p.out.String()
	for _, w := range []string{"the columns of public.docs changed", "gen-key.yaml:11:",
		"column slug of public.docs renders a table key of Doc, and it is generated (GENERATED ALWAYS AS (lower(title)) STORED)", "--resume --prune"} {
		if !strings.Contains(out, w) {
			t.Errorf("the stop does not say %q", w)
		}
	}
	if code != 1 || t.Failed() {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	testenv.Exec(t, f.url, `ALTER TABLE docs DROP COLUMN slug; ALTER TABLE docs ADD COLUMN slug text; UPDATE docs SET slug = lower(title)`)
	if code, out := f.resume("--prune"); code != 0 {
		t.Fatalf("--resume --prune: exit %d\n%s", code, out)
	}
	f.inStep(t)
}
