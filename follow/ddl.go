package follow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/extract"
)

// DDL capture: an event trigger (ddl_command_end and sql_drop) records
// each DDL command, and the objects it touched, as a row of
// pg2dynamo.ddl_events, which publication pg2dynamo_ddl publishes. A
// follow streams that publication beside its own, so that it meets each
// DDL command in the stream at the command's LSN, in commit order with
// the row changes, and compares the catalog there (Applier.catalog). For a
// command on a publication the row also holds every publication's state
// just after it, so that one narrowed and restored between two checks is
// found too. Event triggers need a superuser (rds_superuser on Amazon RDS
// and Aurora); without one the follow relies on its catalog checks alone.
// https://www.postgresql.org/docs/current/event-triggers.html

// The names of DDL capture's objects (extract.InstallDDLCapture).
const (
	DDLSchema      = extract.DDLSchema
	DDLTable       = extract.DDLTable
	DDLPublication = extract.DDLPublication
)

// DDLEvent is one object a DDL command touched, as the event trigger
// recorded it.
type DDLEvent struct {
	// Command is the command tag: ALTER TABLE, ALTER TYPE, ALTER
	// PUBLICATION, DROP TABLE, …
	Command string
	// ObjectType and Object are pg_event_trigger_ddl_commands' (or, for a
	// drop, pg_event_trigger_dropped_objects') object_type and
	// object_identity.
	ObjectType, Object string
	// Publications is, for a command on a publication, every
	// publication's state just after it, by name.
	Publications map[string]ddlPublication
}

// ddlPublication is a publication's state as the event trigger records
// it (JSON).
type ddlPublication struct {
	Insert   bool `json:"insert"`
	Update   bool `json:"update"`
	Delete   bool `json:"delete"`
	Truncate bool `json:"truncate"`
	ViaRoot  bool `json:"via_root"`
	// Tables are [oid, row filter, column list] of each table it
	// publishes.
	Tables [][3]any `json:"tables"`
}

// publication returns the state of publication pub as d recorded it for
// g's tables, or nil when d is not a command on a publication.
func (d DDLEvent) publication(pub string, g *Graph) *PublicationPrint {
	if d.Publications == nil {
		return nil
	}
	p, ok := d.Publications[pub]
	if !ok {
		return &PublicationPrint{}
	}
	out := &PublicationPrint{Exists: true, Insert: p.Insert, Update: p.Update, Delete: p.Delete, Truncate: p.Truncate, ViaRoot: p.ViaRoot,
		Tables: map[uint32]PublishedTable{}}
	for _, t := range p.Tables {
		oid, ok := t[0].(float64)
		if !ok || g.byOID[uint32(oid)] == nil {
			continue
		}
		filter, _ := t[1].(string)
		cols, _ := t[2].(string)
		out.Tables[uint32(oid)] = PublishedTable{RowFilter: filter, Columns: cols}
	}
	return out
}

// ddlEvent reads a row of DDLTable from a change's new row image.
func ddlEvent(img map[string]*string) (DDLEvent, error) {
	get := func(c string) string {
		if v := img[c]; v != nil {
			return *v
		}
		return ""
	}
	d := DDLEvent{Command: get("command"), ObjectType: get("object_type"), Object: get("object_identity")}
	if p := get("publications"); p != "" {
		if err := json.Unmarshal([]byte(p), &d.Publications); err != nil {
			return d, fmt.Errorf("%s.%s: publications: %w", DDLSchema, DDLTable, err)
		}
	}
	return d, nil
}

// hasDDL reports whether txs hold a DDL command.
func hasDDL(txs []*Tx) bool {
	for _, tx := range txs {
		if len(tx.DDL) > 0 {
			return true
		}
	}
	return false
}

// ErrNoDDLCapture is why InstallDDLCapture installs nothing: the role may
// not create event triggers.
var ErrNoDDLCapture = extract.ErrNoDDLCapture

// InstallDDLCapture installs DDL capture (see extract.InstallDDLCapture).
func InstallDDLCapture(ctx context.Context, conn *pgx.Conn) error {
	return extract.InstallDDLCapture(ctx, conn)
}

// DDLCaptureInstalled reports whether DDL capture is installed on conn's
// database (see extract.DDLCaptureInstalled).
func DDLCaptureInstalled(ctx context.Context, conn *pgx.Conn) (bool, error) {
	return extract.DDLCaptureInstalled(ctx, conn)
}

// DropDDLCapture removes DDL capture unless another follow's slot may
// stream it (see extract.DropDDLCapture).
func DropDDLCapture(ctx context.Context, conn *pgx.Conn, except string) (dropped, keptFor []string, err error) {
	return extract.DropDDLCapture(ctx, conn, except)
}

// isDDLTable reports whether a relation the stream describes is
// DDLTable.
func isDDLTable(namespace, name string) bool {
	return namespace == DDLSchema && name == DDLTable
}

// publicationNames is pgoutput's publication_names option: pub, and
// DDLPublication when the follow streams DDL commands.
func publicationNames(pub string, ddl bool) string {
	names := []string{pub}
	if ddl {
		names = append(names, DDLPublication)
	}
	for i, n := range names {
		names[i] = strings.ReplaceAll(n, "'", "''")
	}
	return "'" + strings.Join(names, ",") + "'"
}
