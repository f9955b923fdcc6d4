package mapping

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Braces finds "{name}" written for "${name}" (the DynamoDB MCP server's
// template syntax) and nothing else: not placeholders, not escaped text,
// not braces around what is no column name.
func TestBraces(t *testing.T) {
	tests := []struct {
		in   string
		want []BraceError
	}{
		{"CUSTOMER#{customer_id}", []BraceError{{"customer_id", 9}}},
		{"{a}#{_b2}", []BraceError{{"a", 0}, {"_b2", 4}}},
		{"PK = C#{id} AND begins_with(SK, O#{ts})", []BraceError{{"id", 7}, {"ts", 34}}},
		{"${a}{b}", []BraceError{{"b", 4}}},
		{"CUSTOMER#${customer_id}", nil},
		{"$${literal}", nil},               // the text ${literal}, on purpose
		{"$$$${literal}", nil},             // $${literal}
		{"$$${id}", nil},                   // "$" and a placeholder
		{"${a{b}}", nil},                   // a placeholder's own braces
		{"{id:4}", nil},                    // not a name
		{"{1st}", nil},                     // not a name
		{"{}", nil},                        // empty
		{"{a b}", nil},                     // not a name
		{`{"json": 1}`, nil},               // not a name
		{"{unclosed", nil},                 // no "}"
		{"${unclosed {a}", nil},            // ParseTemplate refuses it
		{"naïve#{naïve}", nil},             // not ASCII: not taken for a column
		{"A#{b}#", []BraceError{{"b", 2}}}, // ParseTemplate's "literal with braces"
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var got []BraceError
			for _, be := range Braces(tt.in) {
				got = append(got, *be)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Braces(%q) (-want +got):\n%s", tt.in, d)
			}
		})
	}
}

// A "{name}" is a mapping error at its "{", saying "did you mean
// ${name}?", with the *BraceError as its cause; in a key condition too.
func TestBraceIsAMappingError(t *testing.T) {
	text := `table: {name: shop}
entities:
  Customer:
    source: {table: customers}
    pk: CUSTOMER#{customer_id}
    sk: PROFILE
access_patterns:
  P: {key_condition: "PK = CUSTOMER#{customer_id}"}
`
	_, err := Parse("m.yaml", []byte(text))
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Parse: %v, want Errors", err)
	}
	want := []string{
		`m.yaml:5:18: entities.Customer.pk: template "CUSTOMER#{customer_id}": "{customer_id}" is literal text, not a placeholder: did you mean ${customer_id}? (at character 10)`,
		`m.yaml:8:37: access_patterns.P.key_condition: key condition "PK = CUSTOMER#{customer_id}": "{customer_id}" is literal text, not a placeholder: did you mean ${customer_id}? (at character 15)`,
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
		var be *BraceError
		if !errors.As(e, &be) || be.Name != "customer_id" {
			t.Errorf("%v: cause %v, want the *BraceError of customer_id", e, e.Err)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("errors (-want +got):\n%s", d)
	}
}
