package transform

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// JSON text that holds something that is not text — an escape of a lone
// UTF-16 surrogate (a json column keeps one; jsonb refuses it), bytes that
// are not UTF-8 (possible in a SQL_ASCII database) — rejects its row,
// naming the column and the escape, in Builder and in the reference alike:
// nothing is replaced with U+FFFD. A surrogate pair, and an escaped
// backslash before "u", are text.
func TestJSONInvalidTextRejected(t *testing.T) {
	m, err := mapping.Parse("doc.yaml", []byte("table: {name: docs}\nentities:\n  D:\n    source: {table: docs}\n    pk: D#${id}\n    sk: D\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(m, 0, Sources{Columns: []extract.Column{
		{Name: "id", Type: "int8", KeyPos: 1, PrimaryKey: true},
		{Name: "doc", Type: "json", AsText: true},
		{Name: "docs", Type: "json", AsText: true, Array: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		doc    string
		want   string // the S attribute doc, when the row is taken
		reason string // the row's reject reason
	}{
		{doc: `"\ud800"`, reason: `json: string escape \ud800 is a lone UTF-16 surrogate, which is no character: rejected, not replaced with U+FFFD`},
		{doc: `{"k": ["x", "\udc00"]}`, reason: `json: string escape \udc00 is a lone UTF-16 surrogate, which is no character: rejected, not replaced with U+FFFD`},
		{doc: `{"\ud800\u0041": 1}`, reason: `json: string escape \ud800 is a lone UTF-16 surrogate, which is no character: rejected, not replaced with U+FFFD`},
		{doc: `"\ud83d\ude00\ud800\udc00"`, want: "😀𐀀"},
		{doc: `"\\ud800"`, want: `\ud800`},
		{doc: "\"caf\xe9\"", reason: "json: text is not valid UTF-8 (is the database encoding SQL_ASCII?)"},
	} {
		t.Run(tc.doc, func(t *testing.T) {
			for _, row := range [][]any{{int64(1), tc.doc, nil, "1"}, {int64(1), nil, []any{`"ok"`, tc.doc}, "1"}} {
				want, wantErr := p.referenceItems(row, nil)
				var b Builder
				got, err := b.Items(p, row, nil)
				if !sameError(err, wantErr) {
					t.Fatalf("row %v: Builder error %v, reference error %v", row, err, wantErr)
				}
				var re *RowError
				if tc.reason != "" {
					col, reason := "doc", tc.reason
					if row[1] == nil {
						col, reason = "docs", "element 2: "+reason
					}
					if !errors.As(err, &re) || re.Column != col || re.Reason != reason {
						t.Errorf("row %v: got items %v, error %v; want %s rejected: %s", row, got, err, col, reason)
					}
					continue
				}
				if err != nil {
					t.Fatalf("row %v: %v", row, err)
				}
				attr, elems := want[0].Attrs["doc"], want[0].Attrs["docs"]
				if row[1] == nil {
					attr = elems.(*types.AttributeValueMemberL).Value[1]
				}
				if s, ok := attr.(*types.AttributeValueMemberS); !ok || s.Value != tc.want {
					t.Errorf("row %v: %#v, want S %q", row, attr, tc.want)
				}
			}
		})
	}
}
