package draft

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// DesignError is one mistake in a design file: Path is where, as a JSON
// path into the file (tables[0].entities.Customer.fields[2].type), Msg
// what is wrong there and what is expected.
type DesignError struct {
	Path, Msg string
}

func (e DesignError) Error() string { return e.Path + ": " + e.Msg }

// DesignErrors are every mistake of one design file, in path order
// (sortErrors): the same file gives the same list on every run.
type DesignErrors []DesignError

func (es DesignErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// The values the format allows, as the MCP server's schema_definitions.py
// lists them.
var (
	fieldTypes      = []string{"string", "integer", "decimal", "boolean", "array", "object", "uuid"}
	parameterTypes  = append(slices.Clone(fieldTypes), "entity")
	operations      = []string{"GetItem", "PutItem", "DeleteItem", "Query", "Scan", "UpdateItem", "BatchGetItem", "BatchWriteItem"}
	returnTypes     = []string{"single_entity", "entity_list", "success_flag", "mixed_data", "void"}
	projections     = []string{"ALL", "KEYS_ONLY", "INCLUDE"}
	filterOperators = []string{"=", "<>", "<", "<=", ">", ">=", "between", "in"}
	filterFunctions = []string{"contains", "begins_with", "attribute_exists", "attribute_not_exists", "size"}
	crossOperations = []string{"TransactWrite", "TransactGet"}
	crossReturns    = []string{"boolean", "object", "array"}
)

// rangeConditions are the range conditions of the format, with how many
// range values each takes.
var rangeConditions = map[string]int{"begins_with": 1, "between": 2, ">": 1, "<": 1, ">=": 1, "<=": 1}

// maxKeyAttributes is the most attributes a multi-attribute GSI key has.
const maxKeyAttributes = 4

// validator collects the mistakes of one design file.
type validator struct {
	errs DesignErrors
	// entities are the entity names of the tables read so far (an entity
	// parameter may name one of them), fieldTypes every field's type by
	// name (the first declared), patternIDs the pattern ids seen.
	entities   map[string]bool
	fieldType  map[string]string
	patternIDs map[int]bool
	tables     map[string]*jsonObject
}

func (v *validator) add(path, format string, args ...any) {
	v.errs = append(v.errs, DesignError{Path: path, Msg: fmt.Sprintf(format, args...)})
}

// validateMCPDesign checks a design file's tree (decodeOrdered) against
// every rule of the MCP server's validators (repo_generation_tool/core/
// *_validator.py), and its own: a gsi_list inside table_config (which the
// server's code generator ignores), a key written twice in one object, a
// non-string table sort_key, and template placeholders that are malformed
// or no field. Every mistake is reported, sorted by path.
func validateMCPDesign(root any) DesignErrors {
	v := &validator{entities: map[string]bool{}, fieldType: map[string]string{}, patternIDs: map[int]bool{}, tables: map[string]*jsonObject{}}
	v.dups(root, "")
	doc, ok := root.(*jsonObject)
	if !ok {
		v.add("root", "a design is a JSON object with \"tables\", not %s", jsonKind(root))
		return v.errs
	}
	v.required(doc, "root", "tables")
	v.collectFieldTypes(doc)
	if t, ok := doc.get("tables"); ok {
		v.tablesOf(t)
	}
	if x, ok := doc.get("cross_table_access_patterns"); ok {
		v.crossTable(x)
	}
	sortErrors(v.errs)
	return slices.CompactFunc(v.errs, func(a, b DesignError) bool { return a == b })
}

// dups reports every key written twice in one object of the tree.
func (v *validator) dups(n any, path string) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch x := n.(type) {
	case *jsonObject:
		for _, k := range x.Dups {
			v.add(join(k), "%q is written twice in one object: JSON readers keep only one of them", k)
		}
		for _, k := range x.Keys {
			v.dups(x.Vals[k], join(k))
		}
	case []any:
		for i, e := range x {
			v.dups(e, fmt.Sprintf("%s[%d]", path, i))
		}
	}
}

// required reports each of keys that object o lacks.
func (v *validator) required(o *jsonObject, path string, keys ...string) {
	for _, k := range keys {
		if _, ok := o.get(k); !ok {
			v.add(path+"."+k, "missing required field %q", k)
		}
	}
}

// enum reports a value of o[key] that is not a string of allowed.
func (v *validator) enum(o *jsonObject, path, key string, allowed []string) {
	x, ok := o.get(key)
	if !ok {
		return
	}
	s, isStr := str(x)
	switch {
	case !isStr:
		v.add(path+"."+key, "%s must be a string, got %s", key, jsonKind(x))
	case !slices.Contains(allowed, s):
		v.add(path+"."+key, "invalid %s %q: expected %s", key, s, orList(allowed))
	}
}

// each checks that x is an array (non-empty if empty, the error, is set),
// calls f with each object of it and reports other elements; false if not.
func (v *validator) each(x any, path, noun, empty string, f func(o *jsonObject, path string)) bool {
	list, ok := x.([]any)
	switch {
	case !ok:
		v.add(path, "%s must be an array, got %s", path[strings.LastIndex(path, ".")+1:], jsonKind(x))
		return false
	case len(list) == 0 && empty != "":
		v.add(path, "%s", empty)
		return false
	}
	for i, e := range list {
		p := fmt.Sprintf("%s[%d]", path, i)
		if o, ok := e.(*jsonObject); ok {
			f(o, p)
		} else {
			v.add(p, "%s must be an object, got %s", noun, jsonKind(e))
		}
	}
	return true
}

// requiredAll reports in one error the keys o lacks; false if any.
func (v *validator) requiredAll(o *jsonObject, path, what string, keys ...string) bool {
	var missing []string
	for _, k := range keys {
		if _, ok := o.get(k); !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		v.add(path, "%s missing required fields: %s", what, strings.Join(missing, ", "))
	}
	return len(missing) == 0
}

// stringField reports a value of o[key] that is not a string.
func (v *validator) stringField(o *jsonObject, path, key string) {
	if x, ok := o.get(key); ok {
		if _, isStr := str(x); !isStr {
			v.add(path+"."+key, "%s must be a string, got %s", key, jsonKind(x))
		}
	}
}

func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// collectFieldTypes records each field's type by name, the first
// declared, for the cross-table parameters' check.
func (v *validator) collectFieldTypes(doc *jsonObject) {
	for _, to := range objects(doc.Vals["tables"]) {
		es, _ := to.Vals["entities"].(*jsonObject)
		if es == nil {
			continue
		}
		for _, n := range es.Keys {
			eo, _ := es.Vals[n].(*jsonObject)
			if eo == nil {
				continue
			}
			for _, fo := range objects(eo.Vals["fields"]) {
				name, _ := str(fo.Vals["name"])
				typ, _ := str(fo.Vals["type"])
				if _, seen := v.fieldType[name]; name != "" && typ != "" && !seen {
					v.fieldType[name] = typ
				}
			}
		}
	}
}

// tablesOf checks the tables, after registering their names: a
// cross-table pattern or an entity parameter may name any of them.
func (v *validator) tablesOf(x any) {
	ts, _ := x.([]any)
	for i, t := range ts {
		to, _ := t.(*jsonObject)
		if to == nil {
			continue
		}
		if c, _ := to.Vals["table_config"].(*jsonObject); c != nil {
			if n, _ := str(c.Vals["table_name"]); n != "" {
				if v.tables[n] != nil {
					v.add(fmt.Sprintf("tables[%d].table_config.table_name", i), "duplicate table name %q: table names are unique", n)
				} else {
					v.tables[n] = to
				}
			}
		}
	}
	v.each(x, "tables", "a table", "tables cannot be empty: add at least one table", v.table)
}

func (v *validator) table(to *jsonObject, path string) {
	v.required(to, path, "table_config", "entities")
	gsis := v.gsiList(to, path)
	if c, ok := to.get("table_config"); ok {
		v.tableConfig(c, path+".table_config")
	}
	if es, ok := to.get("entities"); ok {
		v.entitiesOf(es, path+".entities", gsis)
	}
	v.included(to, path, gsis)
}

func (v *validator) tableConfig(c any, path string) {
	co, ok := c.(*jsonObject)
	if !ok {
		v.add(path, "table_config must be an object, got %s", jsonKind(c))
		return
	}
	v.required(co, path, "table_name", "partition_key")
	for _, k := range []string{"table_name", "partition_key", "sort_key"} {
		v.stringField(co, path, k)
	}
	if _, ok := co.get("gsi_list"); ok {
		v.add(path+".gsi_list", "gsi_list belongs to the table, beside table_config and entities, not inside table_config (the MCP server's code generator does not read it there)")
	}
}

// gsiDef is a GSI of gsi_list as the checks need it: its key attributes
// (nil when malformed), whether each key is a list (a multi-attribute
// key), its projection and included attributes.
type gsiDef struct {
	name               string
	pk, sk             []string
	pkList, skList     bool
	hasSK, ok          bool
	projection         string
	included           []string
	includedWellFormed bool
}

// gsiList checks the table's gsi_list and returns its GSIs by name.
func (v *validator) gsiList(to *jsonObject, path string) map[string]*gsiDef {
	out := map[string]*gsiDef{}
	x, ok := to.get("gsi_list")
	if !ok {
		return out
	}
	v.each(x, path+".gsi_list", "a GSI definition", "", func(gobj *jsonObject, gp string) {
		v.requiredAll(gobj, gp, "GSI definition", "name", "partition_key")
		v.stringField(gobj, gp, "name")
		name, _ := str(gobj.Vals["name"])
		d := &gsiDef{name: name, ok: true, projection: "ALL"}
		if _, ok := gobj.get("partition_key"); ok {
			d.pk, d.pkList = v.keyAttrs(gobj, gp, "partition_key")
		}
		d.ok = d.pk != nil
		if _, ok := gobj.get("sort_key"); ok && gobj.Vals["sort_key"] != nil {
			d.hasSK = true
			d.sk, d.skList = v.keyAttrs(gobj, gp, "sort_key")
			d.ok = d.ok && d.sk != nil
		}
		v.projection(gobj, gp, name, d)
		switch {
		case name == "":
		case out[name] != nil:
			v.add(gp+".name", "duplicate GSI name %q in the table", name)
		default:
			out[name] = d
		}
	})
	return out
}

// keyAttrs checks a GSI's partition_key or sort_key: a non-empty string,
// or a list of 1 to 4 of them (a multi-attribute key). It returns the
// attributes (nil when malformed) and whether the key is a list.
func (v *validator) keyAttrs(g *jsonObject, path, key string) ([]string, bool) {
	p := path + "." + key
	switch x := g.Vals[key].(type) {
	case string:
		if strings.TrimSpace(x) == "" {
			v.add(p, "%s cannot be empty", key)
			return nil, false
		}
		return []string{x}, false
	case []any:
		switch {
		case len(x) == 0:
			v.add(p, "%s array cannot be empty", key)
			return nil, true
		case len(x) > maxKeyAttributes:
			v.add(p, "%s array cannot have more than %d attributes (found %d)", key, maxKeyAttributes, len(x))
			return nil, true
		}
		var out []string
		for i, a := range x {
			s, ok := str(a)
			switch {
			case !ok:
				v.add(fmt.Sprintf("%s[%d]", p, i), "attribute at index %d must be a string, got %s", i, jsonKind(a))
				return nil, true
			case strings.TrimSpace(s) == "":
				v.add(fmt.Sprintf("%s[%d]", p, i), "attribute at index %d cannot be empty", i)
				return nil, true
			}
			out = append(out, s)
		}
		return out, true
	case nil:
		v.add(p, "missing required %s", key)
	default:
		v.add(p, "%s must be a string or an array of strings, got %s", key, jsonKind(x))
	}
	return nil, false
}

// projection checks a GSI's projection and included_attributes.
func (v *validator) projection(g *jsonObject, path, name string, d *gsiDef) {
	if x, ok := g.get("projection"); ok {
		s, _ := str(x)
		if !slices.Contains(projections, s) {
			v.add(path+".projection", "GSI %q has invalid projection %v: expected %s", name, x, orList(projections))
			return
		}
		d.projection = s
	}
	inc, has := g.get("included_attributes")
	switch {
	case d.projection == "INCLUDE" && !has:
		v.add(path+".included_attributes", "GSI %q has projection INCLUDE but no included_attributes", name)
	case d.projection == "INCLUDE":
		list, ok := inc.([]any)
		switch {
		case !ok:
			v.add(path+".included_attributes", "GSI %q included_attributes must be an array, got %s", name, jsonKind(inc))
			return
		case len(list) == 0:
			v.add(path+".included_attributes", "GSI %q included_attributes cannot be empty", name)
			return
		}
		d.includedWellFormed = true
		for i, a := range list {
			s, ok := str(a)
			if !ok || s == "" {
				v.add(fmt.Sprintf("%s.included_attributes[%d]", path, i), "an included attribute is a non-empty string, got %s", jsonKind(a))
				d.includedWellFormed = false
				continue
			}
			d.included = append(d.included, s)
		}
	case has:
		v.add(path+".included_attributes", "GSI %q has projection %s but included_attributes (only INCLUDE takes them)", name, d.projection)
	}
}

// included checks each INCLUDE GSI's attributes: none a key attribute of
// the table or the index (those are projected anyway), each a field of
// an entity that maps into the GSI.
func (v *validator) included(to *jsonObject, path string, gsis map[string]*gsiDef) {
	keys := map[string]bool{}
	if c, _ := to.Vals["table_config"].(*jsonObject); c != nil {
		for _, k := range []string{"partition_key", "sort_key"} {
			if s, _ := str(c.Vals[k]); s != "" {
				keys[s] = true
			}
		}
	}
	es, _ := to.Vals["entities"].(*jsonObject)
	for _, name := range slices.Sorted(maps.Keys(gsis)) {
		d := gsis[name]
		if d.projection != "INCLUDE" || !d.includedWellFormed {
			continue
		}
		idx := maps.Clone(keys)
		for _, k := range slices.Concat(d.pk, d.sk) {
			idx[k] = true
		}
		var redundant []string
		for _, a := range d.included {
			if idx[a] {
				redundant = append(redundant, a)
			}
		}
		if len(redundant) > 0 {
			slices.Sort(redundant)
			v.add(path+".gsi_list", "GSI %q includes key attributes in included_attributes: %s (they are projected anyway)", name, strings.Join(redundant, ", "))
		}
		fields := map[string]bool{}
		if es != nil {
			for _, en := range es.Keys {
				eo, _ := es.Vals[en].(*jsonObject)
				if eo == nil || !mapsInto(eo, name) {
					continue
				}
				for _, fo := range objects(eo.Vals["fields"]) {
					if n, ok := str(fo.Vals["name"]); ok {
						fields[n] = true
					}
				}
			}
		}
		for _, a := range d.included {
			if !fields[a] && !idx[a] {
				v.add(path+".gsi_list", "GSI %q includes attribute %q, which no entity mapped into it has as a field", name, a)
			}
		}
	}
}

// mapsInto reports whether entity eo has a gsi_mapping for GSI name.
func mapsInto(eo *jsonObject, name string) bool {
	return slices.ContainsFunc(objects(eo.Vals["gsi_mappings"]), func(mo *jsonObject) bool {
		n, _ := str(mo.Vals["name"])
		return n == name
	})
}

func (v *validator) entitiesOf(x any, path string, gsis map[string]*gsiDef) {
	es, ok := x.(*jsonObject)
	switch {
	case !ok:
		v.add(path, "entities must be an object of entity name to entity, got %s", jsonKind(x))
		return
	case len(es.Keys) == 0:
		v.add(path, "entities cannot be empty: add at least one entity")
		return
	}
	for _, n := range es.Keys {
		if v.entities[n] {
			v.add(path+"."+n, "duplicate entity name %q across tables: entity names are unique", n)
		}
		v.entities[n] = true
	}
	for _, n := range es.Keys {
		v.entity(n, es.Vals[n], path+"."+n, gsis)
	}
}

// entityInfo is what an entity's patterns are checked against.
type entityInfo struct {
	name   string
	fields map[string]bool
	// keyFields are the fields of its table pk_template and sk_template.
	keyFields map[string]bool
}

func (v *validator) entity(name string, x any, path string, gsis map[string]*gsiDef) {
	eo, ok := x.(*jsonObject)
	if !ok {
		v.add(path, "entity %q must be an object, got %s", name, jsonKind(x))
		return
	}
	v.required(eo, path, "entity_type", "pk_template", "fields")
	v.stringField(eo, path, "entity_type")
	info := &entityInfo{name: name, fields: map[string]bool{}, keyFields: map[string]bool{}}
	fieldsOK := true
	if fs, ok := eo.get("fields"); ok {
		fieldsOK = v.fields(fs, path+".fields", info)
	}
	for _, k := range []string{"pk_template", "sk_template"} {
		t, ok := eo.get(k)
		if !ok || t == nil && k == "sk_template" {
			continue
		}
		s, isStr := str(t)
		if !isStr {
			v.add(path+"."+k, "%s must be a string, got %s", k, jsonKind(t))
			continue
		}
		v.template(s, path+"."+k, info, fieldsOK)
		for _, f := range templateFields(s) {
			info.keyFields[f] = true
		}
	}
	if ms, ok := eo.get("gsi_mappings"); ok && fieldsOK {
		v.gsiMappings(ms, path+".gsi_mappings", info, gsis)
	}
	if ps, ok := eo.get("access_patterns"); ok {
		v.patterns(ps, path+".access_patterns", info, gsis)
	}
}

// fields checks an entity's fields, recording their names; it returns
// whether the list is well formed enough to check templates against.
func (v *validator) fields(x any, path string, info *entityInfo) bool {
	return v.each(x, path, "a field", "fields cannot be empty: add at least one field", func(fo *jsonObject, fp string) {
		v.required(fo, fp, "name", "type", "required")
		if n, ok := fo.get("name"); ok {
			s, isStr := str(n)
			switch {
			case !isStr || s == "":
				v.add(fp+".name", "a field's name is a non-empty string, got %s", jsonKind(n))
			case info.fields[s]:
				v.add(fp+".name", "duplicate field name %q: field names are unique within an entity", s)
			default:
				info.fields[s] = true
			}
		}
		v.enum(fo, fp, "type", fieldTypes)
		if t, _ := str(fo.Vals["type"]); t == "array" {
			if _, ok := fo.get("item_type"); !ok {
				v.add(fp+".item_type", "array fields must specify item_type")
			}
		}
		if r, ok := fo.get("required"); ok {
			if _, isBool := r.(bool); !isBool {
				v.add(fp+".required", "required must be true or false, got %s", jsonKind(r))
			}
		}
	})
}

// templateSyntax checks one key template's text: not empty, braces
// balanced, no empty {} and placeholder names of letters, digits and '_'.
func templateSyntax(s string) []string {
	var out []string
	if strings.TrimSpace(s) == "" {
		return []string{"template cannot be empty"}
	}
	if o, c := strings.Count(s, "{"), strings.Count(s, "}"); o != c {
		out = append(out, fmt.Sprintf("unmatched braces in template %q: %d opening, %d closing", s, o, c))
	}
	if emptyPlaceholder.MatchString(s) {
		out = append(out, fmt.Sprintf("template %q contains empty parameter placeholders {}", s))
	}
	var bad []string
	for _, m := range badPlaceholder.FindAllStringSubmatch(s, -1) {
		if n, _, _ := strings.Cut(m[1], ":"); !placeholderName.MatchString(n) {
			bad = append(bad, m[1])
		}
	}
	if len(bad) > 0 {
		out = append(out, fmt.Sprintf("template %q contains invalid parameter names: %s (letters, digits and '_' only)", s, strings.Join(bad, ", ")))
	}
	return out
}

var (
	emptyPlaceholder = regexp.MustCompile(`\{\s*\}`)
	badPlaceholder   = regexp.MustCompile(`\{([^{}]*[^\w{}][^{}]*)\}`)
	placeholderName  = regexp.MustCompile(`^\w+$`)
)

// template checks a key template: its syntax and, when the entity's
// fields are known, that each placeholder names one.
func (v *validator) template(s, path string, info *entityInfo, fieldsKnown bool) {
	for _, m := range templateSyntax(s) {
		v.add(path, "%s", m)
	}
	if !fieldsKnown {
		return
	}
	for _, f := range templateFields(s) {
		if !info.fields[f] {
			v.add(path+"."+f, "template parameter %q is not a field of entity %s (its fields: %s)", f, info.name, strings.Join(slices.Sorted(maps.Keys(info.fields)), ", "))
		}
	}
}

// templates checks a GSI mapping's pk_template or sk_template: a string,
// or a list of 1 to 4 of them (for a multi-attribute key).
func (v *validator) templates(m *jsonObject, path, key string, info *entityInfo) {
	p := path + "." + key
	switch x := m.Vals[key].(type) {
	case string:
		v.template(x, p, info, true)
	case []any:
		switch {
		case len(x) == 0:
			v.add(p, "%s array cannot be empty", key)
			return
		case len(x) > maxKeyAttributes:
			v.add(p, "%s array cannot have more than %d templates (found %d)", key, maxKeyAttributes, len(x))
			return
		}
		for i, t := range x {
			s, ok := str(t)
			if !ok {
				v.add(fmt.Sprintf("%s[%d]", p, i), "template at index %d must be a string, got %s", i, jsonKind(t))
				continue
			}
			v.template(s, fmt.Sprintf("%s[%d]", p, i), info, true)
		}
	default:
		v.add(p, "%s must be a string or an array of strings, got %s", key, jsonKind(x))
	}
}

func (v *validator) gsiMappings(x any, path string, info *entityInfo, gsis map[string]*gsiDef) {
	v.each(x, path, "a GSI mapping", "", func(mo *jsonObject, mp string) {
		if !v.requiredAll(mo, mp, "GSI mapping", "name", "pk_template") {
			return
		}
		name, _ := str(mo.Vals["name"])
		d := gsis[name]
		if d == nil {
			v.add(mp+".name", "GSI %q is not in the table's gsi_list", name)
		}
		v.templates(mo, mp, "pk_template", info)
		sk, hasSK := mo.get("sk_template")
		if hasSK && sk != nil {
			v.templates(mo, mp, "sk_template", info)
		}
		if d == nil || !d.ok {
			return
		}
		v.keyMatch(mo, mp, "pk_template", "partition_key", name, d.pk, d.pkList)
		if d.hasSK && hasSK && sk != nil {
			v.keyMatch(mo, mp, "sk_template", "sort_key", name, d.sk, d.skList)
		}
		if !d.hasSK && hasSK && sk != nil {
			v.add(mp+".sk_template", "GSI %q has no sort_key, so a mapping into it has no sk_template", name)
		}
	})
}

// keyMatch checks that a mapping's template has the shape of the GSI's
// key: a string for a string, a list as long as a list.
func (v *validator) keyMatch(m *jsonObject, path, tkey, kkey, gsi string, attrs []string, isList bool) {
	kind := func(b bool) string {
		if b {
			return "array"
		}
		return "string"
	}
	t := m.Vals[tkey]
	tl, tIsList := t.([]any)
	switch {
	case tIsList != isList:
		v.add(path+"."+tkey, "%s type (%s) does not match %s type (%s) in GSI %q", tkey, kind(tIsList), kkey, kind(isList), gsi)
	case isList && len(tl) != len(attrs):
		v.add(path+"."+tkey, "%s array length (%d) does not match %s array length (%d) in GSI %q", tkey, len(tl), kkey, len(attrs), gsi)
	}
}

func (v *validator) patterns(x any, path string, info *entityInfo, gsis map[string]*gsiDef) {
	names := map[string]bool{}
	v.each(x, path, "an access pattern", "", func(po *jsonObject, pp string) { v.pattern(po, pp, info, gsis, names) })
}

func (v *validator) patternID(po *jsonObject, path string) {
	x, ok := po.get("pattern_id")
	if !ok {
		return
	}
	id, isInt := integer(x)
	switch {
	case !isInt:
		v.add(path+".pattern_id", "pattern_id must be an integer, got %s", jsonKind(x))
	case v.patternIDs[id]:
		v.add(path+".pattern_id", "duplicate pattern_id %d: pattern ids are unique across all tables and entities", id)
	default:
		v.patternIDs[id] = true
	}
}

func (v *validator) pattern(po *jsonObject, path string, info *entityInfo, gsis map[string]*gsiDef, names map[string]bool) {
	v.required(po, path, "pattern_id", "name", "description", "operation", "return_type")
	v.patternID(po, path)
	if n, ok := str(po.Vals["name"]); ok {
		if names[n] {
			v.add(path+".name", "duplicate pattern name %q in entity %s", n, info.name)
		}
		names[n] = true
	}
	v.enum(po, path, "operation", operations)
	v.enum(po, path, "return_type", returnTypes)
	params := v.parameters(po, path)
	op, _ := str(po.Vals["operation"])
	index, hasIndex := po.get("index_name")
	indexName, _ := str(index)
	if cr, ok := po.get("consistent_read"); ok {
		b, isBool := cr.(bool)
		switch {
		case !isBool:
			v.add(path+".consistent_read", "consistent_read must be true or false, got %s", jsonKind(cr))
		case b && hasIndex:
			v.add(path+".consistent_read", "consistent_read cannot be true for a GSI query: GSI reads are eventually consistent")
		}
	}
	var gsi *gsiDef
	if hasIndex && index != nil {
		gsi = gsis[indexName]
		if gsi == nil {
			v.add(path+".index_name", "access pattern reads GSI %q, which is not in the table's gsi_list", indexName)
		}
	}
	var filterParams map[string]bool
	if fe, ok := po.get("filter_expression"); ok {
		filterParams = v.filter(fe, path+".filter_expression", info, op)
	}
	if rc, ok := po.get("range_condition"); ok && rc != nil {
		v.rangeQuery(rc, path, op, params, filterParams, gsi)
	}
}

// parameters checks an access pattern's parameters and returns their
// names, in order.
func (v *validator) parameters(po *jsonObject, path string) []string {
	x, ok := po.get("parameters")
	if !ok {
		return nil
	}
	return v.parameterList(x, path+".parameters", false)
}

func (v *validator) parameterList(x any, path string, cross bool) []string {
	seen := map[string]bool{}
	var out []string
	v.each(x, path, "a parameter", "", func(po *jsonObject, pp string) {
		v.required(po, pp, "name", "type")
		name, _ := str(po.Vals["name"])
		if _, has := po.get("name"); has {
			if seen[name] {
				v.add(pp+".name", "duplicate parameter name %q", name)
			}
			seen[name] = true
			out = append(out, name)
		}
		v.enum(po, pp, "type", parameterTypes)
		typ, _ := str(po.Vals["type"])
		if typ == "entity" {
			et, has := po.get("entity_type")
			s, _ := str(et)
			switch {
			case !has:
				v.add(pp+".entity_type", "entity parameters must specify entity_type")
			case !v.entities[s]:
				v.add(pp+".entity_type", "unknown entity type %q: expected an entity of this table or one before it (%s)", s, strings.Join(slices.Sorted(maps.Keys(v.entities)), ", "))
			}
		}
		if cross && typ != "entity" && name != "" {
			if ft := v.fieldType[name]; ft != "" && ft != typ && slices.Contains(parameterTypes, typ) {
				v.add(pp+".type", "parameter %q type %q does not match field type %q", name, typ, ft)
			}
		}
	})
	return out
}

// rangeQuery checks a range_condition: one of the format's, on a Query,
// with the partition key's parameters, then equal values of at most all
// but one of a GSI sort key's leading attributes, then the range values
// (2 for between, else 1); a filter_expression's parameters aside.
func (v *validator) rangeQuery(rc any, path, op string, params []string, filterParams map[string]bool, gsi *gsiDef) {
	s, isStr := str(rc)
	n, known := rangeConditions[s]
	switch {
	case !isStr:
		v.add(path+".range_condition", "range_condition must be a string, got %s", jsonKind(rc))
		return
	case !known:
		v.add(path+".range_condition", "invalid range_condition %q: expected begins_with, between, >, <, >= or <=", s)
		return
	}
	if op != "Query" {
		v.add(path+".operation", "a range condition needs a Query, got %q", op)
	}
	if len(params) == 0 {
		v.add(path+".parameters", "an access pattern with a range_condition has parameters: the partition key's, then the range values")
		return
	}
	count := 0
	for _, p := range params {
		if !filterParams[p] {
			count++
		}
	}
	note := ""
	if len(filterParams) > 0 {
		note = " (not counting filter_expression parameters)"
	}
	pk, sk := 1, 0
	if gsi != nil && gsi.ok {
		pk = len(gsi.pk)
		sk = len(gsi.sk)
	}
	least, most := pk+n, pk+max(0, sk-1)+n
	switch {
	case count < least:
		v.add(path+".parameters", "range condition %q requires at least %d parameters (%d PK + %d range value(s))%s, got %d", s, least, pk, n, note, count)
	case gsi == nil && count > least:
		v.add(path+".parameters", "range condition %q requires exactly %d parameters (%d PK + %d range value(s))%s, got %d", s, least, pk, n, note, count)
	case gsi != nil && count > most:
		v.add(path+".parameters", "range condition %q allows at most %d parameters (%d PK + %d SK equality + %d range value(s))%s, got %d", s, most, pk, max(0, sk-1), n, note, count)
	}
}

// filter checks a filter_expression and returns the parameters its
// conditions use.
func (v *validator) filter(x any, path string, info *entityInfo, op string) map[string]bool {
	used := map[string]bool{}
	fo, ok := x.(*jsonObject)
	if !ok {
		v.add(path, "filter_expression must be an object, got %s", jsonKind(x))
		return used
	}
	cs, _ := fo.Vals["conditions"].([]any)
	for _, co := range objects(cs) {
		ps, _ := co.Vals["params"].([]any)
		for _, p := range append([]any{co.Vals["param"], co.Vals["param2"]}, ps...) {
			if s, _ := str(p); s != "" {
				used[s] = true
			}
		}
	}
	if op != "Query" && op != "Scan" {
		v.add(path, "filter expressions are only valid for Query and Scan operations, got %q", op)
		return used
	}
	if len(cs) == 0 {
		v.add(path+".conditions", "filter_expression.conditions must be a non-empty list")
		return used
	}
	if lo, ok := fo.get("logical_operator"); ok && lo != nil {
		if s, _ := str(lo); s != "AND" && s != "OR" {
			v.add(path+".logical_operator", "invalid logical_operator %v: expected AND or OR", lo)
		}
	}
	for i, c := range cs {
		v.condition(c, fmt.Sprintf("%s.conditions[%d]", path, i), info, op)
	}
	return used
}

func (v *validator) condition(c any, path string, info *entityInfo, op string) {
	co, ok := c.(*jsonObject)
	if !ok {
		v.add(path, "a filter condition must be an object, got %s", jsonKind(c))
		return
	}
	field, _ := str(co.Vals["field"])
	switch {
	case field == "":
		v.add(path+".field", "a filter condition has a non-empty string field")
		return
	case !info.fields[field]:
		v.add(path+".field", "field %q is not a field of entity %s", field, info.name)
		return
	case info.keyFields[field] && op == "Query":
		v.add(path+".field", "cannot filter on key attribute %q in a Query: put it in the key condition", field)
		return
	}
	operator, _ := str(co.Vals["operator"])
	function, _ := str(co.Vals["function"])
	switch {
	case operator != "" && function != "" && function != "size":
		v.add(path, "only one of 'operator' or 'function' is allowed (except for 'size' which requires both)")
	case operator == "" && function == "":
		v.add(path, "a filter condition has either 'operator' or 'function'")
	case function != "":
		v.function(co, path, function)
	default:
		v.operator(co, path, operator)
	}
}

func (v *validator) operator(co *jsonObject, path, operator string) {
	has := func(k string) bool { s, _ := str(co.Vals[k]); return s != "" }
	switch {
	case !slices.Contains(filterOperators, operator):
		v.add(path+".operator", "invalid operator %q: expected %s", operator, orList(filterOperators))
	case operator == "between":
		if !has("param") {
			v.add(path, "'between' operator requires 'param' field")
		}
		if !has("param2") {
			v.add(path, "'between' operator requires 'param2' field")
		}
	case operator == "in":
		if ps, _ := co.Vals["params"].([]any); len(ps) == 0 {
			v.add(path, "'in' operator requires a non-empty 'params' array")
		}
	case !has("param"):
		v.add(path, "'%s' operator requires 'param' field", operator)
	}
}

func (v *validator) function(co *jsonObject, path, function string) {
	switch {
	case !slices.Contains(filterFunctions, function):
		v.add(path+".function", "invalid function %q: expected %s", function, orList(filterFunctions))
	case function == "size":
		operator, _ := str(co.Vals["operator"])
		if operator == "" {
			v.add(path, "'size' function requires an 'operator' field")
			return
		}
		v.operator(co, path, operator)
	case function == "contains", function == "begins_with":
		if s, _ := str(co.Vals["param"]); s == "" {
			v.add(path, "'%s' function requires 'param' field", function)
		}
	}
}

// crossTable checks cross_table_access_patterns: transactions over
// entities of several tables.
func (v *validator) crossTable(x any) {
	v.each(x, "cross_table_access_patterns", "a cross-table pattern", "", func(po *jsonObject, pp string) {
		v.required(po, pp, "pattern_id", "name", "description", "operation", "entities_involved", "parameters", "return_type")
		v.patternID(po, pp)
		op, _ := str(po.Vals["operation"])
		if x, ok := po.get("operation"); ok && !slices.Contains(crossOperations, op) {
			v.add(pp+".operation", "invalid operation %v: expected %s", x, orList(crossOperations))
		}
		if x, ok := po.get("entities_involved"); ok {
			v.involved(x, pp+".entities_involved", op)
		}
		if x, ok := po.get("return_type"); ok {
			if s, _ := str(x); !slices.Contains(crossReturns, s) {
				v.add(pp+".return_type", "invalid return_type %v: expected %s", x, orList(crossReturns))
			}
		}
		if x, ok := po.get("parameters"); ok {
			v.parameterList(x, pp+".parameters", true)
		}
	})
}

func (v *validator) involved(x any, path, op string) {
	actions := map[string][]string{"TransactWrite": {"Put", "Update", "Delete", "ConditionCheck"}, "TransactGet": {"Get"}}[op]
	v.each(x, path, "an entity involvement", "entities_involved cannot be empty", func(eo *jsonObject, ep string) {
		v.required(eo, ep, "table", "entity", "action")
		if t, ok := eo.get("table"); ok {
			tn, _ := str(t)
			to := v.tables[tn]
			if to == nil {
				v.add(ep+".table", "table %v is not in the design", t)
			} else if en, ok := eo.get("entity"); ok {
				es, _ := to.Vals["entities"].(*jsonObject)
				name, _ := str(en)
				if _, has := es.get(name); es == nil || !has {
					v.add(ep+".entity", "entity %v is not in table %s", en, tn)
				}
			}
		}
		if a, ok := eo.get("action"); ok && op != "" {
			if s, _ := str(a); !slices.Contains(actions, s) {
				v.add(ep+".action", "invalid action %v for operation %q: expected %s", a, op, cmp.Or(orList(actions), "none (the operation is not TransactWrite or TransactGet)"))
			}
		}
	})
}

// sortErrors orders errors by path, read as a sequence of names and
// indexes (tables[2] before tables[10]), then by message.
func sortErrors(es DesignErrors) {
	slices.SortStableFunc(es, func(a, b DesignError) int {
		return cmp.Or(comparePaths(a.Path, b.Path), strings.Compare(a.Msg, b.Msg))
	})
}

var pathToken = regexp.MustCompile(`\[\d+\]|[^.\[]+`)

func comparePaths(a, b string) int {
	ta, tb := pathToken.FindAllString(a, -1), pathToken.FindAllString(b, -1)
	for i := 0; i < len(ta) && i < len(tb); i++ {
		x, y := ta[i], tb[i]
		if x == y {
			continue
		}
		nx, ex := strconv.Atoi(strings.Trim(x, "[]"))
		ny, ey := strconv.Atoi(strings.Trim(y, "[]"))
		if ex == nil && ey == nil && strings.HasPrefix(x, "[") && strings.HasPrefix(y, "[") {
			return cmp.Compare(nx, ny)
		}
		return strings.Compare(x, y)
	}
	return cmp.Compare(len(ta), len(tb))
}
