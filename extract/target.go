package extract

import (
	"fmt"
	"os"

	"github.com/jackc/pgx/v5"
)

// Target is where a connection string leads as Connect would resolve it (the
// string, then PG* variables, then libpq's defaults), without connecting.
type Target struct {
	// User is the role connected as (default: the operating-system user).
	User string
	// Database is the database connected to (default: the user name).
	Database string
	// Host is the first host tried (name, address or socket dir); Port its port.
	Host string
	Port uint16
	// Env lists the target-naming libpq variables set, in targetVars order.
	Env []string
}

// targetVars are the libpq variables choosing the server, database or user.
var targetVars = []string{"PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGSERVICE", "PGSERVICEFILE"}

// ResolveTarget resolves connString to its Target, never leaking the password.
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
