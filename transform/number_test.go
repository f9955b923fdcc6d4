package transform

import "testing"

func TestCanonicalNumber(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{in: "0", want: "0"},
		{in: "-0.000", want: "0"},
		{in: "+007", want: "7"},
		{in: "12.500", want: "12.5"},
		{in: "-.5", want: "-0.5"},
		{in: "5.", want: "5"},
		{in: "1.5e-7", want: "0.00000015"},
		{in: "1.5E+3", want: "1500"},
		{in: "12e-1", want: "1.2"},
		{in: "1e125", want: "1" + zeros(125)},
		{in: "9.9999999999999999999999999999999999999e125", want: "99999999999999999999999999999999999999" + zeros(88)},
		{in: "1e-130", want: "0." + zeros(129) + "1"},
		{in: "1e126", err: "number of magnitude 1E+126: DynamoDB numbers range from 1E-130 to 9.99…E+125 in magnitude"},
		{in: "1e-131", err: "number of magnitude 1E-131: DynamoDB numbers range from 1E-130 to 9.99…E+125 in magnitude"},
		{in: "1234567890123456789012345678901234567.8", want: "1234567890123456789012345678901234567.8"},
		{in: "1234567890123456789012345678901234567.89", err: "number with 39 significant digits: DynamoDB numbers hold at most 38"},
		{in: "100000000000000000000000000000000000000000", want: "1" + zeros(41)},
		{in: "abc", err: `"abc" is not a decimal number`},
		{in: "", err: `"" is not a decimal number`},
		{in: ".", err: `"." is not a decimal number`},
		{in: "1e", err: `"1e" is not a decimal number`},
		{in: "1.2.3", err: `"1.2.3" is not a decimal number`},
	}
	for _, tc := range cases {
		got, err := CanonicalNumber(tc.in)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != tc.want || gotErr != tc.err {
			t.Errorf("CanonicalNumber(%q) = %q, %q; want %q, %q", tc.in, got, gotErr, tc.want, tc.err)
		}
	}
}

func TestPadNumber(t *testing.T) {
	cases := []struct {
		in    string
		width int
		want  string
	}{
		{"42", 5, "00042"},
		{"12345", 3, "12345"},
		{"-42", 4, "-0042"},
		{"1.25", 4, "0001.25"},
	}
	for _, tc := range cases {
		if got := padNumber(tc.in, tc.width); got != tc.want {
			t.Errorf("padNumber(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

func zeros(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
	}
	return string(b)
}
