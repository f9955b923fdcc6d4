package extract

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Setting is one run-time parameter every session pg2dynamo opens pins.
type Setting struct {
	Name, Value string
}

// SessionSettings are the settings that change the text PostgreSQL gives
// for a value, or what a query source computes, pinned so that a run, a
// re-run and a resumed run under other settings write the same items under
// the same keys. Every connection of Connect (and so of Fork, and of verify
// and plan, which connect through it) sets them with SET right after
// connecting: a session's SET overrides postgresql.conf, ALTER DATABASE …
// SET, ALTER ROLE … SET, PGOPTIONS and the connection string's options
// ("Run-time parameters", https://www.postgresql.org/docs/current/config-setting.html).
//
// Values print as with PostgreSQL's defaults, so the documented forms do
// not change (TimeZone and lc_monetary have none: initdb takes them from
// its machine); pg_dump pins the first four for the same reason
// (setup_connection in src/bin/pg_dump/pg_dump.c):
//   - DateStyle 'ISO, MDY': dates and timestamps inside values read as text
//     (ranges, composites) print as 2024-01-02 03:04:05; MDY pins how a
//     query source's ambiguous date literals read.
//   - IntervalStyle postgres: interval prints as "1 day 02:00:00".
//   - extra_float_digits 3: floats inside values read as text (point,
//     composites) print exactly; from PostgreSQL 12 on, shortest
//     round-trip digits, the same as the default 1.
//   - synchronize_seqscans off: a sequential scan starts at the table's
//     first page, not where a concurrent scan is, so rows read in no order
//     (an embed without order_by, a source without a primary key) come in
//     the same order from run to run whenever the plan is the same.
//   - TimeZone UTC: timestamptz inside values read as text (tstzrange,
//     composites) prints in UTC, as timestamptz attributes are written, and
//     a query source's date arithmetic on timestamptz is the same anywhere.
//   - bytea_output hex: bytea inside values read as text prints as \x….
//   - lc_monetary C: money prints as $1,234.56 whatever the server's
//     locale (C always exists; other locales are per server).
//   - standard_conforming_strings on: a backslash in a query source's
//     string literal is itself, as pgx also requires.
//   - client_encoding UTF8: text arrives as UTF-8, as pgx requires.
//
// Left alone: search_path (it resolves the mapping's unqualified table
// names; it also changes how regclass and the other reg* types print),
// lc_numeric and lc_time (they change only to_char), xmloption and
// xmlbinary (they change XML input and XML functions, not output), and the
// timeouts pg_dump turns off (they change no value).
var SessionSettings = []Setting{
	{"DateStyle", "ISO, MDY"},
	{"IntervalStyle", "postgres"},
	{"extra_float_digits", "3"},
	{"synchronize_seqscans", "off"},
	{"TimeZone", "UTC"},
	{"bytea_output", "hex"},
	{"lc_monetary", "C"},
	{"standard_conforming_strings", "on"},
	{"client_encoding", "UTF8"},
}

// pinSession sets SessionSettings on a new connection: the
// pgconn.Config.AfterConnect of every connection Connect configures.
func pinSession(ctx context.Context, conn *pgconn.PgConn) error {
	var sql strings.Builder
	for _, s := range SessionSettings {
		// Names and values are constants above: no quoting beyond the
		// literal's.
		fmt.Fprintf(&sql, "SET %s = '%s';\n", s.Name, s.Value)
	}
	if _, err := conn.Exec(ctx, sql.String()).ReadAll(); err != nil {
		return fmt.Errorf("pin session settings: %w", err)
	}
	return nil
}
