package mapping

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func lit(s string) Part            { return Part{Literal: s} }
func col(name string) Part         { return Part{Column: name, Width: WidthAuto} }
func colW(name string, w int) Part { return Part{Column: name, Width: w} }

func TestParseTemplate(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Part
	}{
		{"empty", "", nil},
		{"literal only", "ORDER", []Part{lit("ORDER")}},
		{"literal with braces and hash", "A#{b}#", []Part{lit("A#{b}#")}},
		{"one placeholder after literal", "ORDER#${order_id}", []Part{lit("ORDER#"), col("order_id")}},
		{"placeholder only", "${id}", []Part{col("id")}},
		{"placeholder then literal", "${id}#END", []Part{col("id"), lit("#END")}},
		{"several placeholders", "CUSTOMER#${customer_id}#ORDER#${order_id}",
			[]Part{lit("CUSTOMER#"), col("customer_id"), lit("#ORDER#"), col("order_id")}},
		{"adjacent placeholders", "${a}${b}", []Part{col("a"), col("b")}},
		{"same column twice", "${a}-${a}", []Part{col("a"), lit("-"), col("a")}},
		{"width", "${id:8}", []Part{colW("id", 8)}},
		{"width zero turns padding off", "${id:0}", []Part{colW("id", 0)}},
		{"width 64 is the maximum", "${id:64}", []Part{colW("id", 64)}},
		{"width with leading zero", "${id:08}", []Part{colW("id", 8)}},
		{"spaces around name and width are trimmed", "T#${ id : 8 }", []Part{lit("T#"), colW("id", 8)}},
		{"spaces around name without width", "${ id }", []Part{col("id")}},
		{"mixed widths", "${a:3}#${b}#${c:0}", []Part{colW("a", 3), lit("#"), col("b"), lit("#"), colW("c", 0)}},
		{"dollar escape alone", "$$", []Part{lit("$")}},
		{"dollar escape inside literal", "US$$5", []Part{lit("US$5")}},
		{"dollar escape before placeholder", "PRICE$$${amount}", []Part{lit("PRICE$"), col("amount")}},
		{"escaped placeholder is literal", "$${id}", []Part{lit("${id}")}},
		{"escape then unclosed brace is literal", "X$${a", []Part{lit("X${a")}},
		{"lone dollar", "$", []Part{lit("$")}},
		{"dollar before letter kept", "$x", []Part{lit("$x")}},
		{"dollar inside literal kept", "a$b", []Part{lit("a$b")}},
		{"trailing dollar", "ORDER$", []Part{lit("ORDER$")}},
		{"escape then trailing dollar", "$$$", []Part{lit("$$")}},
		{"trailing dollar after placeholder", "${id}$", []Part{col("id"), lit("$")}},
		{"closing brace alone is literal", "}${a}}", []Part{lit("}"), col("a"), lit("}")}},
		{"non-ASCII literal and column", "Ü#${naïve}", []Part{lit("Ü#"), col("naïve")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTemplate(tt.in)
			if err != nil {
				t.Fatalf("ParseTemplate(%q) error: %v", tt.in, err)
			}
			if got.Source != tt.in {
				t.Errorf("Source = %q, want %q", got.Source, tt.in)
			}
			if got.String() != tt.in {
				t.Errorf("String() = %q, want %q", got.String(), tt.in)
			}
			if d := cmp.Diff(tt.want, got.Parts); d != "" {
				t.Errorf("ParseTemplate(%q).Parts mismatch (-want +got):\n%s", tt.in, d)
			}
			if got.IsZero() != (len(tt.want) == 0) {
				t.Errorf("IsZero() = %v, want %v", got.IsZero(), len(tt.want) == 0)
			}
		})
	}
}

func TestParseTemplateErrors(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		wantOffset int
		wantMsg    string
		// wantError is the full Error() text: the message and the 1-based
		// character.
		wantError string
	}{
		{
			name: "unclosed", in: "ORDER#${order_id", wantOffset: 6,
			wantMsg:   `unclosed "${": expected "}" after the column name`,
			wantError: `unclosed "${": expected "}" after the column name (at character 7)`,
		},
		{
			name: "unclosed at end", in: "${a}#${", wantOffset: 5,
			wantMsg:   `unclosed "${": expected "}" after the column name`,
			wantError: `unclosed "${": expected "}" after the column name (at character 6)`,
		},
		{
			name: "unclosed after escape", in: "$$${a", wantOffset: 2,
			wantMsg:   `unclosed "${": expected "}" after the column name`,
			wantError: `unclosed "${": expected "}" after the column name (at character 3)`,
		},
		{
			name: "empty placeholder", in: "${}", wantOffset: 0,
			wantMsg:   `empty placeholder: expected "${column}"`,
			wantError: `empty placeholder: expected "${column}" (at character 1)`,
		},
		{
			name: "blank placeholder after literal", in: "A#${ }", wantOffset: 2,
			wantMsg:   `empty placeholder: expected "${column}"`,
			wantError: `empty placeholder: expected "${column}" (at character 3)`,
		},
		{
			name: "width without name", in: "${:3}", wantOffset: 0,
			wantMsg:   `empty placeholder: expected "${column}"`,
			wantError: `empty placeholder: expected "${column}" (at character 1)`,
		},
		{
			// The offset is where the width text starts: the space after ':'.
			name: "bad width", in: "${ id : x }", wantOffset: 7,
			wantMsg:   `bad width " x " in ${ id : x }: expected a whole number from 0 to 64`,
			wantError: `bad width " x " in ${ id : x }: expected a whole number from 0 to 64 (at character 8)`,
		},
		{
			name: "width 65", in: "${id:65}", wantOffset: 5,
			wantMsg:   `bad width "65" in ${id:65}: expected a whole number from 0 to 64`,
			wantError: `bad width "65" in ${id:65}: expected a whole number from 0 to 64 (at character 6)`,
		},
		{
			name: "negative width", in: "K#${id:-1}", wantOffset: 7,
			wantMsg:   `bad width "-1" in ${id:-1}: expected a whole number from 0 to 64`,
			wantError: `bad width "-1" in ${id:-1}: expected a whole number from 0 to 64 (at character 8)`,
		},
		{
			name: "empty width", in: "${id:}", wantOffset: 5,
			wantMsg:   `bad width "" in ${id:}: expected a whole number from 0 to 64`,
			wantError: `bad width "" in ${id:}: expected a whole number from 0 to 64 (at character 6)`,
		},
		{
			name: "two colons", in: "${id:1:2}", wantOffset: 5,
			wantMsg:   `bad width "1:2" in ${id:1:2}: expected a whole number from 0 to 64`,
			wantError: `bad width "1:2" in ${id:1:2}: expected a whole number from 0 to 64 (at character 6)`,
		},
		{
			name: "nested", in: "${a${b}}", wantOffset: 0,
			wantMsg:   `unclosed "${": expected "}" before the next "${"`,
			wantError: `unclosed "${": expected "}" before the next "${" (at character 1)`,
		},
		{
			name: "nested after valid placeholder", in: "${x}#${a#${b}", wantOffset: 5,
			wantMsg:   `unclosed "${": expected "}" before the next "${"`,
			wantError: `unclosed "${": expected "}" before the next "${" (at character 6)`,
		},
		{
			// The first error wins; the later unclosed "${" is not reached.
			name: "first error wins", in: "${}${", wantOffset: 0,
			wantMsg:   `empty placeholder: expected "${column}"`,
			wantError: `empty placeholder: expected "${column}" (at character 1)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTemplate(tt.in)
			if err == nil {
				t.Fatalf("ParseTemplate(%q) = %#v, want an error", tt.in, got.Parts)
			}
			var te *TemplateError
			if !errors.As(err, &te) {
				t.Fatalf("ParseTemplate(%q) error is %T (%v), want *TemplateError", tt.in, err, err)
			}
			if te.Offset != tt.wantOffset {
				t.Errorf("Offset = %d, want %d", te.Offset, tt.wantOffset)
			}
			if te.Msg != tt.wantMsg {
				t.Errorf("Msg = %q, want %q", te.Msg, tt.wantMsg)
			}
			if err.Error() != tt.wantError {
				t.Errorf("Error() = %q, want %q", err.Error(), tt.wantError)
			}
			if d := cmp.Diff(Template{}, got); d != "" {
				t.Errorf("on error the template is not zero (-want +got):\n%s", d)
			}
		})
	}
}

func TestTemplateColumns(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"LITERAL", nil},
		{"$${not_a_column}", nil},
		{"${id}", []string{"id"}},
		{"${b}#${a}", []string{"b", "a"}},
		{"${a}#${b}#${a}#${c:4}#${b:0}", []string{"a", "b", "c"}},
		{"${ a }${a:3}", []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			tpl, err := ParseTemplate(tt.in)
			if err != nil {
				t.Fatalf("ParseTemplate(%q): %v", tt.in, err)
			}
			if d := cmp.Diff(tt.want, tpl.Columns()); d != "" {
				t.Errorf("Columns() mismatch (-want +got):\n%s", d)
			}
		})
	}
}
