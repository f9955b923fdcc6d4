// Package mapping is pg2dynamo's declarative mapping language: which
// PostgreSQL rows become which DynamoDB items, in a single-table design.
//
// A mapping file is YAML. It names the target table (partition key, sort key,
// billing mode, GSIs) and a set of entities. Each entity reads one source (a
// table or a SQL query) and turns every row into one item whose keys are
// rendered from templates such as "USER#${user_id}". Load parses and checks a
// file; every problem is reported as an *Error naming the file, line, column
// and dotted path (entities.Order.pk) of the offending value. JSONSchema is
// the file's JSON Schema for editors, generated from the types below (their
// yaml keys and doc comments) by internal/schemagen.
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

// Types of key attributes, as the DynamoDB API spells them: string, number,
// binary. The table's and an overloaded GSI's key attributes are S unless
// declared otherwise (Table.PartitionKeyType, GSI.SortKeyType, …); each
// attribute of a multi-attribute GSI key declares its own (KeyAttribute.Type).
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html#HowItWorks.DataTypes
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
	// Version of the mapping language. Optional: only 1 exists.
	Version int `yaml:"version"`
	// Name is the mapping's identity: 1 to 128 characters, a letter, then
	// letters, digits, '_', '-' or '.'. A table the mapping creates is
	// tagged with it (pg2dynamo:mapping), and a run of a mapping of
	// another name into that table is refused; two files of one name are
	// one mapping, whatever their paths. Optional for reading and
	// checking; required to create or tag a table.
	Name string `yaml:"name"`
	// Table is the single DynamoDB table every entity writes to. Its key
	// attributes are rendered from the key templates, as strings (S) unless
	// declared numbers (N) or binaries (B).
	Table Table `yaml:"table"`
	// TypeAttribute is the name of the attribute that carries each item's
	// entity type. Default "type"; with a library, the library's (_type,
	// __edb_e__ or _et), which this may only repeat. Not a string key
	// attribute of the table or of a GSI.
	TypeAttribute string `yaml:"type_attribute"`
	// Library makes the items readable, as they are, by a single-table
	// library of the application: onetable, electrodb or dynamodb-toolbox.
	// Its type attribute and the other attributes it reads are written on
	// every item, and the key templates are held to what it renders. As a
	// name (library: onetable) or with settings ({name: electrodb,
	// service: shop}).
	Library Library `yaml:"library"`
	// Entities by name ("entities" in the file), in the order they are
	// read. Each reads one source (a table or a SQL query) and turns every
	// row into one item. A name starts with a letter, then letters, digits,
	// '_' or '-'; it is also the default value of the type attribute. At
	// least one. Decoded from the map in file order; see Load.
	Entities []*Entity `yaml:"-"`
	// AccessPatterns are the named reads the design serves
	// ("access_patterns", in file order), each a Query on the table or on a
	// GSI. plan prints them; verify runs them and checks their order
	// against PostgreSQL.
	AccessPatterns []*AccessPattern `yaml:"-"`

	// File is the path the mapping was read from, used in error messages.
	File string `yaml:"-"`
	pos  *positions
	// problems are the errors ParsePartial returned the mapping with.
	problems Errors
}

// Table describes the target DynamoDB table. Its key attributes are
// rendered by key templates: strings (S) by default; a key attribute
// declared N holds a number column's value (a template of one placeholder),
// one declared B a bytea column's.
//
// The settings after GSIs are optional. pg2dynamo applies them when it
// creates the table (migrate --create-table) and prints them in plan's
// CreateTable request and CloudFormation resource; it neither applies nor
// checks them on a table that already exists.
type Table struct {
	// Name is the DynamoDB table name: 3-255 characters of a-z, A-Z, 0-9,
	// '_', '-', '.'
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html).
	Name string `yaml:"name"`
	// PartitionKey is the name of the table's partition key attribute,
	// rendered from each entity's pk. Default PK.
	PartitionKey string `yaml:"partition_key"`
	// SortKey is the name of the table's sort key attribute, rendered from
	// each entity's sk. Default SK; not the partition key's name. Written
	// as "" (sort_key: ""), the table has no sort key: the partition key
	// alone is an item's primary key, entities have no sk, and two items
	// (two rows, or two entities' rows) must not render the same
	// partition key.
	SortKey string `yaml:"sort_key"`
	// PartitionKeyType is the type of the partition key attribute: S
	// (string, the default), N (number) or B (binary). An N key's templates
	// are one placeholder of a number column (integers, numeric, floats) or
	// a literal number; a B key's one placeholder of a bytea column.
	PartitionKeyType string `yaml:"partition_key_type"`
	// SortKeyType is the type of the sort key attribute: S (the default), N
	// or B, with the rules of partition_key_type. A number sort key sorts
	// in numeric order, with no padding.
	SortKeyType string `yaml:"sort_key_type"`
	// BillingMode is PAY_PER_REQUEST (on-demand, the default) or
	// PROVISIONED, which needs read_capacity and write_capacity above 0 on
	// the table and on every GSI
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/capacity-mode.html).
	BillingMode string `yaml:"billing_mode"`
	// ReadCapacity is the provisioned read capacity units (RCU) of the
	// table: above 0 with billing_mode PROVISIONED, left out (or 0)
	// otherwise.
	ReadCapacity int64 `yaml:"read_capacity"`
	// WriteCapacity is the provisioned write capacity units (WCU) of the
	// table: above 0 with billing_mode PROVISIONED, left out (or 0)
	// otherwise.
	WriteCapacity int64 `yaml:"write_capacity"`
	// GSIs are the global secondary indexes, each with string keys
	// (partition_key, sort_key) rendered on each entity's items from its
	// indexes templates, or with multi-attribute keys (partition_keys,
	// sort_keys) the items carry. DynamoDB allows 20 GSIs a table by
	// default
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html).
	GSIs []GSI `yaml:"gsis"`

	// WarmThroughput, when set, pre-warms the table: the reads and writes
	// per second it takes at once, from its creation
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput.html).
	WarmThroughput *WarmThroughput `yaml:"warm_throughput"`
	// MaxReadRequestUnits, when set, caps the on-demand throughput of the
	// table: read request units per second, at least 1; requests above it
	// are throttled. billing_mode PAY_PER_REQUEST only
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode-max-throughput.html).
	MaxReadRequestUnits *int64 `yaml:"max_read_request_units"`
	// MaxWriteRequestUnits, when set, caps the on-demand throughput of the
	// table: write request units per second, at least 1; requests above it
	// are throttled. billing_mode PAY_PER_REQUEST only
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode-max-throughput.html).
	MaxWriteRequestUnits *int64 `yaml:"max_write_request_units"`
	// PointInTimeRecovery, when enabled, turns on continuous backups
	// (UpdateContinuousBackups, once the created table is ACTIVE: CreateTable
	// cannot).
	PointInTimeRecovery *PointInTimeRecovery `yaml:"point_in_time_recovery"`
	// DeletionProtection, when true, creates the table with deletion
	// protection: DeleteTable fails until it is turned off. Default false
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/WorkingWithTables.Basics.html#WorkingWithTables.Basics.DeletionProtection).
	DeletionProtection bool `yaml:"deletion_protection"`
}

// GSI is a global secondary index of the table. It has keys of one of two
// kinds:
//   - PartitionKey and SortKey: attributes rendered per entity from the
//     templates in Entity.Indexes (an overloaded index), strings (S) unless
//     PartitionKeyType or SortKeyType declares N or B;
//   - PartitionKeys and SortKeys (multi-attribute keys): one to
//     MaxKeyAttributes attributes each, of type S, N or B, that the items
//     carry as ordinary attributes (a column, or a renamed one). No entity
//     declares templates for such an index; an item lacking any of its key
//     attributes is not in it (the index is sparse by nature).
//
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.DesignPattern.MultiAttributeKeys.html
type GSI struct {
	// Name is the index name, once in the table: 3-255 characters of a-z,
	// A-Z, 0-9, '_', '-', '.'. Entities name it under indexes, access
	// patterns under index.
	Name string `yaml:"name"`
	// PartitionKey is the name of the index's partition key attribute,
	// rendered on each entity's items from its indexes templates,
	// e.g. GSI1PK (overloaded across entities). The table's sort key here,
	// with its partition key as sort_key, makes an inverted index. Not with
	// partition_keys.
	PartitionKey string `yaml:"partition_key"`
	// SortKey is the name of the index's sort key attribute, e.g. GSI1SK.
	// Optional; not the index's partition key. Not with sort_keys.
	SortKey string `yaml:"sort_key"`
	// PartitionKeyType is the type of partition_key: S (the default), N or
	// B, with the rules of the table's partition_key_type. Where
	// partition_key is one of the table's key attributes, its type is the
	// table's (declared there); an attribute two GSIs share has one type.
	PartitionKeyType string `yaml:"partition_key_type"`
	// SortKeyType is the type of sort_key: S (the default), N or B, as
	// partition_key_type.
	SortKeyType string `yaml:"sort_key_type"`
	// PartitionKeys is a multi-attribute partition key: 1 to 4 attributes
	// the items carry (a column, or a renamed one), in order, instead of
	// partition_key. No entity lists such an index under indexes, and an
	// item lacking one of them is not in the index.
	PartitionKeys []KeyAttribute `yaml:"partition_keys"`
	// SortKeys is a multi-attribute sort key: up to 4 attributes the items
	// carry, in order, instead of sort_key; only with partition_keys.
	SortKeys []KeyAttribute `yaml:"sort_keys"`
	// Projection is the attributes copied into the index: ALL (the
	// default), KEYS_ONLY, or INCLUDE with non_key_attributes
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html).
	Projection string `yaml:"projection"`
	// NonKeyAttributes, with projection INCLUDE and only then, are the
	// attributes copied into the index besides the keys; at least one.
	// DynamoDB allows 100 across all the table's indexes.
	NonKeyAttributes []string `yaml:"non_key_attributes"`
	// ReadCapacity is the provisioned read capacity units (RCU) of the
	// index: above 0 with billing_mode PROVISIONED, left out (or 0)
	// otherwise.
	ReadCapacity int64 `yaml:"read_capacity"`
	// WriteCapacity is the provisioned write capacity units (WCU) of the
	// index: above 0 with billing_mode PROVISIONED, left out (or 0)
	// otherwise.
	WriteCapacity int64 `yaml:"write_capacity"`
	// WarmThroughput, when set, pre-warms the index: the reads and writes
	// per second it takes at once, from its creation.
	WarmThroughput *WarmThroughput `yaml:"warm_throughput"`
	// MaxReadRequestUnits, when set, caps the on-demand throughput of the
	// index: read request units per second, at least 1. billing_mode
	// PAY_PER_REQUEST only.
	MaxReadRequestUnits *int64 `yaml:"max_read_request_units"`
	// MaxWriteRequestUnits, when set, caps the on-demand throughput of the
	// index: write request units per second, at least 1. billing_mode
	// PAY_PER_REQUEST only.
	MaxWriteRequestUnits *int64 `yaml:"max_write_request_units"`
}

// KeyAttribute is one attribute of a multi-attribute GSI key: an attribute
// of the items (not rendered from a template) and its type, TypeString,
// TypeNumber or TypeBinary. An item whose attribute has another type is
// refused by DynamoDB, so the type must be the one its column is written
// as (docs/mapping.md, "Types: PostgreSQL → DynamoDB": integers and
// numeric are N, text S, bytea B).
type KeyAttribute struct {
	// Name is the attribute: a column written under this name, or renamed
	// to it. Not a string key attribute of the table or a GSI, nor twice in
	// one index.
	Name string `yaml:"name"`
	// Type is its type, as the column is written: S (string: text, uuid,
	// dates, timestamps), N (number: integers, numeric) or B (binary:
	// bytea). An item whose attribute has another type is refused by
	// DynamoDB; an attribute two indexes share has one type, and the type
	// attribute is S.
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
	// ReadUnitsPerSecond is the read units per second, at least 1.
	ReadUnitsPerSecond *int64 `yaml:"read_units_per_second"`
	// WriteUnitsPerSecond is the write units per second, at least 1.
	WriteUnitsPerSecond *int64 `yaml:"write_units_per_second"`
}

// PointInTimeRecovery is the table's continuous backups setting.
// RecoveryPeriodInDays, from MinRecoveryPeriodDays to MaxRecoveryPeriodDays,
// is how far back the table can be restored (DynamoDB's default 35 when
// nil); it needs Enabled.
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateContinuousBackups.html
type PointInTimeRecovery struct {
	// Enabled, when true, turns point-in-time recovery on.
	Enabled bool `yaml:"enabled"`
	// RecoveryPeriodInDays is how many days back the table can be
	// restored: 1 to 35 (DynamoDB's default 35). Only with enabled: true.
	RecoveryPeriodInDays *int64 `yaml:"recovery_period_in_days"`
}

// AccessPattern is a named read the design serves: a Query on the table or
// a GSI with a key condition written over key templates. The condition
// "PK = USER#${user_id} AND begins_with(SK, TICKET#)" has the parameter
// user_id: the placeholders are the parameters. plan prints the patterns
// and verification runs them.
type AccessPattern struct {
	// Name is the pattern's key in "access_patterns".
	Name string `yaml:"-"`
	// Description says what the pattern is for.
	Description string `yaml:"description"`
	// Index is a GSI name from table.gsis; left out (empty) for the table.
	Index string `yaml:"index"`
	// KeyCondition is PK = TEMPLATE, optionally followed by AND and one
	// of: SK = T, SK < T, SK <= T, SK > T, SK >= T, SK BETWEEN T AND T,
	// begins_with(SK, T). PK and SK are the key attribute names of the
	// table or the index; a template in single quotes may hold spaces,
	// parentheses and commas. On a GSI with multi-attribute keys: A = T
	// for each partition key attribute in order, then sort key attributes
	// from the left joined by AND, each = T but the last, which may be any
	// of the sort key conditions; each T a placeholder of a column written
	// as that attribute, or a literal.
	KeyCondition string `yaml:"key_condition"`
	// ScanForward is false to read the sort key descending, newest first
	// (ScanIndexForward=false). Default true.
	ScanForward *bool `yaml:"scan_forward"`
	// Filter is the Query's filter expression, applied by DynamoDB to the
	// items the key condition reads, before they are returned: conditions
	// all joined by AND, or all by OR, each one of ATTR OP ${column} (OP
	// one of = <> < <= > >=), ATTR BETWEEN ${a} AND ${b}, ATTR IN (${a},
	// …), begins_with(ATTR, ${a}), contains(ATTR, ${a}),
	// attribute_exists(ATTR), attribute_not_exists(ATTR) and size(ATTR)
	// compared as ATTR is. ATTR is an attribute of the items, not a key
	// attribute of the index queried; each ${column} is a parameter,
	// sampled by verify with the key condition's from one row.
	// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.FilterExpression.html
	Filter string `yaml:"filter"`

	// Parsed, set by Load.
	Condition KeyCondition `yaml:"-"`
	// FilterExpr is Filter parsed; nil without one.
	FilterExpr *Filter `yaml:"-"`
}

// KeyCondition is a parsed access-pattern key condition: the partition
// key's equality, then, on a GSI with multi-attribute keys, the equalities
// on its further key attributes (Equal, in the condition's order), then
// the sort key condition. Terms lists them all in order.
type KeyCondition struct {
	PartitionAttr string
	Partition     Template
	// Equal are the equalities between the first and the last condition:
	// only a multi-attribute key has them (Load checks which attributes
	// they name).
	Equal []KeyTerm
	// SortAttr is empty when the condition names the partition key only.
	SortAttr string
	// SortOp is "=", "<", "<=", ">", ">=", "begins_with" or "between".
	SortOp string
	Sort   Template
	// SortHigh is the upper bound of "between".
	SortHigh Template
}

// KeyTerm is one condition of a key condition: Attr Op Value (and
// ValueHigh for between). Op is "=", "<", "<=", ">", ">=", "begins_with"
// or "between".
type KeyTerm struct {
	Attr             string
	Op               string
	Value, ValueHigh Template
}

// Terms returns the condition's terms in order: the partition key's, the
// further equalities, then the sort key condition's, if any.
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
	// Source is where the rows come from: {table: customers}, {schema:
	// sales, table: customers} or {query: "SELECT …"}; exactly one of table
	// and query.
	Source Source `yaml:"source"`
	// PK is the key template of the item's partition key, e.g.
	// CUSTOMER#${customer_id}. Entities that share it form an item
	// collection. A rendered key is at most 2048 bytes
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-partition-sort-keys);
	// a longer one, an empty one or one from a NULL rejects the row.
	PK string `yaml:"pk"`
	// SK is the key template of the item's sort key, e.g.
	// ORDER#${created_at}#${order_id}. A composite sort key
	// (${state}#${city}) is searchable at each level with begins_with. A
	// rendered key is at most 1024 bytes.
	SK string `yaml:"sk"`
	// Indexes are the keys of the table's GSIs on this entity's items, by
	// index name (from table.gsis): the templates of the index's partition
	// and sort key. An entity absent from an index writes no attributes for
	// it.
	Indexes map[string]IndexKeys `yaml:"indexes"`
	// Attributes chooses and names the non-key attributes.
	Attributes Attributes `yaml:"attributes"`
	// Type is the value of the type attribute on this entity's items.
	// Default: the entity's name.
	Type string `yaml:"type"`
	// Embed holds child rows embedded in one attribute of each item, by
	// attribute name (a complex attribute): a list, a map keyed by a
	// column, or a set of one column's values.
	Embed map[string]*Embed `yaml:"embed"`
	// Duplicate copies columns of a parent row onto each item through a
	// foreign key (denormalization). A row without a parent gets none of
	// the columns.
	Duplicate []*Duplicate `yaml:"duplicate"`
	// Aggregates are a count, sum, min or max over child rows, kept on each
	// item, by attribute name. A row without children gets count 0; sum,
	// min and max are then absent.
	Aggregates map[string]*Aggregate `yaml:"aggregates"`
	// IDs are stable, sortable IDs by attribute name: a KSUID or ULID whose
	// time part comes from a timestamp column and whose random part is the
	// SHA-256 of the from columns. It sorts by time and is the same on
	// every run; key templates can use it (POST#${post_ksuid}).
	IDs map[string]*StableID `yaml:"ids"`
	// Mirror, when set, writes each row a second time with these keys and
	// the same attributes: the other direction of an adjacency-list
	// association (many-to-many).
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
	// Source is the child rows: {table: …}, with an optional schema, or
	// {query: "SELECT …"}; exactly one of table and query.
	Source Source `yaml:"source"`
	// Join is the equi-join, as {child column: this entity's column}, e.g.
	// {customer_id: customer_id}: each key a column of the child source,
	// each value a column of this entity's source.
	Join Join `yaml:"join"`
	// As is list (the default): an L of M, in order_by order. map: an M of
	// M keyed by the key column. set: an SS, NS or BS (by the column's
	// type) of the values of the one column attributes.select names; see
	// Attributes.Sets for its rules. No children gives an empty list or
	// map, and no set.
	As string `yaml:"as"`
	// Key, with as: map and only then, is the child column whose value
	// keys the map.
	Key string `yaml:"key"`
	// OrderBy is the order of a list: child columns, each optionally
	// followed by ASC or DESC, e.g. [address_id DESC]. Not with as: set.
	OrderBy []string `yaml:"order_by"`
	// MaxItems, above 0, rejects a row with more children (listed, not
	// written); 0, the default, sets no bound. An item is at most 400 KB.
	MaxItems int `yaml:"max_items"`
	// Attributes chooses and names the child columns of each element.
	// With as: set, select names exactly one column, and exclude, rename
	// and sets are not used.
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
	// Source is the parent table: {table: …}, with an optional schema. Not
	// a query: its join columns must be its primary key or a unique key,
	// checked against the database.
	Source Source `yaml:"source"`
	// Join is the equi-join, as {parent column: this entity's column},
	// e.g. {customer_id: customer_id}: each key a column of the parent
	// source, each value a column of this entity's source.
	Join Join `yaml:"join"`
	// Attributes chooses the parent columns copied (select is required:
	// copying a whole parent is rarely meant) and their attribute names.
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
	// Column is the child column summed or compared: required by sum, min
	// and max; not by count.
	Column string `yaml:"column"`
	// Source is the child rows: {table: …}, with an optional schema, or
	// {query: "SELECT …"}; exactly one of table and query.
	Source Source `yaml:"source"`
	// Join is the equi-join, as {child column: this entity's column}, e.g.
	// {customer_id: customer_id}: each key a column of the child source,
	// each value a column of this entity's source.
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
	// Kind is ksuid or ulid: fixed length, ordered by time.
	Kind string `yaml:"kind"`
	// Time is a date, timestamp or timestamptz column: the ID's time part.
	Time string `yaml:"time"`
	// From lists the columns hashed into the ID's random part (the row's
	// identity, e.g. its primary key).
	From []string `yaml:"from"`
}

// Mirror is the second item written for each row of an association
// entity: the same attributes under the other direction's keys.
type Mirror struct {
	// PK is the partition key template of the mirror item, e.g.
	// "LECTURE#${lecture_id}".
	PK string `yaml:"pk"`
	// SK is the sort key template of the mirror item, e.g.
	// "STUDENT#${student_id}".
	SK string `yaml:"sk"`

	PKTemplate Template `yaml:"-"`
	SKTemplate Template `yaml:"-"`
}

// Source is a table (with optional schema) or a SQL query; exactly one.
type Source struct {
	// Schema is the PostgreSQL schema of table. Default public. With a
	// query, qualify the names inside it instead.
	Schema string `yaml:"schema"`
	// Table is the source table.
	Table string `yaml:"table"`
	// Query is a SQL query, read as a subquery (FROM (query) AS src): one
	// complete statement, without parameters ($1) or row locks (FOR
	// UPDATE, FOR SHARE). Checked against PostgreSQL before anything is
	// read.
	Query string `yaml:"query"`
}

// IndexKeys holds the key templates of one GSI for one entity.
type IndexKeys struct {
	// PK is the template of the index's partition key, e.g.
	// "EMAIL#${email}". Required, unless the index's partition key is one
	// of the table's key attributes (an inverted index): that one is
	// written from pk or sk.
	PK string `yaml:"pk"`
	// SK is the template of the index's sort key: only for an index with a
	// sort_key, and left out where that is one of the table's key
	// attributes.
	SK string `yaml:"sk"`
	// Sparse, when true, leaves the item out of the index (writes neither
	// of its key attributes) when a template column is NULL, instead of
	// rejecting the row: a sparse index. Default false.
	Sparse bool `yaml:"sparse"`
}

// Attributes selects, excludes and renames the columns that become
// non-key attributes. By default every column becomes an attribute of the
// same name.
type Attributes struct {
	// Select, when non-empty, lists the only columns written as
	// attributes (default: all).
	Select []string `yaml:"select"`
	// Exclude lists columns never written as attributes; key templates may
	// still use them.
	Exclude []string `yaml:"exclude"`
	// Rename maps a column name to its attribute name. Not to a key
	// attribute of the table or a GSI, nor to the type attribute.
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
// sort key(s). The key attributes rendered from templates (see
// Mapping.KeyAttributes) are of their declared type (Table.KeyType); a
// multi-attribute key's are of their declared type (the first declaration,
// should two GSIs disagree: Load refuses that).
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

// KeyType returns the type of attr, a key attribute rendered from templates
// (the table's partition or sort key, or an overloaded GSI's): TypeString,
// TypeNumber or TypeBinary, as declared (the table's declaration first,
// then the GSIs' in order), TypeString when undeclared. Load refuses two
// declarations that differ.
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

// KeyTypes returns the types of the table's partition and sort key
// attributes (Table.KeyType), in that order; the sort key's is
// TypeString, unused, when the table has none.
func (t *Table) KeyTypes() [2]string {
	return [2]string{t.KeyType(t.PartitionKey), t.KeyType(t.SortKey)}
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
