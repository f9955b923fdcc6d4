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

// ErrNotANumber is returned for NaN and ±Infinity, which DynamoDB cannot hold.
var ErrNotANumber = errors.New("NaN and Infinity are not DynamoDB numbers")

// CanonicalNumber converts decimal text ("-0012.50", "1.5e-7") exactly, without
// float64, into DynamoDB's canonical form: no exponent, no leading or trailing
// zeros, no "-0" ("-12.5", "0.00000015"). It fails for non-numbers, over 38
// significant digits, or a magnitude out of range.
func CanonicalNumber(s string) (string, error) {
	var buf [64]byte
	b, err := appendCanonical(buf[:0], s)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// appendCanonical appends CanonicalNumber(s) to dst, unchanged on error.
func appendCanonical(dst []byte, s string) ([]byte, error) {
	t := s
	neg := false
	if t != "" && (t[0] == '-' || t[0] == '+') {
		neg = t[0] == '-'
		t = t[1:]
	}
	mant, exp := t, 0
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		e, err := strconv.Atoi(t[i+1:])
		if err != nil {
			return dst, notDecimal(s)
		}
		mant, exp = t[:i], e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart == "" && frac == "" || !allDigits(intPart) || !allDigits(frac) {
		return dst, notDecimal(s)
	}
	var buf [64]byte
	coeff := append(append(buf[:0], intPart...), frac...)
	return appendDecimal(dst, neg, coeff, exp-len(frac))
}

// isCanonicalInt reports whether s is an integer CanonicalNumber keeps: "0", or
// up to 38 digits without leading zero, maybe negative.
func isCanonicalInt(s string) bool {
	if s == "0" {
		return true
	}
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > MaxNumberDigits || s[0] == '0' {
		return false
	}
	return allDigits(s)
}

// notDecimal is the non-decimal error; it copies s so s does not escape.
func notDecimal(s string) error {
	return fmt.Errorf("%q is not a decimal number", strings.Clone(s))
}

// appendDecimal appends ±coeff×10^exp canonically (coeff digits may have
// leading and trailing zeros), or returns dst and why DynamoDB cannot hold it.
func appendDecimal(dst []byte, neg bool, coeff []byte, exp int) ([]byte, error) {
	// Strip leading zeros, then trailing zeros into the exponent.
	i := 0
	for i < len(coeff) && coeff[i] == '0' {
		i++
	}
	coeff = coeff[i:]
	if len(coeff) == 0 {
		return append(dst, '0'), nil
	}
	j := len(coeff)
	for coeff[j-1] == '0' {
		j--
	}
	exp += len(coeff) - j
	coeff = coeff[:j]
	if len(coeff) > MaxNumberDigits {
		return dst, fmt.Errorf("number with %d significant digits: DynamoDB numbers hold at most %d", len(coeff), MaxNumberDigits)
	}
	if lead := len(coeff) - 1 + exp; lead > MaxNumberExponent || lead < MinNumberExponent {
		return dst, fmt.Errorf("number of magnitude 1E%+d: DynamoDB numbers range from 1E-130 to 9.99…E+125 in magnitude", lead)
	}
	if neg {
		dst = append(dst, '-')
	}
	switch {
	case exp >= 0:
		dst = append(dst, coeff...)
		dst = appendZeros(dst, exp)
	case -exp < len(coeff):
		dst = append(dst, coeff[:len(coeff)+exp]...)
		dst = append(dst, '.')
		dst = append(dst, coeff[len(coeff)+exp:]...)
	default:
		dst = append(dst, "0."...)
		dst = appendZeros(dst, -exp-len(coeff))
		dst = append(dst, coeff...)
	}
	return dst, nil
}

func appendZeros(dst []byte, n int) []byte {
	for range n {
		dst = append(dst, '0')
	}
	return dst
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
