// Package mapping is pg2dynamo's declarative mapping language: which
// PostgreSQL rows become which DynamoDB items, in a single-table design.
//
// A mapping file is YAML. It names the target table (partition key, sort key,
// billing mode, GSIs) and a set of entities. Each entity reads one source (a
// table or a SQL query) and turns every row into one item whose keys are
// rendered from templates such as "USER#${user_id}". Load parses and checks a
// file; every problem is reported as an *Error naming the file, line, column
// and dotted path (entities.Order.pk) of the offending value.
package mapping

import (
	"slices"
	"strings"
)

// Keys of the mapping file, declared once. They are the YAML field names and
// the segments of the dotted paths used in errors.
const (
	KeyVersion       = "version"
	KeyTable         = "table"
	KeyTypeAttribute = "type_attribute"
	KeyEntities      = "entities"

	KeyName          = "name"
	KeyPartitionKey  = "partition_key"
	KeySortKey       = "sort_key"
	KeyBillingMode   = "billing_mode"
	KeyReadCapacity  = "read_capacity"
	KeyWriteCapacity = "write_capacity"
	KeyGSIs          = "gsis"
	KeyProjection    = "projection"
	KeyNonKeyAttrs   = "non_key_attributes"

	KeyPartitionKeys        = "partition_keys"
	KeySortKeys             = "sort_keys"
	KeyWarmThroughput       = "warm_throughput"
	KeyReadUnitsPerSecond   = "read_units_per_second"
	KeyWriteUnitsPerSecond  = "write_units_per_second"
	KeyMaxReadRequestUnits  = "max_read_request_units"
	KeyMaxWriteRequestUnits = "max_write_request_units"
	KeyPointInTimeRecovery  = "point_in_time_recovery"
	KeyEnabled              = "enabled"
	KeyRecoveryPeriodInDays = "recovery_period_in_days"
	KeyDeletionProtection   = "deletion_protection"

	KeySource     = "source"
	KeySchema     = "schema"
	KeySourceTbl  = "table"
	KeyQuery      = "query"
	KeyPK         = "pk"
	KeySK         = "sk"
	KeyIndexes    = "indexes"
	KeySparse     = "sparse"
	KeyAttributes = "attributes"
	KeySelect     = "select"
	KeyExclude    = "exclude"
	KeyRename     = "rename"
	KeySets       = "sets"
	KeyType       = "type"
	KeyEmbed      = "embed"
	KeyDuplicate  = "duplicate"
	KeyAggregates = "aggregates"
	KeyIDs        = "ids"
	KeyMirror     = "mirror"
	KeyJoin       = "join"
	KeyAs         = "as"
	KeyKey        = "key"
	KeyOrderBy    = "order_by"
	KeyMaxItems   = "max_items"
	KeyFunction   = "function"
	KeyColumn     = "column"
	KeyKind       = "kind"
	KeyTime       = "time"
	KeyFrom       = "from"

	KeyAccessPatterns = "access_patterns"
	KeyIndex          = "index"
	KeyKeyCondition   = "key_condition"
	KeyScanForward    = "scan_forward"
)

// Billing modes of a table, as the DynamoDB API spells them.
const (
	PayPerRequest = "PAY_PER_REQUEST"
	Provisioned   = "PROVISIONED"
)

// Projection types of a GSI, as the DynamoDB API spells them.
const (
	ProjectAll      = "ALL"
	ProjectKeysOnly = "KEYS_ONLY"
	ProjectInclude  = "INCLUDE"
)

// Types of the attributes of a multi-attribute GSI key (KeyAttribute.Type),
// as the DynamoDB API spells them: string, number, binary.
const (
	TypeString = "S"
	TypeNumber = "N"
	TypeBinary = "B"
)

// Bounds of the table settings, checked by Load.
const (
	// MaxKeyAttributes is how many attributes a GSI's partition key, and
	// its sort key, may each have (multi-attribute keys).
	// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.DesignPattern.MultiAttributeKeys.html
	MaxKeyAttributes = 4
	// MinRecoveryPeriodDays and MaxRecoveryPeriodDays bound
	// PointInTimeRecovery.RecoveryPeriodInDays (35 when not given).
	// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_PointInTimeRecoverySpecification.html
	MinRecoveryPeriodDays = 1
	MaxRecoveryPeriodDays = 35
)

// Defaults applied by Load where the file is silent.
const (
	DefaultPartitionKey  = "PK"
	DefaultSortKey       = "SK"
	DefaultTypeAttribute = "type"
	DefaultSchema        = "public"
)

// Mapping is a parsed and validated mapping file.
type Mapping struct {
	// Version of the mapping language; only 1 exists.
	Version int `yaml:"version"`
	// Table is the single DynamoDB table every entity writes to.
	Table Table `yaml:"table"`
	// TypeAttribute is the name of the attribute that carries each item's
	// entity type (default "type").
	TypeAttribute string `yaml:"type_attribute"`
	// Library, when set, makes the items readable by a single-table
	// library as they are: its type attribute and the attributes it reads,
	// and keys it renders alike (see Library).
	Library Library `yaml:"library"`
	// Entities in file order. Decoded from the "entities" map; see Load.
	Entities []*Entity `yaml:"-"`
	// AccessPatterns in file order, decoded from "access_patterns".
	AccessPatterns []*AccessPattern `yaml:"-"`

	// File is the path the mapping was read from, used in error messages.
	File string `yaml:"-"`
	pos  *positions
	// problems are the errors ParsePartial returned the mapping with.
	problems Errors
}

// Table describes the target DynamoDB table. Key attributes are always of
// type S (string), as rendered by key templates.
//
// The settings after GSIs are optional. pg2dynamo applies them when it
// creates the table (migrate --create-table) and prints them in plan's
// CreateTable request and CloudFormation resource; it neither applies nor
// checks them on a table that already exists.
type Table struct {
	Name          string `yaml:"name"`
	PartitionKey  string `yaml:"partition_key"`
	SortKey       string `yaml:"sort_key"`
	BillingMode   string `yaml:"billing_mode"`
	ReadCapacity  int64  `yaml:"read_capacity"`
	WriteCapacity int64  `yaml:"write_capacity"`
	GSIs          []GSI  `yaml:"gsis"`

	// WarmThroughput, when set, pre-warms the table: the reads and writes
	// per second it can take at once, from its creation.
	WarmThroughput *WarmThroughput `yaml:"warm_throughput"`
	// MaxReadRequestUnits and MaxWriteRequestUnits, when set, cap an
	// on-demand (PAY_PER_REQUEST) table's throughput, in request units per
	// second (each at least 1); a provisioned table has none.
	// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode-max-throughput.html
	MaxReadRequestUnits  *int64 `yaml:"max_read_request_units"`
	MaxWriteRequestUnits *int64 `yaml:"max_write_request_units"`
	// PointInTimeRecovery, when enabled, turns on continuous backups
	// (UpdateContinuousBackups, once the created table is ACTIVE: CreateTable
	// cannot).
	PointInTimeRecovery *PointInTimeRecovery `yaml:"point_in_time_recovery"`
	// DeletionProtection, when true, creates the table with deletion
	// protection enabled: DeleteTable fails until it is turned off.
	// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/WorkingWithTables.Basics.html#WorkingWithTables.Basics.DeletionProtection
	DeletionProtection bool `yaml:"deletion_protection"`
}

// GSI is a global secondary index of the table. It has keys of one of two
// kinds:
//   - PartitionKey and SortKey: string (S) attributes rendered per entity
//     from the templates in Entity.Indexes (an overloaded index);
//   - PartitionKeys and SortKeys (multi-attribute keys): one to
//     MaxKeyAttributes attributes each, of type S, N or B, that the items
//     carry as ordinary attributes (a column, or a renamed one). No entity
//     declares templates for such an index; an item lacking any of its key
//     attributes is not in it (the index is sparse by nature).
//
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.DesignPattern.MultiAttributeKeys.html
type GSI struct {
	Name             string         `yaml:"name"`
	PartitionKey     string         `yaml:"partition_key"`
	SortKey          string         `yaml:"sort_key"`
	PartitionKeys    []KeyAttribute `yaml:"partition_keys"`
	SortKeys         []KeyAttribute `yaml:"sort_keys"`
	Projection       string         `yaml:"projection"`
	NonKeyAttributes []string       `yaml:"non_key_attributes"`
	ReadCapacity     int64          `yaml:"read_capacity"`
	WriteCapacity    int64          `yaml:"write_capacity"`
	// WarmThroughput, MaxReadRequestUnits and MaxWriteRequestUnits are the
	// index's own, as the table's.
	WarmThroughput       *WarmThroughput `yaml:"warm_throughput"`
	MaxReadRequestUnits  *int64          `yaml:"max_read_request_units"`
	MaxWriteRequestUnits *int64          `yaml:"max_write_request_units"`
}

// KeyAttribute is one attribute of a multi-attribute GSI key: an attribute
// of the items (not rendered from a template) and its type, TypeString,
// TypeNumber or TypeBinary. An item whose attribute has another type is
// refused by DynamoDB, so the type must be the one its column is written
// as (see the README's type table: integers and numeric are N, text S,
// bytea B).
type KeyAttribute struct {
	Name string `yaml:"name"`
	Type string `yaml:"type"`
}

// WarmThroughput is the read and write units per second a table or GSI can
// serve at once; at least one is given, each at least 1. A new on-demand
// table starts at 12,000 reads and 4,000 writes per second; DynamoDB
// refuses values it does not accept when the table is created, and warm
// throughput can be raised later but never lowered.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput.html
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_WarmThroughput.html
type WarmThroughput struct {
	ReadUnitsPerSecond  *int64 `yaml:"read_units_per_second"`
	WriteUnitsPerSecond *int64 `yaml:"write_units_per_second"`
}

// PointInTimeRecovery is the table's continuous backups setting.
// RecoveryPeriodInDays, from MinRecoveryPeriodDays to MaxRecoveryPeriodDays,
// is how far back the table can be restored (DynamoDB's default 35 when
// nil); it needs Enabled.
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateContinuousBackups.html
type PointInTimeRecovery struct {
	Enabled              bool   `yaml:"enabled"`
	RecoveryPeriodInDays *int64 `yaml:"recovery_period_in_days"`
}

// AccessPattern is a named read the design serves: a Query on the table or
// a GSI with a key condition written over key templates, e.g.
// "PK = USER#${user_id} AND begins_with(SK, TICKET#)". Parameters are the
// placeholders; plan prints the patterns and verification runs them.
type AccessPattern struct {
	// Name is the pattern's key in "access_patterns".
	Name string `yaml:"-"`
	// Description says what the pattern is for.
	Description string `yaml:"description"`
	// Index is a GSI name; empty for the table.
	Index string `yaml:"index"`
	// KeyCondition is "<pk attr> = <template>", optionally followed by
	// "AND <sk attr> = <template>", "AND begins_with(<sk attr>, <template>)",
	// "AND <sk attr> BETWEEN <template> AND <template>" or a comparison
	// (<, <=, >, >=).
	KeyCondition string `yaml:"key_condition"`
	// ScanForward is false to read the sort key descending (newest first).
	// Default true.
	ScanForward *bool `yaml:"scan_forward"`

	// Parsed, set by Load.
	Condition KeyCondition `yaml:"-"`
}

// KeyCondition is a parsed access-pattern key condition.
type KeyCondition struct {
	PartitionAttr string
	Partition     Template
	// SortAttr is empty when the condition names the partition key only.
	SortAttr string
	// SortOp is "=", "<", "<=", ">", ">=", "begins_with" or "between".
	SortOp string
	Sort   Template
	// SortHigh is the upper bound of "between".
	SortHigh Template
}

// Entity turns the rows of one source into items of one type.
type Entity struct {
	// Name is the entity's key in the "entities" map.
	Name string `yaml:"-"`
	// Source is where the rows come from.
	Source Source `yaml:"source"`
	// PK and SK are the key templates of the item's partition key and sort
	// key, e.g. "CUSTOMER#${customer_id}".
	PK string `yaml:"pk"`
	SK string `yaml:"sk"`
	// Indexes maps a GSI name to the templates of its key attributes on this
	// entity's items. An entity absent from an index writes no attributes for it.
	Indexes map[string]IndexKeys `yaml:"indexes"`
	// Attributes chooses and names the non-key attributes.
	Attributes Attributes `yaml:"attributes"`
	// Type is the value of the type attribute (default: Name).
	Type string `yaml:"type"`
	// Embed maps an attribute name to child rows embedded in it as a list
	// or map (a "complex attribute").
	Embed map[string]*Embed `yaml:"embed"`
	// Duplicate copies columns of parent rows onto this entity's items
	// through a foreign key (denormalization).
	Duplicate []*Duplicate `yaml:"duplicate"`
	// Aggregates maps an attribute name to a count, sum, min or max over
	// child rows, kept on this entity's items.
	Aggregates map[string]*Aggregate `yaml:"aggregates"`
	// IDs maps an attribute name to a stable, sortable ID built from the
	// row (the same on every run).
	IDs map[string]*StableID `yaml:"ids"`
	// Mirror, when set, writes each row a second time with these keys:
	// the other direction of an adjacency-list association.
	Mirror *Mirror `yaml:"mirror"`

	// Parsed templates, set by Load.
	PKTemplate    Template               `yaml:"-"`
	SKTemplate    Template               `yaml:"-"`
	IndexTemplate map[string][2]Template `yaml:"-"`
}

// Join pairs columns of two sources for an equi-join: each key is a column
// of the other source (the child, or the parent), each value a column of
// this entity's source.
type Join map[string]string

// Pairs returns the join's (other column, own column) pairs sorted by the
// other column, for deterministic SQL.
func (j Join) Pairs() [][2]string {
	out := make([][2]string, 0, len(j))
	for k, v := range j {
		out = append(out, [2]string{k, v})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return out
}

// Embed puts the child rows of each row into one attribute, as a list (in
// OrderBy order), a map keyed by a column, or a set of one column's values.
type Embed struct {
	Source Source `yaml:"source"`
	// Join maps child columns to this entity's columns.
	Join Join `yaml:"join"`
	// As is "list" (default), "map" or "set". A set (SS, NS or BS, by
	// the column's type) holds the values of the one column
	// Attributes.Select names; see Attributes.Sets for its rules.
	As string `yaml:"as"`
	// Key is the child column whose value keys the map (As "map").
	Key string `yaml:"key"`
	// OrderBy orders a list: columns, each optionally followed by " DESC".
	OrderBy []string `yaml:"order_by"`
	// MaxItems, when above 0, rejects a row with more children.
	MaxItems int `yaml:"max_items"`
	// Attributes chooses and names the child columns in each element.
	Attributes Attributes `yaml:"attributes"`
}

// Embed forms (Embed.As).
const (
	EmbedList = "list"
	EmbedMap  = "map"
	EmbedSet  = "set"
)

// Duplicate copies columns of one parent row (found through Join) onto
// the item. The parent's join columns must be its primary key or another
// unique key, so that each row has at most one parent; a row without a
// parent simply gets no duplicated attributes.
type Duplicate struct {
	// Source is the parent; it must be a table.
	Source Source `yaml:"source"`
	// Join maps parent columns to this entity's columns.
	Join Join `yaml:"join"`
	// Attributes chooses and names the parent columns copied (select is
	// required: copying a whole parent is rarely meant).
	Attributes Attributes `yaml:"attributes"`
}

// Aggregate functions.
const (
	AggCount = "count"
	AggSum   = "sum"
	AggMin   = "min"
	AggMax   = "max"
)

// Aggregate is a count, sum, min or max over the child rows of each row,
// written on the item (a lecture's student_count). A row without children
// gets count 0; sum, min and max are then absent.
type Aggregate struct {
	// Function is count, sum, min or max.
	Function string `yaml:"function"`
	// Column is the child column summed or compared (not for count).
	Column string `yaml:"column"`
	Source Source `yaml:"source"`
	// Join maps child columns to this entity's columns.
	Join Join `yaml:"join"`
}

// ID kinds.
const (
	IDKSUID = "ksuid"
	IDULID  = "ulid"
)

// StableID is a KSUID or ULID whose time part comes from a timestamp column
// and whose random part is a hash of key columns: sortable by time, and the
// same on every run (a random one would break repeatable loads).
type StableID struct {
	// Kind is ksuid or ulid.
	Kind string `yaml:"kind"`
	// Time is a date, timestamp or timestamptz column.
	Time string `yaml:"time"`
	// From lists the columns hashed into the ID's random part (the row's
	// identity, e.g. its primary key).
	From []string `yaml:"from"`
}

// Mirror is the second item written for each row of an association
// entity: the same attributes under the other direction's keys.
type Mirror struct {
	PK string `yaml:"pk"`
	SK string `yaml:"sk"`

	PKTemplate Template `yaml:"-"`
	SKTemplate Template `yaml:"-"`
}

// Source is a table (with optional schema) or a SQL query; exactly one.
type Source struct {
	Schema string `yaml:"schema"`
	Table  string `yaml:"table"`
	Query  string `yaml:"query"`
}

// IndexKeys holds the key templates of one GSI for one entity.
type IndexKeys struct {
	PK string `yaml:"pk"`
	SK string `yaml:"sk"`
	// Sparse, when true, leaves the item out of the index (writes neither
	// index key attribute) if a template column is NULL, instead of
	// rejecting the row.
	Sparse bool `yaml:"sparse"`
}

// Attributes selects, excludes and renames the columns that become
// non-key attributes. By default every column becomes an attribute of the
// same name.
type Attributes struct {
	// Select, when non-empty, lists the only columns written as attributes.
	Select []string `yaml:"select"`
	// Exclude lists columns not written as attributes (they may still be
	// used in key templates).
	Exclude []string `yaml:"exclude"`
	// Rename maps a column name to its attribute name.
	Rename map[string]string `yaml:"rename"`
	// Sets lists array columns written as a DynamoDB set rather than a
	// list: SS for text-like elements (text, varchar, char, uuid, enums,
	// dates, timestamps, types read as text), NS for numbers (smallint,
	// integer, bigint, numeric, real, double precision), BS for bytea.
	// Duplicate elements collapse into one (numbers compared by their
	// canonical text, so 1.0 and 1 are one); a NULL element rejects the
	// row; an empty array leaves the attribute out (DynamoDB has no empty
	// sets). Each must be a column written as an attribute (selected, not
	// excluded), checked against the database by transform.Compile.
	Sets []string `yaml:"sets"`
}

// Entity returns the entity with the given name, or nil.
func (m *Mapping) Entity(name string) *Entity {
	for _, e := range m.Entities {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// GSI returns the table's GSI with the given name, or nil.
func (t *Table) GSI(name string) *GSI {
	for i := range t.GSIs {
		if t.GSIs[i].Name == name {
			return &t.GSIs[i]
		}
	}
	return nil
}

// MultiAttribute reports whether the GSI's keys are PartitionKeys and
// SortKeys, attributes the items carry, rather than string attributes
// rendered from templates.
func (g *GSI) MultiAttribute() bool { return len(g.PartitionKeys) > 0 || len(g.SortKeys) > 0 }

// KeyNames returns the names of the GSI's key attributes: its partition
// key and sort key (if any), or its multi-attribute keys' attributes. An
// item is in the index only when it has every one of them (a sparse
// index).
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.sparse
func (g *GSI) KeyNames() []string {
	if g.MultiAttribute() {
		out := make([]string, 0, len(g.PartitionKeys)+len(g.SortKeys))
		for _, a := range append(slices.Clip(g.PartitionKeys), g.SortKeys...) {
			out = append(out, a.Name)
		}
		return out
	}
	if g.SortKey == "" {
		return []string{g.PartitionKey}
	}
	return []string{g.PartitionKey, g.SortKey}
}

// KeyAttributeTypes returns every key attribute of the table and its GSIs
// with its type, without repeats, in the order CreateTable defines them:
// the table's partition and sort key, then each GSI's partition key(s) and
// sort key(s). The string key attributes (see Mapping.KeyAttributes) are
// of TypeString; a multi-attribute key's are of their declared type (the
// first declaration, should two GSIs disagree: Load refuses that).
func (t *Table) KeyAttributeTypes() []KeyAttribute {
	var out []KeyAttribute
	add := func(name, typ string) {
		if name != "" && !slices.ContainsFunc(out, func(a KeyAttribute) bool { return a.Name == name }) {
			out = append(out, KeyAttribute{Name: name, Type: typ})
		}
	}
	add(t.PartitionKey, TypeString)
	add(t.SortKey, TypeString)
	for _, g := range t.GSIs {
		add(g.PartitionKey, TypeString)
		add(g.SortKey, TypeString)
		for _, a := range slices.Concat(g.PartitionKeys, g.SortKeys) {
			add(a.Name, a.Type)
		}
	}
	return out
}

// IsQuery reports whether the source is a SQL query rather than a table.
func (s Source) IsQuery() bool { return s.Query != "" }

// String names the source for messages: "orders", "sales.orders" or "the query".
func (s Source) String() string {
	switch {
	case s.IsQuery():
		return "the query"
	case s.Schema != "":
		return s.Schema + "." + s.Table
	}
	return s.Table
}

// EntityIndex returns the position of the named entity in Entities, or -1.
func (m *Mapping) EntityIndex(name string) int {
	for i, e := range m.Entities {
		if e.Name == name {
			return i
		}
	}
	return -1
}
