// Package plan describes a mapping's single-table design as the modeling guides
// draw it: entity chart, access-pattern table, CreateTable request (AWS CLI
// --cli-input-json and CloudFormation) and, from a source, per-entity rows,
// item sizes and a full load's write units. Only Stats reads the source.
package plan

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// Design is the printable description of a mapping.
type Design struct {
	Table        string `json:"table"`
	BillingMode  string `json:"billing_mode"`
	PartitionKey string `json:"partition_key"`
	// SortKey is "" (and left out) for a table without a sort key.
	SortKey string `json:"sort_key,omitempty"`
	// PartitionKeyType and SortKeyType are S, N or B (mapping.Table.KeyType);
	// SortKeyType "" without a sort key.
	PartitionKeyType string `json:"partition_key_type"`
	SortKeyType      string `json:"sort_key_type,omitempty"`
	// Settings are the table's optional settings, nil when it has none.
	Settings       *Settings    `json:"settings,omitempty"`
	Indexes        []IndexRow   `json:"indexes,omitempty"`
	KeyAttributes  []string     `json:"key_attributes"`
	Entities       []EntityRow  `json:"entities"`
	AccessPatterns []PatternRow `json:"access_patterns"`
	// OrderWarnings are sort keys whose plain-digit numbers sort as text where
	// patterns read in order.
	OrderWarnings  []OrderWarning `json:"order_warnings,omitempty"`
	CreateTable    map[string]any `json:"create_table"`
	CloudFormation map[string]any `json:"cloudformation"`
	// UpdateContinuousBackups enables point-in-time recovery once the table is
	// ACTIVE; nil when not enabled.
	UpdateContinuousBackups map[string]any   `json:"update_continuous_backups,omitempty"`
	Stats                   []EntityStatsRow `json:"stats,omitempty"`
}

// IndexRow describes a GSI; multi-attribute keys use PartitionKeys and
// SortKeys.
type IndexRow struct {
	Name         string `json:"name"`
	PartitionKey string `json:"partition_key,omitempty"`
	SortKey      string `json:"sort_key,omitempty"`
	// PartitionKeyType and SortKeyType are S, N or B, empty without the key.
	PartitionKeyType string         `json:"partition_key_type,omitempty"`
	SortKeyType      string         `json:"sort_key_type,omitempty"`
	PartitionKeys    []KeyAttribute `json:"partition_keys,omitempty"`
	SortKeys         []KeyAttribute `json:"sort_keys,omitempty"`
	Projection       string         `json:"projection"`
	Throughput
}

// EntityRow is an entity chart line; Keys maps each table and GSI key attribute
// to the entity's template, empty for none.
type EntityRow struct {
	Entity     string            `json:"entity"`
	Type       string            `json:"type"`
	Source     string            `json:"source"`
	Keys       map[string]string `json:"keys"`
	Attributes []string          `json:"attributes"`
}

// PatternRow is one line of the access-pattern table.
type PatternRow struct {
	Pattern      string `json:"pattern"`
	Index        string `json:"index"`
	KeyCondition string `json:"key_condition"`
	// Filter is the pattern's filter expression, if any.
	Filter      string `json:"filter,omitempty"`
	Order       string `json:"order"`
	Description string `json:"description,omitempty"`
}

// EntityStatsRow is what a full load of one entity writes. Sizes are bytes by
// DynamoDB's rules; WriteUnits counts one WCU per KB (rounded up) of each item,
// plus each GSI it lands in at projected size.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/provisioned-capacity-mode.html
type EntityStatsRow struct {
	Entity       string `json:"entity"`
	Rows         int64  `json:"rows"`
	Items        int64  `json:"items"`
	Rejected     int64  `json:"rejected"`
	AvgItemBytes int64  `json:"avg_item_bytes"`
	MaxItemBytes int64  `json:"max_item_bytes"`
	WriteUnits   int64  `json:"write_units"`
	// ExportBytes is the items as uncompressed export DynamoDB JSON: what
	// ImportTable is priced by.
	ExportBytes int64 `json:"export_bytes"`
	// ExampleKey is the first item's primary key in primary-key order, as
	// loaded (docs/mapping.md, "Key text of each type").
	ExampleKey []string `json:"example_key,omitempty"`
	// Rejects are the rejection reasons, each with its count and first row's
	// source key, at most MaxRejectReasons; the rest only count in Rejected.
	Rejects []RejectReason `json:"rejects,omitempty"`
}

// RejectReason is one reason rows of an entity would be rejected.
type RejectReason struct {
	Reason string `json:"reason"`
	Column string `json:"column,omitempty"`
	Rows   int64  `json:"rows"`
	// Example is that row's source key (primary key and key template columns;
	// nil for NULL).
	Example map[string]any `json:"example"`
}

// MaxRejectReasons is the most reasons Stats keeps per entity.
const MaxRejectReasons = 10

// Build describes m. It does not touch any database.
func Build(m *mapping.Mapping) *Design {
	d := &Design{Table: m.Table.Name, BillingMode: m.Table.BillingMode, KeyAttributes: m.KeyAttributes(),
		PartitionKey: m.Table.PartitionKey, SortKey: m.Table.SortKey,
		PartitionKeyType: m.Table.KeyType(m.Table.PartitionKey)}
	if m.Table.SortKey != "" {
		d.SortKeyType = m.Table.KeyType(m.Table.SortKey)
	}
	for _, g := range m.Table.GSIs {
		proj := g.Projection
		if len(g.NonKeyAttributes) > 0 {
			proj += " " + strings.Join(g.NonKeyAttributes, ", ")
		}
		var pkType, skType string
		if g.PartitionKey != "" {
			pkType = m.Table.KeyType(g.PartitionKey)
		}
		if g.SortKey != "" {
			skType = m.Table.KeyType(g.SortKey)
		}
		d.Indexes = append(d.Indexes, IndexRow{Name: g.Name, PartitionKey: g.PartitionKey, SortKey: g.SortKey, Projection: proj,
			PartitionKeyType: pkType, SortKeyType: skType,
			PartitionKeys: keyAttributes(g.PartitionKeys), SortKeys: keyAttributes(g.SortKeys), Throughput: throughput(g.WarmThroughput, g.MaxReadRequestUnits, g.MaxWriteRequestUnits)})
	}
	d.Settings = settings(m.Table)
	for _, e := range m.Entities {
		row := EntityRow{Entity: e.Name, Type: e.Type, Source: sourceText(e.Source), Keys: map[string]string{}}
		for _, s := range m.KeySlots(e) {
			if !s.Mirror {
				row.Keys[s.Attr] = s.Template.Source + sparse(s)
			}
		}
		row.Attributes = attributeNotes(m, e)
		d.Entities = append(d.Entities, row)
	}
	for _, ap := range m.AccessPatterns {
		order := "ascending"
		if ap.ScanForward != nil && !*ap.ScanForward {
			order = "descending (ScanIndexForward=false)"
		}
		d.AccessPatterns = append(d.AccessPatterns, PatternRow{Pattern: ap.Name, Index: cmpIndex(ap.Index),
			KeyCondition: ap.KeyCondition, Filter: ap.Filter, Order: order, Description: ap.Description})
	}
	d.OrderWarnings = orderWarnings(m)
	d.CreateTable = createTableJSON(m)
	d.CloudFormation = map[string]any{"Resources": map[string]any{logicalID(m.Table.Name): map[string]any{
		"Type": "AWS::DynamoDB::Table", "Properties": cloudFormationProperties(m, d.CreateTable)}}}
	if in := load.UpdateContinuousBackupsInput(m); in != nil {
		d.UpdateContinuousBackups = apiJSON(in)
	}
	return d
}

func sparse(s mapping.KeySlot) string {
	if s.Sparse {
		return " (sparse)"
	}
	return ""
}

func sourceText(s mapping.Source) string {
	if s.IsQuery() {
		return "query"
	}
	return s.String()
}

// attributeNotes lists what the entity writes besides its keys.
func attributeNotes(m *mapping.Mapping, e *mapping.Entity) []string {
	var out []string
	a := e.Attributes
	switch {
	case len(a.Select) > 0:
		out = append(out, "columns "+strings.Join(a.Select, ", "))
	default:
		out = append(out, "all columns")
	}
	if len(a.Exclude) > 0 {
		out[0] += " except " + strings.Join(a.Exclude, ", ")
	}
	for _, c := range slices.Sorted(maps.Keys(a.Rename)) {
		out = append(out, fmt.Sprintf("%s as %s", c, a.Rename[c]))
	}
	if len(a.Sets) > 0 {
		out = append(out, "sets: "+strings.Join(a.Sets, ", "))
	}
	for _, j := range e.Joins() {
		out = append(out, joinNote(j))
	}
	for _, name := range slices.Sorted(maps.Keys(e.IDs)) {
		id := e.IDs[name]
		out = append(out, fmt.Sprintf("%s: %s from %s and %s", name, id.Kind, id.Time, strings.Join(id.From, ", ")))
	}
	switch {
	case e.Mirror != nil && m.Table.SortKey == "":
		out = append(out, "mirrored as "+e.Mirror.PK)
	case e.Mirror != nil:
		out = append(out, fmt.Sprintf("mirrored as %s / %s", e.Mirror.PK, e.Mirror.SK))
	}
	out = append(out, fmt.Sprintf("%s = %q", m.TypeAttribute, e.Type))
	return out
}

// joinNote says what join rule j writes.
func joinNote(j mapping.JoinRule) string {
	switch j.Kind {
	case mapping.JoinDuplicate:
		d := j.Duplicate
		cols := make([]string, len(d.Attributes.Select))
		for i, c := range d.Attributes.Select {
			cols[i] = c
			if to, ok := d.Attributes.Rename[c]; ok {
				cols[i] = c + " as " + to
			}
		}
		return fmt.Sprintf("duplicated from %s: %s%s", d.Source, strings.Join(cols, ", "), setsNote(d.Attributes))
	case mapping.JoinEmbed:
		em := j.Embed
		s := fmt.Sprintf("%s: embedded %s of %s", j.Attr, em.As, em.Source)
		if em.As == mapping.EmbedSet {
			s = fmt.Sprintf("%s: embedded set of %s from %s", j.Attr, strings.Join(em.Attributes.Select, ", "), em.Source)
		}
		if em.As == mapping.EmbedMap {
			s += " by " + em.Key
		}
		if len(em.OrderBy) > 0 {
			s += " ordered by " + strings.Join(em.OrderBy, ", ")
		}
		if em.MaxItems > 0 {
			s += fmt.Sprintf(", at most %d", em.MaxItems)
		}
		return s + setsNote(em.Attributes)
	case mapping.JoinAggregate:
		ag := j.Aggregate
		arg := ""
		if ag.Column != "" {
			arg = " " + ag.Column
		}
		return fmt.Sprintf("%s: %s%s of %s", j.Attr, ag.Function, arg, ag.Source)
	}
	return "" // a kind without a note: TestJoinNotes fails
}

// setsNote is " (sets: a, b)" for set-written array columns, else "".
func setsNote(a mapping.Attributes) string {
	if len(a.Sets) == 0 {
		return ""
	}
	return " (sets: " + strings.Join(a.Sets, ", ") + ")"
}

// createTableJSON is load.CreateTableInput as the API and `aws dynamodb
// create-table --cli-input-json` take it.
func createTableJSON(m *mapping.Mapping) map[string]any { return apiJSON(load.CreateTableInput(m)) }

// apiJSON is an SDK input as the API's JSON (unset fields left out): Go field
// names are the API's member names.
func apiJSON(in any) map[string]any {
	b, err := json.Marshal(in)
	if err != nil {
		panic(err) // the SDK's input structs always marshal
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		panic(err)
	}
	return dropEmpty(v).(map[string]any)
}

// dropEmpty removes nulls, empty strings, lists and maps, recursively.
func dropEmpty(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			e = dropEmpty(e)
			if e == nil {
				delete(v, k)
			} else {
				v[k] = e
			}
		}
		if len(v) == 0 {
			return nil
		}
		return v
	case []any:
		if len(v) == 0 {
			return nil
		}
		for i := range v {
			v[i] = dropEmpty(v[i])
		}
		return v
	case string:
		if v == "" {
			return nil
		}
	}
	return v
}

// logicalID is a letters-and-digits CloudFormation logical ID from a table
// name.
func logicalID(name string) string {
	var b strings.Builder
	up := true
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
			if up {
				b.WriteString(strings.ToUpper(string(r)))
			} else {
				b.WriteRune(r)
			}
			up = false
		default:
			up = true
		}
	}
	return b.String() + "Table"
}
