// Package mapping is pg2dynamo's declarative mapping language: which PostgreSQL
// rows become which DynamoDB items of a single-table design. Each entity turns
// every row of one source into one item whose keys are rendered from templates
// such as "USER#${user_id}". Load parses and checks a file, reporting each
// problem as an *Error located by file, line, column and dotted path.
// tools/schemagen generates JSONSchema from the types below.
package mapping

import (
	"slices"
	"strings"
)

// Keys of the mapping file: the YAML field names and the segments of the dotted
// paths in errors.
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

	KeyPartitionKeyType     = "partition_key_type"
	KeySortKeyType          = "sort_key_type"
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
	KeyFilter         = "filter"
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

// Types of key attributes, as the DynamoDB API spells them; S unless declared
// (Table.PartitionKeyType, KeyAttribute.Type, …).
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html#HowItWorks.DataTypes
const (
	TypeString = "S"
	TypeNumber = "N"
	TypeBinary = "B"
)

// Bounds of the table settings, checked by Load.
const (
	// MaxKeyAttributes bounds the attributes of a GSI's partition key, and of
	// its sort key.
	// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.DesignPattern.MultiAttributeKeys.html
	MaxKeyAttributes = 4
	// MinRecoveryPeriodDays and MaxRecoveryPeriodDays bound
	// RecoveryPeriodInDays.
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
	// Version of the mapping language. Optional: only 1 exists.
	Version int `yaml:"version"`
	// Name is the mapping's identity: a letter, then up to 127 letters, digits,
	// '_', '-' or '.'. A table the mapping creates is tagged with it
	// (pg2dynamo:mapping) and refuses mappings of other names. Needed only to
	// create or tag a table.
	Name string `yaml:"name"`
	// Table is the single DynamoDB table every entity writes to.
	Table Table `yaml:"table"`
	// TypeAttribute names the attribute holding each item's entity type.
	// Default "type"; with a library, the library's (_type, __edb_e__ or _et),
	// which this may only repeat. Not a string key attribute of the table or of
	// a GSI.
	TypeAttribute string `yaml:"type_attribute"`
	// Library makes the items readable as they are by onetable, electrodb or
	// dynamodb-toolbox: the attributes it reads are written on every item and
	// key templates are held to what it renders. A name (library: onetable) or
	// settings ({name: electrodb, service: shop}).
	Library Library `yaml:"library"`
	// Entities by name ("entities" in the file), in file order: a letter, then
	// letters, digits, '_' or '-'; a name is also its type attribute's default
	// value. At least one.
	Entities []*Entity `yaml:"-"`
	// AccessPatterns are the named Queries the design serves
	// ("access_patterns", in file order); verify checks their order against
	// PostgreSQL.
	AccessPatterns []*AccessPattern `yaml:"-"`

	// File is the path the mapping was read from, used in error messages.
	File string `yaml:"-"`
	pos  *positions
	// problems are the errors ParsePartial returned with the mapping.
	problems Errors
}

// Table describes the target DynamoDB table. The settings after GSIs apply when
// pg2dynamo creates the table (migrate --create-table); an existing table's are
// neither changed nor checked.
type Table struct {
	// Name is the DynamoDB table name: 3-255 characters of a-z, A-Z, 0-9, '_',
	// '-', '.'
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html).
	Name string `yaml:"name"`
	// PartitionKey names the partition key attribute, rendered from each
	// entity's pk. Default PK.
	PartitionKey string `yaml:"partition_key"`
	// SortKey names the sort key attribute, rendered from each entity's sk.
	// Default SK. sort_key: "" means no sort key: entities have no sk and
	// partition keys must be unique.
	SortKey string `yaml:"sort_key"`
	// PartitionKeyType is S (the default), N or B. An N key's template is one
	// number column placeholder or a literal number; a B key's one bytea column
	// placeholder.
	PartitionKeyType string `yaml:"partition_key_type"`
	// SortKeyType is S (the default), N or B, as partition_key_type; N sorts
	// numerically, unpadded.
	SortKeyType string `yaml:"sort_key_type"`
	// BillingMode is PAY_PER_REQUEST (on-demand, the default) or PROVISIONED,
	// which needs read_capacity and write_capacity above 0 on the table and
	// every GSI
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/capacity-mode.html).
	BillingMode string `yaml:"billing_mode"`
	// ReadCapacity is the table's provisioned RCU: above 0 with PROVISIONED,
	// else 0 or left out.
	ReadCapacity int64 `yaml:"read_capacity"`
	// WriteCapacity is the table's provisioned WCU: above 0 with PROVISIONED,
	// else 0 or left out.
	WriteCapacity int64 `yaml:"write_capacity"`
	// GSIs are the global secondary indexes, at most 20 a table by default
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html).
	GSIs []GSI `yaml:"gsis"`

	// WarmThroughput pre-warms the table from its creation
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput.html).
	WarmThroughput *WarmThroughput `yaml:"warm_throughput"`
	// MaxReadRequestUnits caps on-demand reads per second, at least 1;
	// PAY_PER_REQUEST only
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode-max-throughput.html).
	MaxReadRequestUnits *int64 `yaml:"max_read_request_units"`
	// MaxWriteRequestUnits caps on-demand writes per second, at least 1;
	// PAY_PER_REQUEST only
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode-max-throughput.html).
	MaxWriteRequestUnits *int64 `yaml:"max_write_request_units"`
	// PointInTimeRecovery turns on continuous backups once the table is ACTIVE
	// (CreateTable cannot).
	PointInTimeRecovery *PointInTimeRecovery `yaml:"point_in_time_recovery"`
	// DeletionProtection makes DeleteTable fail until it is turned off. Default
	// false
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/WorkingWithTables.Basics.html#WorkingWithTables.Basics.DeletionProtection).
	DeletionProtection bool `yaml:"deletion_protection"`
}

// GSI is a global secondary index: PartitionKey and SortKey rendered from
// Entity.Indexes templates (overloaded), or PartitionKeys and SortKeys,
// attributes the items carry (multi-attribute keys).
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.DesignPattern.MultiAttributeKeys.html
type GSI struct {
	// Name is the index name, unique in the table, named as tables are.
	Name string `yaml:"name"`
	// PartitionKey names the index's partition key attribute, e.g. GSI1PK. The
	// table's sort key here with its partition key as sort_key makes an
	// inverted index. Not with partition_keys.
	PartitionKey string `yaml:"partition_key"`
	// SortKey names the index's sort key attribute, e.g. GSI1SK; optional. Not
	// with sort_keys.
	SortKey string `yaml:"sort_key"`
	// PartitionKeyType is S (the default), N or B; a table key attribute keeps
	// the table's type.
	PartitionKeyType string `yaml:"partition_key_type"`
	// SortKeyType is S (the default), N or B, as partition_key_type.
	SortKeyType string `yaml:"sort_key_type"`
	// PartitionKeys is a multi-attribute partition key: 1 to 4 item attributes
	// in order. An item lacking one is not in the index.
	PartitionKeys []KeyAttribute `yaml:"partition_keys"`
	// SortKeys is a multi-attribute sort key: up to 4 item attributes in order;
	// needs partition_keys.
	SortKeys []KeyAttribute `yaml:"sort_keys"`
	// Projection is ALL (the default), KEYS_ONLY, or INCLUDE with
	// non_key_attributes
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html).
	Projection string `yaml:"projection"`
	// NonKeyAttributes are what INCLUDE copies besides the keys (at least one);
	// 100 at most across the table's indexes.
	NonKeyAttributes []string `yaml:"non_key_attributes"`
	// ReadCapacity is the index's provisioned RCU: above 0 with PROVISIONED,
	// else 0 or left out.
	ReadCapacity int64 `yaml:"read_capacity"`
	// WriteCapacity is the index's provisioned WCU: above 0 with PROVISIONED,
	// else 0 or left out.
	WriteCapacity int64 `yaml:"write_capacity"`
	// WarmThroughput pre-warms the index from its creation.
	WarmThroughput *WarmThroughput `yaml:"warm_throughput"`
	// MaxReadRequestUnits caps on-demand reads per second, at least 1;
	// PAY_PER_REQUEST only.
	MaxReadRequestUnits *int64 `yaml:"max_read_request_units"`
	// MaxWriteRequestUnits caps on-demand writes per second, at least 1;
	// PAY_PER_REQUEST only.
	MaxWriteRequestUnits *int64 `yaml:"max_write_request_units"`
}

// KeyAttribute is one attribute of a multi-attribute GSI key and its type,
// which must be its column's written type or DynamoDB refuses the item
// (docs/mapping.md, "Types: PostgreSQL → DynamoDB").
type KeyAttribute struct {
	// Name is a written (or renamed) column; not a string key attribute, nor
	// twice in one index.
	Name string `yaml:"name"`
	// Type is S (text, uuid, dates, timestamps), N (integers, numeric) or B
	// (bytea); one type per attribute.
	Type string `yaml:"type"`
}

// WarmThroughput is the read and write units per second a table or GSI serves
// at once: at least one, each at least 1; it can be raised, never lowered.
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_WarmThroughput.html
type WarmThroughput struct {
	// ReadUnitsPerSecond is at least 1.
	ReadUnitsPerSecond *int64 `yaml:"read_units_per_second"`
	// WriteUnitsPerSecond is at least 1.
	WriteUnitsPerSecond *int64 `yaml:"write_units_per_second"`
}

// PointInTimeRecovery is the table's continuous backups setting.
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateContinuousBackups.html
type PointInTimeRecovery struct {
	// Enabled, when true, turns point-in-time recovery on.
	Enabled bool `yaml:"enabled"`
	// RecoveryPeriodInDays is how many days back the table can be restored: 1
	// to 35 (default 35); only with enabled: true.
	RecoveryPeriodInDays *int64 `yaml:"recovery_period_in_days"`
}

// AccessPattern is a named Query on the table or a GSI; its key templates'
// placeholders are its parameters.
type AccessPattern struct {
	// Name is the pattern's key in "access_patterns".
	Name string `yaml:"-"`
	// Description says what the pattern is for.
	Description string `yaml:"description"`
	// Index is a GSI name from table.gsis; empty for the table.
	Index string `yaml:"index"`
	// KeyCondition is PK = T, optionally AND SK = T, SK < T, SK <= T, SK > T,
	// SK >= T, SK BETWEEN T AND T or begins_with(SK, T), PK and SK being the
	// key attribute names of the table or index; a 'quoted' template may hold
	// spaces, parentheses and commas. On a multi-attribute GSI: A = T for each
	// partition key attribute in order, then sort key attributes from the left
	// joined by AND, each = T but the last, which may take any sort key
	// condition; each T a column placeholder or a literal.
	KeyCondition string `yaml:"key_condition"`
	// ScanForward false reads the sort key descending (ScanIndexForward=false).
	// Default true.
	ScanForward *bool `yaml:"scan_forward"`
	// Filter is the Query's filter expression, applied after the key condition:
	// conditions joined all by AND or all by OR, each ATTR OP ${column} (= <> <
	// <= > >=), ATTR BETWEEN ${a} AND ${b}, ATTR IN (${a}, …), begins_with,
	// contains, attribute_exists, attribute_not_exists or size(ATTR). ATTR is a
	// non-key attribute; verify samples ${column} values from one row.
	// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.FilterExpression.html
	Filter string `yaml:"filter"`

	// Parsed, set by Load.
	Condition KeyCondition `yaml:"-"`
	// FilterExpr is Filter parsed; nil without one.
	FilterExpr *Filter `yaml:"-"`
}

// KeyCondition is a parsed key condition: the partition key's equality, a
// multi-attribute GSI's further equalities (Equal), then the sort key
// condition.
type KeyCondition struct {
	PartitionAttr string
	Partition     Template
	// Equal are a multi-attribute key's equalities after the first.
	Equal []KeyTerm
	// SortAttr is empty when the condition names the partition key only.
	SortAttr string
	// SortOp is "=", "<", "<=", ">", ">=", "begins_with" or "between".
	SortOp string
	Sort   Template
	// SortHigh is the upper bound of "between".
	SortHigh Template
}

// KeyTerm is one condition: Attr Op Value (ValueHigh for between), Op as
// KeyCondition.SortOp.
type KeyTerm struct {
	Attr             string
	Op               string
	Value, ValueHigh Template
}

// Terms returns the condition's terms in order.
func (kc KeyCondition) Terms() []KeyTerm {
	out := []KeyTerm{{Attr: kc.PartitionAttr, Op: "=", Value: kc.Partition}}
	for _, t := range kc.Equal {
		t.Op = "="
		out = append(out, t)
	}
	if kc.SortAttr != "" {
		out = append(out, KeyTerm{Attr: kc.SortAttr, Op: kc.SortOp, Value: kc.Sort, ValueHigh: kc.SortHigh})
	}
	return out
}

// Entity turns the rows of one source into items of one type.
type Entity struct {
	// Name is the entity's key in the "entities" map.
	Name string `yaml:"-"`
	// Source is {table: customers}, {schema: sales, table: customers} or
	// {query: "SELECT …"}.
	Source Source `yaml:"source"`
	// PK is the partition key template, e.g. CUSTOMER#${customer_id}. A key
	// rendered empty, from NULL or over 2048 bytes rejects the row
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-partition-sort-keys).
	PK string `yaml:"pk"`
	// SK is the sort key template, e.g. ORDER#${created_at}#${order_id}; at
	// most 1024 bytes rendered.
	SK string `yaml:"sk"`
	// Indexes are this entity's GSI key templates by index name; absent, it
	// writes no attributes for that index.
	Indexes map[string]IndexKeys `yaml:"indexes"`
	// Attributes chooses and names the non-key attributes.
	Attributes Attributes `yaml:"attributes"`
	// Type is the type attribute's value on this entity's items. Default: the
	// entity's name.
	Type string `yaml:"type"`
	// Embed puts child rows into one attribute, by attribute name.
	Embed map[string]*Embed `yaml:"embed"`
	// Duplicate copies a parent row's columns onto each item through a foreign
	// key.
	Duplicate []*Duplicate `yaml:"duplicate"`
	// Aggregates are a count, sum, min or max over child rows, by attribute
	// name.
	Aggregates map[string]*Aggregate `yaml:"aggregates"`
	// IDs are stable, sortable IDs by attribute name; key templates can use
	// them (POST#${post_ksuid}).
	IDs map[string]*StableID `yaml:"ids"`
	// Mirror writes each row again under these keys: the other direction of a
	// many-to-many association.
	Mirror *Mirror `yaml:"mirror"`

	// Parsed templates, set by Load.
	PKTemplate    Template               `yaml:"-"`
	SKTemplate    Template               `yaml:"-"`
	IndexTemplate map[string][2]Template `yaml:"-"`
}

// Join pairs columns for an equi-join: {other source's column: this entity's
// column}.
type Join map[string]string

// Pairs returns the (other, own) column pairs sorted by the other, for
// deterministic SQL.
func (j Join) Pairs() [][2]string {
	out := make([][2]string, 0, len(j))
	for k, v := range j {
		out = append(out, [2]string{k, v})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return out
}

// Embed puts the child rows of each row into one attribute.
type Embed struct {
	// Source is the child rows: {table: …}, optionally with schema, or {query:
	// "SELECT …"}.
	Source Source `yaml:"source"`
	// Join is {child column: this entity's column}, e.g. {customer_id:
	// customer_id}.
	Join Join `yaml:"join"`
	// As is list (the default: an L of M in order_by order), map (an M of M by
	// key) or set (an SS, NS or BS of attributes.select's one column; see
	// Attributes.Sets). No children: empty list or map, no set.
	As string `yaml:"as"`
	// Key is the child column keying the map; only with as: map.
	Key string `yaml:"key"`
	// OrderBy orders a list: child columns, each optionally ASC or DESC. Not
	// with as: set.
	OrderBy []string `yaml:"order_by"`
	// MaxItems above 0 rejects a row with more children; 0 (the default) is no
	// bound.
	MaxItems int `yaml:"max_items"`
	// Attributes chooses and names each element's child columns; with as: set,
	// select names one column.
	Attributes Attributes `yaml:"attributes"`
}

// Embed forms (Embed.As).
const (
	EmbedList = "list"
	EmbedMap  = "map"
	EmbedSet  = "set"
)

// Duplicate copies columns of the one parent row Join finds onto the item; a
// row without one gets none of them.
type Duplicate struct {
	// Source is the parent table, not a query: its join columns must be a
	// unique key, checked in the database.
	Source Source `yaml:"source"`
	// Join is {parent column: this entity's column}, e.g. {customer_id:
	// customer_id}.
	Join Join `yaml:"join"`
	// Attributes chooses the parent columns copied (select is required) and
	// their attribute names.
	Attributes Attributes `yaml:"attributes"`
}

// Aggregate functions.
const (
	AggCount = "count"
	AggSum   = "sum"
	AggMin   = "min"
	AggMax   = "max"
)

// Aggregate is a count, sum, min or max over a row's child rows (a lecture's
// student_count). Without children count is 0, the others absent.
type Aggregate struct {
	// Function is count, sum, min or max.
	Function string `yaml:"function"`
	// Column is the child column summed or compared: required by sum, min and
	// max, not by count.
	Column string `yaml:"column"`
	// Source is the child rows: {table: …}, optionally with schema, or {query:
	// "SELECT …"}.
	Source Source `yaml:"source"`
	// Join is {child column: this entity's column}, e.g. {customer_id:
	// customer_id}.
	Join Join `yaml:"join"`
}

// ID kinds.
const (
	IDKSUID = "ksuid"
	IDULID  = "ulid"
)

// StableID is a KSUID or ULID timed by a timestamp column, its random part the
// SHA-256 of From: sortable, and the same on every run.
type StableID struct {
	// Kind is ksuid or ulid: fixed length, ordered by time.
	Kind string `yaml:"kind"`
	// Time is a date, timestamp or timestamptz column: the ID's time part.
	Time string `yaml:"time"`
	// From lists the columns hashed into the random part, e.g. the primary key.
	From []string `yaml:"from"`
}

// Mirror is each association row's second item: the same attributes under the
// other direction's keys.
type Mirror struct {
	// PK is the mirror item's partition key template, e.g.
	// "LECTURE#${lecture_id}".
	PK string `yaml:"pk"`
	// SK is the mirror item's sort key template, e.g. "STUDENT#${student_id}".
	SK string `yaml:"sk"`

	PKTemplate Template `yaml:"-"`
	SKTemplate Template `yaml:"-"`
}

// Source is a table (with optional schema) or a SQL query; exactly one.
type Source struct {
	// Schema is the table's PostgreSQL schema; without it, the table is found
	// on the connection's search_path. A query qualifies names itself.
	Schema string `yaml:"schema"`
	// Table is the source table.
	Table string `yaml:"table"`
	// Query is one SQL statement read as a subquery (FROM (query) AS src),
	// without parameters ($1) or row locks (FOR UPDATE, FOR SHARE).
	Query string `yaml:"query"`
}

// IndexKeys holds the key templates of one GSI for one entity.
type IndexKeys struct {
	// PK is the index's partition key template, e.g. "EMAIL#${email}"; not for
	// a table key attribute (inverted index).
	PK string `yaml:"pk"`
	// SK is the index's sort key template: only with a sort_key that is not a
	// table key attribute.
	SK string `yaml:"sk"`
	// Sparse leaves the item out of the index when a template column is NULL,
	// instead of rejecting the row.
	Sparse bool `yaml:"sparse"`
}

// Attributes selects, excludes and renames the non-key attribute columns;
// default all, unrenamed.
type Attributes struct {
	// Select, when non-empty, lists the only columns written (default: all).
	Select []string `yaml:"select"`
	// Exclude lists columns never written; key templates may still use them.
	Exclude []string `yaml:"exclude"`
	// Rename maps a column to its attribute name; not a key or type attribute.
	Rename map[string]string `yaml:"rename"`
	// Sets lists array columns written as sets: SS for text-like elements, NS
	// for numbers, BS for bytea. Duplicates collapse (1.0 and 1 are one), a
	// NULL element rejects the row, an empty array leaves the attribute out
	// (DynamoDB has no empty sets).
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

// MultiAttribute reports whether the GSI has multi-attribute keys rather than
// templates.
func (g *GSI) MultiAttribute() bool { return len(g.PartitionKeys) > 0 || len(g.SortKeys) > 0 }

// KeyNames returns the GSI's key attributes; only items with all of them are in
// the index.
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

// KeyAttributeTypes returns every key attribute of the table and GSIs with its
// type, once each, in CreateTable's order.
func (t *Table) KeyAttributeTypes() []KeyAttribute {
	var out []KeyAttribute
	add := func(name, typ string) {
		if name != "" && !slices.ContainsFunc(out, func(a KeyAttribute) bool { return a.Name == name }) {
			out = append(out, KeyAttribute{Name: name, Type: typ})
		}
	}
	add(t.PartitionKey, t.KeyType(t.PartitionKey))
	add(t.SortKey, t.KeyType(t.SortKey))
	for _, g := range t.GSIs {
		add(g.PartitionKey, t.KeyType(g.PartitionKey))
		add(g.SortKey, t.KeyType(g.SortKey))
		for _, a := range slices.Concat(g.PartitionKeys, g.SortKeys) {
			add(a.Name, a.Type)
		}
	}
	return out
}

// KeyType returns the declared type of attr, a template-rendered key attribute
// (table first, then GSIs), TypeString when undeclared.
func (t *Table) KeyType(attr string) string {
	typ := ""
	declare := func(name, declared string) {
		if typ == "" && name == attr && declared != "" {
			typ = declared
		}
	}
	declare(t.PartitionKey, t.PartitionKeyType)
	declare(t.SortKey, t.SortKeyType)
	for _, g := range t.GSIs {
		declare(g.PartitionKey, g.PartitionKeyType)
		declare(g.SortKey, g.SortKeyType)
	}
	if typ == "" {
		return TypeString
	}
	return typ
}

// KeyTypes returns the table's partition and sort key types (TypeString without
// a sort key).
func (t *Table) KeyTypes() [2]string {
	return [2]string{t.KeyType(t.PartitionKey), t.KeyType(t.SortKey)}
}

// IsQuery reports whether the source is a SQL query rather than a table.
func (s Source) IsQuery() bool { return s.Query != "" }

// String names the source for messages: "orders", "sales.orders" or "the
// query".
func (s Source) String() string {
	switch {
	case s.IsQuery():
		return "the query"
	case s.Schema != "":
		return s.Schema + "." + s.Table
	}
	return s.Table
}

// Only returns a copy of m holding the entities keep picks, in m's order, and
// no access pattern (the entities left out answer them too), with the index in
// m.Entities of each entity kept. An entity's items come from its own rows and
// joins, so the copy derives them as m does.
func (m *Mapping) Only(keep func(i int, e *Entity) bool) (*Mapping, []int) {
	sub := *m
	sub.Entities, sub.AccessPatterns = nil, nil
	var index []int
	for i, e := range m.Entities {
		if keep(i, e) {
			sub.Entities, index = append(sub.Entities, e), append(index, i)
		}
	}
	return &sub, index
}
