package transform

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// DynamoDB number limits: up to 38 significant digits, magnitudes from
// 1E-130 to 9.9999999999999999999999999999999999999E+125.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html#HowItWorks.DataTypes.Number
const (
	MaxNumberDigits   = 38
	MinNumberExponent = -130
	MaxNumberExponent = 125
)

// ErrNotANumber is returned for NaN and ±Infinity, which DynamoDB numbers
// cannot hold.
var ErrNotANumber = errors.New("NaN and Infinity are not DynamoDB numbers")

// CanonicalNumber converts decimal text — an optional sign, digits with an
// optional fraction, an optional exponent ("-0012.50", "1.5e-7") — into the
// canonical form DynamoDB itself returns: no exponent, no leading or
// trailing zeros, no "-0" ("-12.5", "0.00000015"). The conversion is exact:
// no float64 is involved. It fails for text that is not a number, for more
// than 38 significant digits and for a magnitude outside DynamoDB's range.
func CanonicalNumber(s string) (string, error) {
	neg, coeff, exp, err := parseDecimal(s)
	if err != nil {
		return "", err
	}
	// Strip leading zeros, then trailing zeros into the exponent.
	coeff = strings.TrimLeft(coeff, "0")
	if coeff == "" {
		return "0", nil
	}
	trimmed := strings.TrimRight(coeff, "0")
	exp += len(coeff) - len(trimmed)
	coeff = trimmed
	if len(coeff) > MaxNumberDigits {
		return "", fmt.Errorf("number with %d significant digits: DynamoDB numbers hold at most %d", len(coeff), MaxNumberDigits)
	}
	if lead := len(coeff) - 1 + exp; lead > MaxNumberExponent || lead < MinNumberExponent {
		return "", fmt.Errorf("number of magnitude 1E%+d: DynamoDB numbers range from 1E-130 to 9.99…E+125 in magnitude", lead)
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	switch {
	case exp >= 0:
		b.WriteString(coeff)
		for range exp {
			b.WriteByte('0')
		}
	case -exp < len(coeff):
		b.WriteString(coeff[:len(coeff)+exp])
		b.WriteByte('.')
		b.WriteString(coeff[len(coeff)+exp:])
	default:
		b.WriteString("0.")
		for range -exp - len(coeff) {
			b.WriteByte('0')
		}
		b.WriteString(coeff)
	}
	return b.String(), nil
}

// parseDecimal splits decimal text into sign, coefficient digits and a
// power-of-ten exponent: "-12.50e3" → (true, "1250", 1).
func parseDecimal(s string) (neg bool, coeff string, exp int, err error) {
	bad := func() (bool, string, int, error) {
		return false, "", 0, fmt.Errorf("%q is not a decimal number", s)
	}
	t := s
	if t != "" && (t[0] == '-' || t[0] == '+') {
		neg = t[0] == '-'
		t = t[1:]
	}
	mant, expText, hasExp := strings.Cut(strings.ToLower(t), "e")
	if hasExp {
		e, err := strconv.Atoi(expText)
		if err != nil {
			return bad()
		}
		exp = e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart == "" && frac == "" || !allDigits(intPart) || !allDigits(frac) {
		return bad()
	}
	return neg, intPart + frac, exp - len(frac), nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// padNumber left-pads the integer part of canonical decimal text with zeros
// to width digits, keeping a leading minus sign: ("42", 5) → "00042".
func padNumber(s string, width int) string {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	intLen := strings.IndexByte(s, '.')
	if intLen < 0 {
		intLen = len(s)
	}
	if intLen < width {
		s = strings.Repeat("0", width-intLen) + s
	}
	if neg {
		return "-" + s
	}
	return s
}
