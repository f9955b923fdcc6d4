package follow

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pg2dynamo/pg2dynamo/extract"
)

// maxName is PostgreSQL's identifier length (NAMEDATALEN − 1 bytes).
const maxName = 63

var nameChars = regexp.MustCompile(`[^a-z0-9_]+`)

// DefaultName is the default slot and publication name for a follow of table:
// pg2dynamo_ and the lower-cased name, bytes outside [a-z0-9_] as _, at most 63
// bytes.
func DefaultName(table string) string {
	n := "pg2dynamo_" + nameChars.ReplaceAllString(strings.ToLower(table), "_")
	return n[:min(len(n), maxName)]
}

var slotName = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

// CheckSlot refuses a slot name PostgreSQL would: 1 to 63 of a-z, 0-9 and _.
func CheckSlot(name string) error {
	if !slotName.MatchString(name) {
		return fmt.Errorf("slot name %q: expected 1 to 63 characters of a-z, 0-9 and _", name)
	}
	return nil
}

// PublicationError is an existing publication that does not send every insert,
// update, delete and truncate of the followed tables, or partitions' changes as
// the table's own (publish_via_partition_root). Fix says what to run.
type PublicationError struct {
	Name    string
	Missing []string
	Fix     []string
}

func (e *PublicationError) Error() string {
	return fmt.Sprintf("publication %s does not publish %s, so the follow would miss changes; run: %s",
		e.Name, strings.Join(e.Missing, ", "), strings.Join(e.Fix, "; "))
}

// EnsurePublication makes publication name publish g's tables: it creates it,
// or checks an existing one (else a *PublicationError) and adds the tables it
// lacks. The publication must exist before the slot streams its changes.
// https://www.postgresql.org/docs/current/sql-createpublication.html
func EnsurePublication(ctx context.Context, conn *pgx.Conn, name string, g *Graph) (created bool, err error) {
	tables := g.Tables()
	viaRoot := g.partitioned()
	pub, exists, err := extract.NewCatalog(conn).Publication(ctx, name)
	if err != nil {
		return false, err
	}
	if !exists {
		with := ""
		if viaRoot {
			with = " WITH (publish_via_partition_root = true)"
		}
		_, err := conn.Exec(ctx, fmt.Sprintf("CREATE PUBLICATION %s FOR TABLE %s%s", quote(name), list(tables), with))
		if err != nil {
			return false, fmt.Errorf("create publication %s: %w", name, err)
		}
		return true, nil
	}
	pe := &PublicationError{Name: name}
	var kinds []string
	for _, k := range []struct {
		on   bool
		kind string
	}{{pub.Insert, "insert"}, {pub.Update, "update"}, {pub.Delete, "delete"}, {pub.Truncate, "truncate"}} {
		if !k.on {
			pe.Missing = append(pe.Missing, k.kind+"s")
		}
		kinds = append(kinds, k.kind)
	}
	if len(pe.Missing) > 0 {
		pe.Fix = append(pe.Fix, fmt.Sprintf("ALTER PUBLICATION %s SET (publish = '%s')", quote(name), strings.Join(kinds, ", ")))
	}
	if viaRoot && !pub.ViaRoot {
		pe.Missing = append(pe.Missing, "the changes of partitions as their partitioned table's")
		pe.Fix = append(pe.Fix, fmt.Sprintf("ALTER PUBLICATION %s SET (publish_via_partition_root = true)", quote(name)))
	}
	if len(pe.Missing) > 0 {
		return false, pe
	}
	var missing []pgx.Identifier
	for _, t := range tables {
		if !pub.Publishes(t) {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		if _, err := conn.Exec(ctx, fmt.Sprintf("ALTER PUBLICATION %s ADD TABLE %s", quote(name), list(missing))); err != nil {
			return false, fmt.Errorf("add %s to publication %s: %w", list(missing), name, err)
		}
	}
	return false, nil
}

func list(tables []pgx.Identifier) string {
	out := make([]string, len(tables))
	for i, t := range tables {
		out[i] = t.Sanitize()
	}
	return strings.Join(out, ", ")
}

// SlotPosition returns slot name's confirmed position, and whether it exists.
func SlotPosition(ctx context.Context, conn *pgx.Conn, name string) (pglogrepl.LSN, bool, error) {
	s, exists, err := extract.NewCatalog(conn).Slot(ctx, name)
	return s.ConfirmedFlush, exists, err
}

// SlotActive reports whether a process streams from slot name now (false when
// it does not exist).
func SlotActive(ctx context.Context, conn *pgx.Conn, name string) (bool, error) {
	s, _, err := extract.NewCatalog(conn).Slot(ctx, name)
	return s.Active, err
}

// dropSlot drops slot, waiting up to SlotReleaseWait for another connection to
// let it go.
func dropSlot(ctx context.Context, conn *pgx.Conn, slot string) error {
	deadline := time.Now().Add(SlotReleaseWait)
	for {
		_, err := conn.Exec(ctx, "SELECT pg_drop_replication_slot($1)", slot)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "55006" {
			if err != nil {
				return fmt.Errorf("drop replication slot %s: %w", slot, err)
			}
			return nil
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("drop replication slot %s: %w: a follow is streaming from it; stop it first (SIGINT or Ctrl-C: it stops at the next batch, and a resume would apply its window again), then drop the slot", slot, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// CurrentLSN is the server's WAL write position now (pg_current_wal_lsn()):
// every transaction committed with synchronous_commit on ends before it; one
// committed with it off may not be written yet (see FlushedLSN).
func CurrentLSN(ctx context.Context, conn *pgx.Conn) (pglogrepl.LSN, error) {
	var text string
	if err := conn.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&text); err != nil {
		return 0, fmt.Errorf("current WAL position: %w", err)
	}
	return pglogrepl.ParseLSN(text)
}

// SlotReleaseWait is how long Drop waits for a slot another connection holds
// (a follow just ended holds it until the server notices).
const SlotReleaseWait = 5 * time.Second

// Drop drops slot name and publication pub, each if it exists, and reports
// what it dropped. A slot active elsewhere after SlotReleaseWait is refused.
func Drop(ctx context.Context, conn *pgx.Conn, slot, pub string) (dropped []string, err error) {
	_, exists, err := SlotPosition(ctx, conn, slot)
	if err != nil {
		return nil, err
	}
	if exists {
		if err := dropSlot(ctx, conn, slot); err != nil {
			return nil, err
		}
		dropped = append(dropped, "replication slot "+slot)
	}
	_, pubExists, err := extract.NewCatalog(conn).Publication(ctx, pub)
	if err != nil {
		return dropped, err
	}
	if pubExists {
		if _, err := conn.Exec(ctx, "DROP PUBLICATION "+pgx.Identifier{pub}.Sanitize()); err != nil {
			return dropped, fmt.Errorf("drop publication %s: %w", pub, err)
		}
		dropped = append(dropped, "publication "+pub)
	}
	return dropped, nil
}

// AddNewTables adds to publication pub the tables g follows that the
// checkpoint's Fingerprint was lacks, and returns their names: their changes
// reach the slot from the ALTER PUBLICATION's commit, a later snapshot holds
// the rest. A table taken out while no follow ran is left to CompareCatalog.
// https://www.postgresql.org/docs/current/sql-alterpublication.html
func (g *Graph) AddNewTables(ctx context.Context, conn *pgx.Conn, pub string, was *Fingerprint) ([]string, error) {
	p, exists, err := extract.NewCatalog(conn).Publication(ctx, pub)
	if err != nil || !exists {
		return nil, err
	}
	var add []pgx.Identifier
	var names []string
	for _, oid := range slices.Sorted(maps.Keys(g.byOID)) {
		t := g.byOID[oid]
		id := pgx.Identifier{t.schema, t.name}
		if _, recorded := was.Tables[oid]; recorded || p.Publishes(id) {
			continue
		}
		add = append(add, id)
		names = append(names, qualified(t.schema, t.name))
	}
	if len(add) == 0 {
		return nil, nil
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("ALTER PUBLICATION %s ADD TABLE %s", quote(pub), list(add))); err != nil {
		return nil, fmt.Errorf("add %s to publication %s: %w", list(add), pub, err)
	}
	return names, nil
}

// DropOldTables takes out of publication pub the tables that was (the graph of
// a previous version of the mapping) follows and g does not (the new version
// removed their entities), so that their changes no longer reach the slot,
// and returns their names. Tables pub does not list by name (FOR ALL TABLES,
// FOR TABLES IN SCHEMA) are left alone.
// https://www.postgresql.org/docs/current/sql-alterpublication.html
func (g *Graph) DropOldTables(ctx context.Context, conn *pgx.Conn, pub string, was *Graph) ([]string, error) {
	var old []uint32
	for oid := range was.byOID {
		if g.byOID[oid] == nil {
			old = append(old, oid)
		}
	}
	if len(old) == 0 {
		return nil, nil
	}
	names, err := extract.NewCatalog(conn).ListedTables(ctx, pub, old)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("ALTER PUBLICATION %s DROP TABLE %s", quote(pub), strings.Join(names, ", "))); err != nil {
		return nil, fmt.Errorf("take %s out of publication %s: %w", strings.Join(names, ", "), pub, err)
	}
	return names, nil
}
