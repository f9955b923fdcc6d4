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
// for a value, or what a query source computes, pinned so that runs under
// other settings write the same items under the same keys. Every
// connection of Connect (and so of Fork, verify and plan) sets them right
// after connecting; a session's SET overrides the server's, the database's,
// the role's and PGOPTIONS
// (https://www.postgresql.org/docs/current/config-setting.html). Values are
// PostgreSQL's defaults where it has one, as pg_dump pins the first four
// (setup_connection in src/bin/pg_dump/pg_dump.c):
//   - DateStyle 'ISO, MDY': dates inside values read as text print as
//     2024-01-02 03:04:05; MDY fixes how ambiguous date literals read.
//   - IntervalStyle postgres: "1 day 02:00:00".
//   - extra_float_digits 3: floats inside values read as text print
//     exactly (shortest round-trip digits, as the default from 12 on).
//   - synchronize_seqscans off: a sequential scan starts at the first
//     page, so rows read in no order come in the same order run to run.
//   - TimeZone UTC: timestamptz inside values read as text prints in UTC,
//     and a query source's date arithmetic is the same anywhere.
//   - bytea_output hex, lc_monetary C (money as $1,234.56 on any server),
//     standard_conforming_strings on and client_encoding UTF8 (pgx needs both).
//
// Left alone: search_path (it resolves unqualified table names),
// lc_numeric and lc_time (only to_char), xmloption and xmlbinary (XML
// input only) and timeouts (no value changes).
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
		fmt.Fprintf(&sql, "SET %s = '%s';\n", s.Name, s.Value)
	}
	if _, err := conn.Exec(ctx, sql.String()).ReadAll(); err != nil {
		return fmt.Errorf("pin session settings: %w", err)
	}
	return nil
}
