package verify

import (
	"errors"
	"math/big"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgtype"
)

// Every value Stream decodes for a scalar column comes back from its
// encoding as it went in: its Go type, and for times the instant, the
// wall clock and the offset that pgx encodes dates and timestamps from.
func TestValuesRoundTrip(t *testing.T) {
	zone := time.FixedZone("", -(3*3600 + 30*60))
	vals := []any{
		nil, true, false, int16(-7), int32(1 << 30), int64(-1 << 62), float32(1.5), float64(-2.25e300),
		"", "text with \x00 and é", []byte{}, []byte{0xde, 0xad}, [16]byte{1, 2, 3, 15: 0xff},
		time.Date(2024, 2, 29, 23, 59, 59, 999999000, time.UTC), time.Date(1999, 12, 31, 20, 0, 0, 0, zone),
		pgtype.Infinity, pgtype.NegativeInfinity,
		pgtype.Numeric{Int: big.NewInt(-12345), Exp: -2, Valid: true},
		pgtype.Numeric{Int: new(big.Int).Lsh(big.NewInt(1), 200), Exp: 3, Valid: true},
		pgtype.Numeric{NaN: true, Valid: true},
		pgtype.Numeric{InfinityModifier: pgtype.NegativeInfinity, Valid: true},
	}
	var b []byte
	for _, v := range vals {
		var err error
		if b, err = appendValue(b, v); err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
	}
	var got []any
	for len(b) > 0 {
		v, rest, err := readValue(b)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
		b = rest
	}
	opts := gocmp.Options{
		gocmp.Comparer(func(x, y time.Time) bool {
			_, xo := x.Zone()
			_, yo := y.Zone()
			return x.Equal(y) && xo == yo && x.Format(time.DateTime) == y.Format(time.DateTime)
		}),
		gocmp.Comparer(func(x, y *big.Int) bool { return (x == nil && y == nil) || (x != nil && y != nil && x.Cmp(y) == 0) }),
	}
	if d := gocmp.Diff(vals, got, opts); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if _, err := appendValue(nil, map[string]any{}); !errors.Is(err, errValueType) {
		t.Errorf("a map: error %v, want errValueType", err)
	}
}
