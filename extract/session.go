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

// SessionSettings are pinned on every connection Connect makes, so runs under
// other server, role or PGOPTIONS settings write the same items under the
// same keys. Like pg_dump's, they fix the text PostgreSQL gives for values:
// ISO dates, postgres intervals, exact floats (extra_float_digits 3), UTC
// time zone, hex bytea, C money, and UTF8 with standard strings (pgx needs
// both); synchronize_seqscans off keeps unordered reads in the same order.
// search_path is left alone: it resolves unqualified names.
// https://www.postgresql.org/docs/current/config-setting.html
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

// pinSession sets SessionSettings on a new connection (AfterConnect).
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
