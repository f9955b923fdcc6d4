package extract

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// DDL capture: event triggers record each DDL command as a row of
// DDLSchema.DDLTable, published by DDLPublication, so a follow meets each
// command at its LSN. They need a superuser (or rds_superuser).
// https://www.postgresql.org/docs/current/event-triggers.html

const (
	// DDLSchema is the schema of pg2dynamo's own objects in the source.
	DDLSchema = "pg2dynamo"
	// DDLTable is the table DDL commands are recorded in.
	DDLTable = "ddl_events"
	// ddlSlots lists the replication slots of the follows that stream
	// DDLPublication; a slot's name is its own (a follow's --slot), so only
	// this list tells them from other tools' slots.
	ddlSlots = "ddl_slots"
	// DDLPublication is the publication that publishes DDLTable.
	DDLPublication = "pg2dynamo_ddl"
	// ddlTrigger names the event triggers (with _end and _drop).
	ddlTrigger = "pg2dynamo_ddl"
	// DDLKeep is how many latest rows DDLTable keeps, for people; each DDL
	// command trims older ones (the publication publishes inserts only).
	DDLKeep = 10_000
)

// ErrNoDDLCapture means the role may not create event triggers.
var ErrNoDDLCapture = errors.New("the role is neither a superuser nor a member of rds_superuser, which event triggers need")

// InstallDDLCapture installs or updates the event triggers, DDLTable and
// DDLPublication in one transaction, and records slot ("": none) as one that
// streams DDLPublication, which DropDDLCapture keeps it for; ErrNoDDLCapture
// when the role may not.
func InstallDDLCapture(ctx context.Context, conn *pgx.Conn, slot string) error {
	return installDDLCapture(ctx, conn, slot, DDLKeep)
}

// installDDLCapture is InstallDDLCapture keeping keep rows.
func installDDLCapture(ctx context.Context, conn *pgx.Conn, slot string, keep int) error {
	var super bool
	var version int
	err := conn.QueryRow(ctx, `SELECT r.rolsuper OR (EXISTS (SELECT FROM pg_roles WHERE rolname = 'rds_superuser')
	AND pg_has_role(current_user, 'rds_superuser', 'member')), current_setting('server_version_num')::int
FROM pg_roles r WHERE r.rolname = current_user`).Scan(&super, &version)
	if err != nil {
		return fmt.Errorf("ddl capture: %w", err)
	}
	if !super {
		return ErrNoDDLCapture
	}
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		for _, stmt := range ddlInstall(version, keep) {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("ddl capture: %w", err)
			}
		}
		if slot == "" {
			return nil
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+DDLSchema+"."+ddlSlots+" VALUES ($1) ON CONFLICT DO NOTHING", slot); err != nil {
			return fmt.Errorf("ddl capture: %w", err)
		}
		return nil
	})
}

// ddlInstall is the SQL installing DDL capture on a server of version.
func ddlInstall(version, keep int) []string {
	// The trim skips rows other transactions hold (SKIP LOCKED), so DDL never
	// waits on it, and runs in its own block, so its failure keeps the record.
	trim := fmt.Sprintf(`BEGIN
		DELETE FROM %[1]s.%[2]s WHERE id IN (SELECT id FROM %[1]s.%[2]s
			WHERE id <= (SELECT max(id) FROM %[1]s.%[2]s) - %[3]d FOR UPDATE SKIP LOCKED);
	EXCEPTION WHEN OTHERS THEN
		NULL;
	END;`, DDLSchema, DDLTable, keep)
	filter, columns := "''", "''"
	if version >= 150000 {
		filter = "coalesce(pg_get_expr(pr.prqual, pr.prrelid), '')"
		columns = "coalesce(pr.prattrs::text, '')"
	}
	return []string{
		"CREATE SCHEMA IF NOT EXISTS " + DDLSchema,
		`CREATE TABLE IF NOT EXISTS ` + DDLSchema + `.` + DDLTable + ` (
	id bigserial PRIMARY KEY,
	at timestamptz NOT NULL DEFAULT now(),
	command text NOT NULL,
	object_type text,
	object_identity text,
	publications jsonb)`,
		"CREATE TABLE IF NOT EXISTS " + DDLSchema + "." + ddlSlots + " (slot_name text PRIMARY KEY)",
		`CREATE OR REPLACE FUNCTION ` + DDLSchema + `.record_ddl() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE
	r record;
	pubs jsonb;
BEGIN
	IF TG_EVENT = 'sql_drop' THEN
		FOR r IN SELECT * FROM pg_event_trigger_dropped_objects() LOOP
			IF r.schema_name IS DISTINCT FROM '` + DDLSchema + `' THEN
				INSERT INTO ` + DDLSchema + `.` + DDLTable + ` (command, object_type, object_identity)
				VALUES (TG_TAG, r.object_type, r.object_identity);
			END IF;
		END LOOP;
		` + trim + `
		RETURN;
	END IF;
	FOR r IN SELECT * FROM pg_event_trigger_ddl_commands() LOOP
		IF r.schema_name IS DISTINCT FROM '` + DDLSchema + `' THEN
			pubs := NULL;
			IF r.object_type LIKE 'publication%' THEN
				SELECT coalesce(jsonb_object_agg(p.pubname, jsonb_build_object(
					'insert', p.pubinsert, 'update', p.pubupdate, 'delete', p.pubdelete,
					'truncate', p.pubtruncate, 'via_root', p.pubviaroot,
					'tables', (SELECT coalesce(jsonb_agg(jsonb_build_array(c.oid::bigint, ` + filter + `, ` + columns + `)), '[]'::jsonb)
						FROM pg_publication_tables pt
						JOIN pg_namespace n ON n.nspname = pt.schemaname
						JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = pt.tablename
						LEFT JOIN pg_publication_rel pr ON pr.prpubid = p.oid AND pr.prrelid = c.oid
						WHERE pt.pubname = p.pubname))), '{}'::jsonb)
				INTO pubs FROM pg_publication p;
			END IF;
			INSERT INTO ` + DDLSchema + `.` + DDLTable + ` (command, object_type, object_identity, publications)
			VALUES (r.command_tag, r.object_type, r.object_identity, pubs);
		END IF;
	END LOOP;
	` + trim + `
EXCEPTION WHEN OTHERS THEN
	-- A DDL command never fails for its record: the follow's catalog
	-- checks still find what it changed.
	RAISE WARNING 'pg2dynamo could not record % for its follows: %', TG_TAG, SQLERRM;
END
$fn$`,
		"DROP EVENT TRIGGER IF EXISTS " + ddlTrigger + "_end",
		"CREATE EVENT TRIGGER " + ddlTrigger + "_end ON ddl_command_end EXECUTE FUNCTION " + DDLSchema + ".record_ddl()",
		"DROP EVENT TRIGGER IF EXISTS " + ddlTrigger + "_drop",
		"CREATE EVENT TRIGGER " + ddlTrigger + "_drop ON sql_drop EXECUTE FUNCTION " + DDLSchema + ".record_ddl()",
		`DO $do$ BEGIN
	IF NOT EXISTS (SELECT FROM pg_publication WHERE pubname = '` + DDLPublication + `') THEN
		CREATE PUBLICATION ` + DDLPublication + ` FOR TABLE ` + DDLSchema + `.` + DDLTable + ` WITH (publish = 'insert');
	END IF;
END $do$`,
	}
}

// DDLCaptureInstalled reports whether DDLPublication exists on conn's database.
func DDLCaptureInstalled(ctx context.Context, conn *pgx.Conn) (bool, error) {
	var ok bool
	err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_publication WHERE pubname = $1) AND EXISTS (SELECT FROM pg_event_trigger WHERE evtname = $2)",
		DDLPublication, ddlTrigger+"_end").Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("ddl capture: %w", err)
	}
	return ok, nil
}

// DropDDLCapture drops the event triggers, DDLPublication and DDLSchema,
// unless another follow's slot may stream it: then it names those slots (the
// slots InstallDDLCapture recorded, and those named as pg2dynamo names a
// follow's by default, which versions that recorded none installed it for),
// and forgets except.
func DropDDLCapture(ctx context.Context, conn *pgx.Conn, except string) (dropped []string, keptFor []string, err error) {
	var recorded bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", DDLSchema+"."+ddlSlots).Scan(&recorded); err != nil {
		return nil, nil, fmt.Errorf("ddl capture: %w", err)
	}
	byName := `slot_name LIKE 'pg2dynamo\_%' AND slot_name NOT LIKE 'pg2dynamo\_verify\_%'`
	if recorded {
		byName = "(" + byName + " OR slot_name IN (SELECT slot_name FROM " + DDLSchema + "." + ddlSlots + "))"
	}
	rows, err := conn.Query(ctx, `SELECT slot_name::text FROM pg_replication_slots
WHERE `+byName+` AND slot_name <> $1 AND NOT temporary AND database = current_database() ORDER BY 1`, except)
	if err != nil {
		return nil, nil, fmt.Errorf("ddl capture: %w", err)
	}
	keptFor, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, nil, fmt.Errorf("ddl capture: %w", err)
	}
	if len(keptFor) > 0 {
		if recorded {
			if _, err := conn.Exec(ctx, "DELETE FROM "+DDLSchema+"."+ddlSlots+" WHERE slot_name = $1", except); err != nil {
				return nil, keptFor, fmt.Errorf("ddl capture: %w", err)
			}
		}
		return nil, keptFor, nil
	}
	installed, err := DDLCaptureInstalled(ctx, conn)
	if err != nil || !installed {
		return nil, nil, err
	}
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		for _, stmt := range []string{
			"DROP EVENT TRIGGER IF EXISTS " + ddlTrigger + "_end",
			"DROP EVENT TRIGGER IF EXISTS " + ddlTrigger + "_drop",
			"DROP PUBLICATION IF EXISTS " + DDLPublication,
			"DROP SCHEMA IF EXISTS " + DDLSchema + " CASCADE",
		} {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("drop ddl capture: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return []string{"event triggers " + ddlTrigger + "_end and " + ddlTrigger + "_drop, publication " + DDLPublication + " and schema " + DDLSchema}, nil, nil
}
