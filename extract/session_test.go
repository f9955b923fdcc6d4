package extract_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// Settings that change how values print, set by ALTER DATABASE … SET and
// by PGOPTIONS, are overridden on the connection
// Connect opens and on its forks: every session shows SessionSettings, and
// prints an interval, a tstzrange, money, a float inside a point and bytea
// inside a composite as with PostgreSQL's defaults.
func TestSessionSettingsPinned(t *testing.T) {
	url := testenv.NewDatabase(t)
	db := testenv.Connect(t, url)
	var name string
	if err := db.QueryRow(context.Background(), "SELECT current_database()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	testenv.Exec(t, url, "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+` SET DateStyle = 'German, DMY';
ALTER DATABASE `+pgx.Identifier{name}.Sanitize()+` SET bytea_output = 'escape';
ALTER DATABASE `+pgx.Identifier{name}.Sanitize()+` SET synchronize_seqscans = on;
ALTER DATABASE `+pgx.Identifier{name}.Sanitize()+` SET lc_monetary = 'C.UTF-8';
ALTER DATABASE `+pgx.Identifier{name}.Sanitize()+` SET TimeZone = 'Asia/Kolkata';`)
	t.Setenv("PGOPTIONS", "-c IntervalStyle=sql_standard -c extra_float_digits=-3")
	ctx := context.Background()
	src, err := extract.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close(ctx)
	if err := src.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	fork, err := src.Fork(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer fork.Close(ctx)

	want := map[string]string{}
	for _, s := range extract.SessionSettings {
		want[s.Name] = s.Value
	}
	const values = `SELECT format('%s', '1 day -02:00:03.5'::interval), format('%s', tstzrange('2024-01-02 03:04:05+02', NULL)),
  format('%s', 1234.5::money), format('%s', point(0.1, 1e-7)), format('%s', ROW('\x00ff'::bytea, '2024-02-29'::date))`
	wantValues := []string{"1 day -02:00:03.5", `["2024-01-02 01:04:05+00",)`, "$1,234.50", "(0.1,1e-07)", `("\\x00ff",2024-02-29)`}
	for who, s := range map[string]*extract.Source{"source": src, "fork": fork} {
		got := map[string]string{}
		for _, set := range extract.SessionSettings {
			var v string
			if err := s.Conn().QueryRow(ctx, "SELECT current_setting($1)", set.Name).Scan(&v); err != nil {
				t.Fatal(err)
			}
			got[set.Name] = v
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s settings (-want +got):\n%s", who, d)
		}
		gotValues := make([]string, len(wantValues))
		dst := make([]any, len(gotValues))
		for i := range gotValues {
			dst[i] = &gotValues[i]
		}
		if err := s.Conn().QueryRow(ctx, values).Scan(dst...); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(wantValues, gotValues); d != "" {
			t.Errorf("%s values (-want +got):\n%s", who, d)
		}
	}
}
