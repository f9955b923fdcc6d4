// Package scriptcheck holds tests of the shell scripts under scripts/; it
// has no code of its own.
//
//   - TestPostgresNotFound runs scripts/postgres.sh's postgres_ensure with
//     PATH holding none of PostgreSQL's programs and nothing listening on
//     PGPORT, as a user who cannot install it, on a machine without
//     apt-get, and with an apt-get that installs nothing: it fails with one
//     line saying what to install, and never touches the machine's server.
//   - TestPostgresLogical runs postgres_logical against a fake psql and
//     pg_ctlcluster: the line before the restart names each setting it
//     changes with its old and new value, and only those are changed.
//   - TestPostgresFound runs postgres_ensure against the server the tests
//     use, which answers: it is used as it is.
package scriptcheck
