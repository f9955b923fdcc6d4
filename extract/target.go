package extract

import (
	"fmt"
	"os"

	"github.com/jackc/pgx/v5"
)

// Target is where a connection string leads, as Connect would resolve it
// (pgx follows libpq: the string, then the PG* variables, then libpq's
// defaults), without connecting.
type Target struct {
	// User is the role connected as; the operating-system user when
	// nothing names one.
	User string
	// Database is the database connected to; the user name when nothing
	// names one (the server's default).
	Database string
	// Host is the first host tried: a name, an address, or the directory
	// of a Unix-domain socket; Port its port.
	Host string
	Port uint16
	// Env lists the libpq variables that name the target (PGHOST,
	// PGHOSTADDR, PGPORT, PGDATABASE, PGUSER, PGSERVICE, PGSERVICEFILE)
	// and are set, in that order.
	Env []string
}

// targetVars are the libpq variables that choose the server, the database
// or the user.
var targetVars = []string{"PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGSERVICE", "PGSERVICEFILE"}

// ResolveTarget resolves connString (as Connect takes it) to its Target.
// Errors are pgconn's, which never contain the password.
func ResolveTarget(connString string) (Target, error) {
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		return Target{}, fmt.Errorf("source: %w", err)
	}
	t := Target{User: cfg.User, Database: cfg.Database, Host: cfg.Host, Port: cfg.Port}
	if t.Database == "" {
		t.Database = t.User
	}
	for _, v := range targetVars {
		if os.Getenv(v) != "" {
			t.Env = append(t.Env, v)
		}
	}
	return t, nil
}

// String renders "database D as user U on H:P".
func (t Target) String() string {
	return fmt.Sprintf("database %s as user %s on %s:%d", t.Database, t.User, t.Host, t.Port)
}
