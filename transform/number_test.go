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

func TestKeyNumberText(t *testing.T) {
	cases := []struct {
		in           string
		width, scale int
		want         string
	}{
		{"42", 5, 0, "00042"},
		{"-42", 4, 0, "-9957"},
		{"0", 3, 0, "000"},
		{"-1", 3, 0, "-998"},
		{"1.25", 4, 2, "0001.25"},
		{"1.5", 4, 2, "0001.50"},
		{"-1.5", 2, 2, "-98.49"},
		{"-2", 1, 2, "-7.99"},
	}
	for _, tc := range cases {
		got, reason := appendKeyText(nil, tc.in, keyEnc{kind: encNumber, width: tc.width, scale: tc.scale, name: "x"})
		if string(got) != tc.want || reason != "" {
			t.Errorf("key text of %s at width %d, scale %d = %q (%s), want %q", tc.in, tc.width, tc.scale, got, reason, tc.want)
		}
		if ref := referenceKeyNumber(tc.in, tc.width, tc.scale); ref != tc.want {
			t.Errorf("reference key text of %s = %q, want %q", tc.in, ref, tc.want)
		}
	}
	for _, tc := range []struct {
		in     string
		width  int
		reason string
	}{
		{"12345", 3, "x = 12345 has 5 digits before the decimal point, more than its key width 3: the key would sort out of numeric order (widen it with ${x:5})"},
		{"-1.125", 3, "x = -1.125 has 3 decimals, more than the 2 of its key text"},
	} {
		if got, reason := appendKeyText(nil, tc.in, keyEnc{kind: encNumber, width: tc.width, scale: 2, name: "x"}); reason != tc.reason || len(got) != 0 {
			t.Errorf("key text of %s = %q, %q; want the reason %q", tc.in, got, reason, tc.reason)
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
