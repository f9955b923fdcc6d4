package follow

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pg2dynamo/pg2dynamo/extract"
)

// DDL capture: an event trigger records each DDL command and the objects it
// touched as a row of pg2dynamo.ddl_events, published by pg2dynamo_ddl. A
// follow streams it too, meeting each command in commit order, and compares
// the catalog there. Event triggers need a superuser (rds_superuser on RDS);
// without one the follow relies on its periodic catalog checks.
// https://www.postgresql.org/docs/current/event-triggers.html

// The names of DDL capture's objects (extract.InstallDDLCapture).
const (
	DDLSchema      = extract.DDLSchema
	DDLTable       = extract.DDLTable
	DDLPublication = extract.DDLPublication
)

// DDLEvent is one object a DDL command touched, as the event trigger recorded
// it.
type DDLEvent struct {
	// Command is the command tag: ALTER TABLE, DROP TABLE, …
	Command string
	// ObjectType and Object are the object_type and object_identity of
	// pg_event_trigger_ddl_commands (pg_event_trigger_dropped_objects for a
	// drop).
	ObjectType, Object string
	// Publications is, for a command on a publication, every publication's
	// state just after it.
	Publications map[string]ddlPublication
}

// ddlPublication is a publication's state as the event trigger records it
// (JSON).
type ddlPublication struct {
	Insert   bool `json:"insert"`
	Update   bool `json:"update"`
	Delete   bool `json:"delete"`
	Truncate bool `json:"truncate"`
	ViaRoot  bool `json:"via_root"`
	// Tables are [oid, row filter, column list] of each table it publishes.
	Tables [][3]any `json:"tables"`
}

// publication returns publication pub's state for g's tables as d recorded
// it, or nil when d is not a command on a publication.
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

func hasDDL(txs []*Tx) bool {
	for _, tx := range txs {
		if len(tx.DDL) > 0 {
			return true
		}
	}
	return false
}

func isDDLTable(namespace, name string) bool {
	return namespace == DDLSchema && name == DDLTable
}

// publicationNames is pgoutput's publication_names: pub, plus DDLPublication
// with ddl.
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
