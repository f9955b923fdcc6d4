package plan

import (
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// RenderVersions writes what changes, one row a change, then the design
// before and the design after: the re-templated sort key shows in each.
func TestRenderVersions(t *testing.T) {
	const v1 = `
name: t
table: {name: tickets}
entities:
  Ticket:
    source: {table: tickets}
    pk: USER#${user_id}
    sk: TICKET#${ticket_id}
`
	before, err := mapping.Parse("v1.yaml", []byte(v1))
	if err != nil {
		t.Fatal(err)
	}
	after, err := mapping.Parse("v2.yaml", []byte(strings.Replace(v1, "sk: TICKET#${ticket_id}", "sk: T#${created_at}#${ticket_id}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := RenderVersions(&b, Build(before), Build(after), mapping.CompareMappings(before, after), FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	i, j, k := strings.Index(out, "## What changes"), strings.Index(out, "## Before"), strings.Index(out, "## After")
	if i < 0 || j < i || k < j {
		t.Fatalf("want What changes, Before, After in that order:\n%s", out)
	}
	if !strings.Contains(out[i:j], "| entity Ticket | sk: TICKET#${ticket_id} → T#${created_at}#${ticket_id} |") {
		t.Errorf("the changes do not show the sort key's new template:\n%s", out[i:j])
	}
	if !strings.Contains(out[j:k], "TICKET#${ticket_id}") || !strings.Contains(out[k:], "T#${created_at}#${ticket_id}") {
		t.Errorf("the designs do not show the sort key before and after:\n%s", out)
	}
	if err := RenderVersions(&b, Build(before), Build(after), mapping.CompareMappings(before, after), FormatJSON); err == nil {
		t.Error("RenderVersions as JSON: no error")
	}
}
