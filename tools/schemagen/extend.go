package schemagen

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/invopop/jsonschema"

	m "github.com/pg2dynamo/pg2dynamo/mapping"
)

type schema = jsonschema.Schema

const (
	title = "pg2dynamo mapping file"

	fileDescription = `Which PostgreSQL rows become which DynamoDB items, in a single-table design: the target table and the entities, each reading one source and writing one item per row. A key written with no value is the same as the key left out. See README.md, "The mapping file" and "Single-table strategies".`

	fileComment = `Generated from the Go types of package mapping (go generate ./mapping; do not edit): mapping.Load decodes the same file. mapping/schema_test.go checks every shipped mapping validates and every structural bad case in mapping/testdata/bad is rejected. Where the two differ: this schema wants the documented scalar types (Load converts 123 to "123" and "5" to 5; it refuses 1.5 for a whole number, as this schema does); it refuses an empty string for billing_mode, projection, as and library (Load reads it as the default, or no library) and an empty column or attribute name anywhere (Load leaves some to the database check). It cannot see the rules that compare values or follow names: GSIs named by entities and access patterns, key attribute names (equal ones, the table's in a key condition, multi-attribute keys' clashes and types), duplicate index names and entity types, sets of columns excluded or not selected, the key formats of the library presets, and anything checked against the database.`

	gsiNamePatternMessage = "Expected the name of one of table.gsis."
	tableNameMessage      = "Expected 3-255 characters of a-z, A-Z, 0-9, '_', '-', '.'."
	electroSepMessage     = "ElectroDB's keys use '#' and '$' as separators."
	provisionedOnlyMax    = "a maximum on-demand throughput needs billing_mode PAY_PER_REQUEST: a PROVISIONED table has read_capacity and write_capacity instead"
)

// maxInt64 is the largest whole number the decoder takes into an int64.
var maxInt64 = json.Number(strconv.FormatInt(1<<63-1, 10))

// extend adds to the reflected schema what the Go types cannot say. It
// panics on a definition or property the reflection did not make.
func extend(root *schema) {
	root.Title = title
	root.Description = fileDescription
	root.Comments = fileComment
	defs := root.Definitions

	// Definitions not made from a Go type: the template and name
	// patterns, and the three contexts of a Source.
	defs["template"] = &schema{
		Description: "A key template: literal text with ${column} placeholders, e.g. ORDER#${order_id}; $$ writes a literal $. ${column:width} zero-pads a number to width digits (0 to 64); ${column:0} turns the padding off, which is otherwise the width of the column's type.",
		Pattern:     templatePattern,
		Comments:    templateComment,
		Extras: map[string]any{
			"type":                []string{"string", "null"},
			"patternErrorMessage": `Expected literal text and ${column} or ${column:width} placeholders: each "${" closed by "}", a column name in each, a width from 0 to 64; $$ for a literal $.`,
		},
	}
	defs["tableName"] = &schema{Type: "string", Pattern: tableNamePattern,
		Extras: map[string]any{"patternErrorMessage": tableNameMessage}}
	sources(defs)

	fileRules(root)
	library(def(defs, "library"))
	table(def(defs, "table"))
	gsi(def(defs, "gsi"))
	keyAttribute(def(defs, "keyAttribute"))
	warmThroughput(def(defs, "warmThroughput"))
	pointInTimeRecovery(def(defs, "pointInTimeRecovery"))
	entity(def(defs, "entity"))
	indexKeys(def(defs, "indexKeys"))
	attributes(def(defs, "attributes"))
	join(def(defs, "join"))
	embed(def(defs, "embed"))
	duplicate(def(defs, "duplicate"))
	aggregate(def(defs, "aggregate"))
	stableID(def(defs, "stableID"))
	mirror(def(defs, "mirror"))
	accessPattern(def(defs, "accessPattern"))

	// Every optional key accepts null: a key written with no value is the
	// key left out, as Load reads it.
	nullableOptional(root)
	for _, d := range defs {
		nullableOptional(d)
	}
}

// def returns the definition named name.
func def(defs jsonschema.Definitions, name string) *schema {
	d, ok := defs[name]
	if !ok {
		panic(fmt.Sprintf("no definition %q: a type was renamed", name))
	}
	return d
}

// prop returns the property key of s.
func prop(s *schema, key string) *schema {
	p, ok := s.Properties.Get(key)
	if !ok {
		panic(fmt.Sprintf("no property %q: a yaml key was renamed", key))
	}
	return p
}

// props builds the properties of key, schema pairs, in order.
func props(kv ...any) *jsonschema.Schema {
	s := &schema{Properties: jsonschema.NewProperties()}
	for i := 0; i < len(kv); i += 2 {
		s.Properties.Set(kv[i].(string), kv[i+1].(*schema))
	}
	return s
}

// extra sets the keyword k of s, one jsonschema.Schema has no field for.
func extra(s *schema, k string, v any) *schema {
	if s.Extras == nil {
		s.Extras = map[string]any{}
	}
	s.Extras[k] = v
	return s
}

// msg sets the message an editor shows when s fails (the errorMessage
// keyword of ajv-errors and yaml-language-server).
func msg(s *schema, text string) *schema { return extra(s, "errorMessage", text) }

// types sets the JSON types s allows.
func types(s *schema, ts ...string) *schema {
	s.Type = ""
	return extra(s, "type", ts)
}

func u(n uint64) *uint64 { return &n }

func num(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }

// enum makes s one of values, or null (left out), with a description of
// each value for editors.
func enum(s *schema, values []any, descriptions ...string) {
	s.Type = ""
	s.Enum = append(slices.Clone(values), nil)
	if descriptions != nil {
		extra(s, "enumDescriptions", descriptions)
	}
}

// count bounds an integer property: minimum min, maximum the int64 one.
func count(s *schema, min int64) {
	s.Minimum, s.Maximum = num(min), maxInt64
}

// nonEmpty makes a string, or a string's items or map values, non-empty.
func nonEmpty(s *schema) *schema {
	s.MinLength = u(1)
	return s
}

// names bounds a map by name: at most Load's MaxMappingKeys names (the
// most keys in one YAML mapping), none empty.
func names(s *schema) {
	s.MaxProperties = u(m.MaxMappingKeys)
	s.PropertyNames = &schema{MinLength: u(1)}
}

// emptyOrNull is a string key left out: "" or null.
func emptyOrNull(text string) *schema {
	s := &schema{Enum: []any{"", nil}}
	if text != "" {
		msg(s, text)
	}
	return s
}

// emptyString, emptyList and absent hold when a key is left out or
// empty (a string, a list) or null, with the message for a value given.
func emptyString(text string) *schema { return msg(&schema{MaxLength: u(0)}, text) }
func emptyList(text string) *schema   { return msg(&schema{MaxItems: u(0)}, text) }
func absent(text string) *schema      { return msg(&schema{Type: "null"}, text) }

// is holds when key is present with value v.
func is(key string, v any) *schema {
	s := props(key, &schema{Const: v})
	s.Required = []string{key}
	return s
}

// filledString and filledList hold when key is present and a non-empty
// string, or list.
func filledString(key string) *schema {
	s := props(key, &schema{Type: "string", MinLength: u(1)})
	s.Required = []string{key}
	return s
}

func filledList(key string) *schema {
	s := props(key, &schema{Type: "array", MinItems: u(1)})
	s.Required = []string{key}
	return s
}

// nullableOptional lets each property of s that is not required, and has
// a single JSON type, be null.
func nullableOptional(s *schema) {
	if s.Properties == nil {
		return
	}
	for p := s.Properties.Oldest(); p != nil; p = p.Next() {
		v := p.Value
		if slices.Contains(s.Required, p.Key) || v.Type == "" || v.Ref != "" {
			continue
		}
		types(v, v.Type, "null")
	}
}

// libraryIs holds when the library (a name or settings) is name.
func libraryIs(name string) *schema {
	return &schema{AnyOf: []*schema{{Const: name}, {Type: "object", Required: []string{m.KeyName},
		Properties: props(m.KeyName, &schema{Const: name}).Properties}}}
}

func fileRules(root *schema) {
	root.Required = []string{m.KeyTable, m.KeyEntities}

	v := prop(root, m.KeyVersion)
	enum(v, []any{1})
	v.Default = 1

	ta := prop(root, m.KeyTypeAttribute)
	ta.Default = m.DefaultTypeAttribute

	n := prop(root, m.KeyName)
	n.Pattern = mappingNamePattern
	n.Extras = map[string]any{"patternErrorMessage": "A mapping name is 1-128 characters: a letter, then letters, digits, '_', '-' or '.'."}

	es := prop(root, m.KeyEntities)
	es.MinProperties, es.MaxProperties = u(1), u(m.MaxMappingKeys)
	es.PropertyNames = extra(&schema{Pattern: entityNamePattern}, "patternErrorMessage",
		"An entity name starts with a letter, then letters, digits, '_' or '-'.")

	lib := prop(root, m.KeyLibrary)
	names := &schema{}
	// dynamodb-toolbox needs settings (created, or timestamps: false).
	enum(names, []any{m.LibraryOneTable, m.LibraryElectroDB},
		"dynamodb-onetable: type attribute _type; keys are the items' attributes' text.",
		"ElectroDB: __edb_e__ and __edb_v__ on every item; keys in ElectroDB's default format.", "")
	lib.AnyOf = []*schema{names, {Ref: lib.Ref}}
	lib.Ref = ""

	aps := prop(root, m.KeyAccessPatterns)
	aps.MaxProperties = u(m.MaxMappingKeys)

	// A library fixes the type attribute, and reads no mirror.
	for _, l := range []struct{ name, attr string }{
		{m.LibraryOneTable, m.OneTableTypeField},
		{m.LibraryElectroDB, m.ElectroDBEntityAttr},
		{m.LibraryToolbox, m.ToolboxEntityAttr},
	} {
		then := props(m.KeyTypeAttribute, msg(&schema{Enum: []any{l.attr, "", nil}},
			fmt.Sprintf("library %s reads the entity type from %q: remove type_attribute", l.name, l.attr)))
		root.AllOf = append(root.AllOf, &schema{
			If:   &schema{Required: []string{m.KeyLibrary}, Properties: props(m.KeyLibrary, libraryIs(l.name)).Properties},
			Then: then,
		})
	}
	root.AllOf = append(root.AllOf, noSortKey())
	anyLibrary := &schema{AnyOf: []*schema{libraryIs(m.LibraryOneTable), libraryIs(m.LibraryElectroDB), libraryIs(m.LibraryToolbox)}}
	root.AllOf = append(root.AllOf, &schema{
		If: &schema{Required: []string{m.KeyLibrary}, Properties: props(m.KeyLibrary, anyLibrary).Properties},
		Then: props(m.KeyEntities, &schema{AdditionalProperties: props(m.KeyMirror, absent(
			"a library reads each item of an entity as one of its records, under one key format: a mirror would be read as a second copy of the row; model the other direction as an entity of its own"))}),
	})
}

// noSortKey makes sk (an entity's and its mirror's) required when the
// table has a sort key, and absent when it has none (sort_key: "").
func noSortKey() *schema {
	const none = `the table has no sort key (table.sort_key is ""): remove sk, or declare the table's sort_key`
	withSK := withRequired(&schema{}, m.KeySK)
	return &schema{
		If: withRequired(props(m.KeyTable, is(m.KeySortKey, "")), m.KeyTable),
		Then: props(m.KeyEntities, &schema{AdditionalProperties: props(
			m.KeySK, emptyOrNull(none),
			m.KeyMirror, props(m.KeySK, emptyOrNull(none)))}),
		Else: props(m.KeyEntities, &schema{AdditionalProperties: &schema{
			AllOf: []*schema{withSK, {If: withRequired(props(m.KeyMirror, &schema{Type: "object"}), m.KeyMirror), Then: props(m.KeyMirror, withRequired(&schema{}, m.KeySK))}},
		}}),
	}
}

func library(s *schema) {
	enum(prop(s, m.KeyName), []any{m.LibraryOneTable, m.LibraryElectroDB, m.LibraryToolbox},
		"dynamodb-onetable.", "ElectroDB.", "dynamodb-toolbox, version 1 and later.")
	for _, k := range []string{m.KeyService, m.KeyVersion} {
		p := prop(s, k)
		p.Pattern = `^[^#$]*$`
		extra(p, "patternErrorMessage", electroSepMessage)
	}
	// A version may be written as a number (version: 2).
	types(prop(s, m.KeyVersion), "string", "integer", "null")
	prop(s, m.KeyTimestamps).Default = true

	// Settings without a name.
	s.If = props(m.KeyService, emptyOrNull(""), m.KeyVersion, emptyOrNull(""),
		m.KeyCreated, emptyOrNull(""), m.KeyModified, emptyOrNull(""), m.KeyTimestamps, &schema{Type: "null"})
	s.Else = props(m.KeyName, msg(&schema{Type: "string"}, "missing: expected the library, one of onetable, electrodb, dynamodb-toolbox"))
	s.Else.Required = []string{m.KeyName}

	// Each setting belongs to one library.
	s.AllOf = []*schema{
		{If: libraryIs(m.LibraryElectroDB), Else: props(
			m.KeyService, emptyOrNull("service is a setting of library electrodb"),
			m.KeyVersion, emptyOrNull("version is a setting of library electrodb"))},
		{If: libraryIs(m.LibraryToolbox),
			Then: &schema{
				If: is(m.KeyTimestamps, false),
				Then: props(
					m.KeyCreated, emptyOrNull("timestamps: false writes no _ct and _md: remove created and modified"),
					m.KeyModified, emptyOrNull("timestamps: false writes no _ct and _md: remove created and modified")),
				Else: withRequired(props(m.KeyCreated, msg(&schema{Type: "string", MinLength: u(1)},
					"dynamodb-toolbox reads _ct and _md on every item: name the columns they come from, or set timestamps: false")), m.KeyCreated),
			},
			Else: props(
				m.KeyCreated, emptyOrNull("created is a setting of library dynamodb-toolbox"),
				m.KeyModified, emptyOrNull("modified is a setting of library dynamodb-toolbox"),
				m.KeyTimestamps, absent("timestamps is a setting of library dynamodb-toolbox")),
		},
	}
}

func withRequired(s *schema, keys ...string) *schema {
	s.Required = keys
	return s
}

// capacities bounds the throughput settings of a table or GSI.
func capacities(s *schema) {
	for _, k := range []string{m.KeyReadCapacity, m.KeyWriteCapacity} {
		count(prop(s, k), 0)
	}
	for _, k := range []string{m.KeyMaxReadRequestUnits, m.KeyMaxWriteRequestUnits} {
		count(prop(s, k), 1)
	}
}

// provisioned is what billing_mode PROVISIONED asks of a table or GSI.
func provisioned() *schema {
	s := props(
		m.KeyReadCapacity, msg(&schema{Type: "integer", Minimum: num(1)}, "billing_mode PROVISIONED needs read_capacity above 0"),
		m.KeyWriteCapacity, msg(&schema{Type: "integer", Minimum: num(1)}, "billing_mode PROVISIONED needs write_capacity above 0"),
		m.KeyMaxReadRequestUnits, absent(provisionedOnlyMax),
		m.KeyMaxWriteRequestUnits, absent(provisionedOnlyMax))
	s.Required = []string{m.KeyReadCapacity, m.KeyWriteCapacity}
	return s
}

// onDemand is what billing_mode PAY_PER_REQUEST asks of a table or GSI.
func onDemand() *schema {
	return props(
		m.KeyReadCapacity, msg(&schema{Enum: []any{0, nil}}, "read_capacity needs billing_mode PROVISIONED"),
		m.KeyWriteCapacity, msg(&schema{Enum: []any{0, nil}}, "write_capacity needs billing_mode PROVISIONED"))
}

func table(s *schema) {
	s.Required = []string{m.KeyName}
	name := prop(s, m.KeyName)
	name.Type, name.Ref = "", "#/$defs/tableName"
	prop(s, m.KeyPartitionKey).Default = m.DefaultPartitionKey
	prop(s, m.KeySortKey).Default = m.DefaultSortKey
	keyTypes(s)
	bm := prop(s, m.KeyBillingMode)
	enum(bm, []any{m.PayPerRequest, m.Provisioned},
		"On-demand: no capacities.",
		"Provisioned: read_capacity and write_capacity above 0 on the table and on every GSI.")
	bm.Default = m.PayPerRequest
	capacities(s)
	prop(s, m.KeyDeletionProtection).Default = false

	s.If = is(m.KeyBillingMode, m.Provisioned)
	s.Then = provisioned()
	s.Then.Properties.Set(m.KeyGSIs, &schema{Items: provisioned()})
	s.Else = onDemand()
	s.Else.Properties.Set(m.KeyGSIs, &schema{Items: onDemand()})
}

func gsi(s *schema) {
	s.Required = []string{m.KeyName}
	name := prop(s, m.KeyName)
	name.Type, name.Ref = "", "#/$defs/tableName"
	keyTypes(s)
	pks := prop(s, m.KeyPartitionKeys)
	pks.MinItems, pks.MaxItems = u(1), u(m.MaxKeyAttributes)
	prop(s, m.KeySortKeys).MaxItems = u(m.MaxKeyAttributes)
	pr := prop(s, m.KeyProjection)
	enum(pr, []any{m.ProjectAll, m.ProjectKeysOnly, m.ProjectInclude},
		"Every attribute.", "The table's and the index's key attributes only.", "The key attributes and non_key_attributes.")
	pr.Default = m.ProjectAll
	nonEmpty(prop(s, m.KeyNonKeyAttrs).Items)
	capacities(s)

	const bothKinds = "both partition_key/sort_key and partition_keys/sort_keys given: expected one kind of key"
	s.AllOf = []*schema{
		{
			If:   is(m.KeyProjection, m.ProjectInclude),
			Then: withRequired(props(m.KeyNonKeyAttrs, msg(&schema{Type: "array", MinItems: u(1)}, "projection INCLUDE needs at least one attribute")), m.KeyNonKeyAttrs),
			Else: props(m.KeyNonKeyAttrs, emptyList("non_key_attributes need projection INCLUDE")),
		},
		{
			If: &schema{AnyOf: []*schema{filledList(m.KeyPartitionKeys), filledList(m.KeySortKeys)}},
			Then: withRequired(props(
				m.KeyPartitionKeys, msg(&schema{Type: "array", MinItems: u(1)}, "sort_keys need partition_keys: expected the index's partition key attributes"),
				m.KeyPartitionKey, emptyString(bothKinds),
				m.KeySortKey, emptyString(bothKinds)), m.KeyPartitionKeys),
			Else: withRequired(props(m.KeyPartitionKey, msg(&schema{Type: "string", MinLength: u(1)}, "missing: expected the index's partition key attribute name")), m.KeyPartitionKey),
		},
	}
}

// keyTypes makes the partition_key_type and sort_key_type of a table or a
// GSI one of S (the default), N and B.
func keyTypes(s *schema) {
	for _, k := range []string{m.KeyPartitionKeyType, m.KeySortKeyType} {
		enum(prop(s, k), []any{m.TypeString, m.TypeNumber, m.TypeBinary}, "String (the default).",
			"Number: a template of one placeholder of a number column, or a literal number.", "Binary: a template of one placeholder of a bytea column.")
		prop(s, k).Default = m.TypeString
	}
}

func keyAttribute(s *schema) {
	s.Required = []string{m.KeyName, m.KeyType}
	nonEmpty(prop(s, m.KeyName))
	enum(prop(s, m.KeyType), []any{m.TypeString, m.TypeNumber, m.TypeBinary}, "String.", "Number.", "Binary.")
	// Always given: no null.
	prop(s, m.KeyType).Enum = []any{m.TypeString, m.TypeNumber, m.TypeBinary}
}

func warmThroughput(s *schema) {
	types(s, "object", "null")
	for _, k := range []string{m.KeyReadUnitsPerSecond, m.KeyWriteUnitsPerSecond} {
		count(prop(s, k), 1)
		s.AnyOf = append(s.AnyOf, withRequired(props(k, &schema{Type: "integer"}), k))
	}
}

func pointInTimeRecovery(s *schema) {
	types(s, "object", "null")
	prop(s, m.KeyEnabled).Default = false
	days := prop(s, m.KeyRecoveryPeriodInDays)
	days.Minimum, days.Maximum = num(m.MinRecoveryPeriodDays), num(m.MaxRecoveryPeriodDays)
	s.If = withRequired(props(m.KeyRecoveryPeriodInDays, &schema{Type: "integer"}), m.KeyRecoveryPeriodInDays)
	s.Then = withRequired(props(m.KeyEnabled, msg(&schema{Const: true}, "a recovery period needs enabled: true")), m.KeyEnabled)
}

// keyTemplate makes a string property a key template.
func keyTemplate(s *schema, required bool) {
	s.Ref = "#/$defs/template"
	if required {
		s.MinLength = u(1)
	} else {
		s.Type = ""
	}
}

func entity(s *schema) {
	s.Required = []string{m.KeySource, m.KeyPK} // sk: see noSortKey
	prop(s, m.KeySource).Ref = "#/$defs/entitySource"
	keyTemplate(prop(s, m.KeyPK), true)
	prop(s, m.KeyPK).Examples = []any{"CUSTOMER#${customer_id}"}
	keyTemplate(prop(s, m.KeySK), true)
	prop(s, m.KeySK).Examples = []any{"ORDER#${order_id}"}
	ix := prop(s, m.KeyIndexes)
	ix.MaxProperties = u(m.MaxMappingKeys)
	ix.PropertyNames = extra(&schema{Pattern: tableNamePattern}, "patternErrorMessage", gsiNamePatternMessage)
	for _, k := range []string{m.KeyEmbed, m.KeyAggregates, m.KeyIDs} {
		names(prop(s, k))
	}
}

// sources defines the Source of each context: an entity's (a table with
// its schema, or a query), a child's (the same, schema allowed with a
// query too) and a parent's (a table).
func sources(defs jsonschema.Definitions) {
	exactlyOne := func(then *schema) *schema {
		return &schema{
			Ref:  "#/$defs/source",
			If:   filledString(m.KeyQuery),
			Then: then,
			Else: withRequired(props(m.KeySourceTbl, msg(&schema{Type: "string", MinLength: u(1)}, "expected source.table or source.query")), m.KeySourceTbl),
		}
	}
	bothGiven := emptyString("both table and query given: expected exactly one")
	defs["entitySource"] = exactlyOne(props(m.KeySourceTbl, bothGiven,
		m.KeySchema, emptyString("schema applies to source.table only; qualify names inside the query instead")))
	defs["joinSource"] = exactlyOne(props(m.KeySourceTbl, bothGiven))
	ts := props(m.KeySourceTbl, &schema{Type: "string", MinLength: u(1)},
		m.KeyQuery, emptyString("expected source.table: the join must be checked against the table's unique keys"))
	ts.Ref, ts.Required = "#/$defs/source", []string{m.KeySourceTbl}
	defs["tableSource"] = ts
}

func indexKeys(s *schema) {
	types(s, "object", "null")
	keyTemplate(prop(s, m.KeyPK), false)
	keyTemplate(prop(s, m.KeySK), false)
	prop(s, m.KeySparse).Default = false
}

func attributes(s *schema) {
	types(s, "object", "null")
	for _, k := range []string{m.KeySelect, m.KeyExclude, m.KeySets} {
		nonEmpty(prop(s, k).Items)
	}
	prop(s, m.KeySets).UniqueItems = true
	rn := prop(s, m.KeyRename)
	names(rn)
	nonEmpty(rn.AdditionalProperties)
}

func join(s *schema) {
	names(s)
	s.MinProperties = u(1)
	nonEmpty(s.AdditionalProperties)
}

func embed(s *schema) {
	s.Required = []string{m.KeySource, m.KeyJoin}
	prop(s, m.KeySource).Ref = "#/$defs/joinSource"
	as := prop(s, m.KeyAs)
	enum(as, []any{m.EmbedList, m.EmbedMap, m.EmbedSet},
		"An L of M, in order_by order.",
		"An M of M keyed by the key column; a key twice rejects the row.",
		"An SS, NS or BS of the one selected column's values.")
	as.Default = m.EmbedList
	items := prop(s, m.KeyOrderBy).Items
	items.Pattern, items.Comments = orderPattern, orderComment
	extra(items, "patternErrorMessage", "Expected a column, optionally followed by ASC or DESC.")
	mi := prop(s, m.KeyMaxItems)
	count(mi, 0)
	mi.Default = 0

	set := props(
		m.KeySelect, msg(&schema{Type: "array", MinItems: u(1), MaxItems: u(1)}, "as: set needs exactly one child column in select, whose values make the set"),
		m.KeyExclude, emptyList("exclude does not apply to as: set"),
		m.KeyRename, msg(&schema{MaxProperties: u(0)}, "rename does not apply to as: set"),
		m.KeySets, emptyList("sets does not apply to as: set"))
	set.Type, set.Required = "object", []string{m.KeySelect}
	s.AllOf = []*schema{
		{
			If:   is(m.KeyAs, m.EmbedMap),
			Then: withRequired(props(m.KeyKey, msg(&schema{Type: "string", MinLength: u(1)}, "as: map needs the child column whose value keys the map")), m.KeyKey),
			Else: props(m.KeyKey, emptyString("key applies to as: map only")),
		},
		{
			If: is(m.KeyAs, m.EmbedSet),
			Then: withRequired(props(
				m.KeyOrderBy, emptyList("a set has no order: remove order_by (as: set)"),
				m.KeyAttributes, set), m.KeyAttributes),
		},
	}
}

func duplicate(s *schema) {
	s.Required = []string{m.KeySource, m.KeyJoin, m.KeyAttributes}
	prop(s, m.KeySource).Ref = "#/$defs/tableSource"
	// Select is required: copying a whole parent is rarely meant.
	a := prop(s, m.KeyAttributes)
	a.Type, a.Required = "object", []string{m.KeySelect}
	a.Properties = props(m.KeySelect, &schema{Type: "array", MinItems: u(1)}).Properties
}

func aggregate(s *schema) {
	s.Required = []string{m.KeyFunction, m.KeySource, m.KeyJoin}
	enum(prop(s, m.KeyFunction), []any{m.AggCount, m.AggSum, m.AggMin, m.AggMax})
	prop(s, m.KeyFunction).Enum = []any{m.AggCount, m.AggSum, m.AggMin, m.AggMax} // required: no null
	prop(s, m.KeySource).Ref = "#/$defs/joinSource"
	s.If = props(m.KeyFunction, &schema{Const: m.AggCount})
	s.Then = props(m.KeyColumn, emptyString("count counts child rows: remove column"))
	s.Else = withRequired(props(m.KeyColumn, msg(&schema{Type: "string", MinLength: u(1)}, "sum, min and max need the child column")), m.KeyColumn)
}

func stableID(s *schema) {
	s.Required = []string{m.KeyKind, m.KeyTime, m.KeyFrom}
	prop(s, m.KeyKind).Type, prop(s, m.KeyKind).Enum = "", []any{m.IDKSUID, m.IDULID}
	nonEmpty(prop(s, m.KeyTime))
	from := prop(s, m.KeyFrom)
	from.MinItems = u(1)
	nonEmpty(from.Items)
}

func mirror(s *schema) {
	types(s, "object", "null")
	s.Required = []string{m.KeyPK} // sk: see noSortKey
	keyTemplate(prop(s, m.KeyPK), true)
	keyTemplate(prop(s, m.KeySK), true)
}

func accessPattern(s *schema) {
	s.Required = []string{m.KeyKeyCondition}
	ix := prop(s, m.KeyIndex)
	ix.Pattern = `^(?:` + tableNamePattern[1:len(tableNamePattern)-1] + `)?$`
	extra(ix, "patternErrorMessage", gsiNamePatternMessage)
	kc := prop(s, m.KeyKeyCondition)
	kc.Examples = []any{"PK = CUSTOMER#${customer_id}", "GSI1PK = ORG#${org_id} AND begins_with(GSI1SK, TICKET#)"}
	kc.Pattern, kc.Comments = keyConditionPattern, keyConditionComment
	extra(kc, "patternErrorMessage", `Expected "PK = TEMPLATE", optionally followed by "AND" and one of SK = T, SK < T, SK <= T, SK > T, SK >= T, SK BETWEEN T AND T, begins_with(SK, T).`)
	prop(s, m.KeyScanForward).Default = true
}
