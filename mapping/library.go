package mapping

import (
	"fmt"
	"slices"
	"strings"
)

// Library presets make the table readable by the application's single-table
// library: its attributes are written on every item and key templates are held
// to what it renders. OneTable and ElectroDB re-render keys from item
// attributes, so each key placeholder must be a written value
// (transform.Compile checks). ElectroDB templates are checked, not translated.
// docs/mapping.md, "Library presets".
type Library struct {
	// Name is onetable (_type), electrodb (__edb_e__, __edb_v__, default key
	// format) or dynamodb-toolbox (_et, _ct, _md); empty for none.
	Name string `yaml:"name"`
	// Service, for electrodb, is the model's service; default the table name.
	// Without '#' and '$'.
	Service string `yaml:"service"`
	// Version, for electrodb, is the model's version (__edb_v__). Default "1".
	// Without '#' and '$'.
	Version string `yaml:"version"`
	// Created, for dynamodb-toolbox, is the column written as _ct (toISOString:
	// UTC, milliseconds); every source needs it and a NULL rejects the row.
	// Required unless timestamps: false.
	Created string `yaml:"created"`
	// Modified, for dynamodb-toolbox, is the column written as _md; absent or
	// NULL, the created time.
	Modified string `yaml:"modified"`
	// Timestamps false, for dynamodb-toolbox, writes no _ct and _md. Default
	// true.
	Timestamps *bool `yaml:"timestamps"`
}

// UnmarshalYAML reads a library as a name ("library: onetable") or a mapping.
func (l *Library) UnmarshalYAML(decode func(any) error) error {
	var name string
	if err := decode(&name); err == nil {
		*l = Library{Name: name}
		return nil
	}
	type fields Library // without this method
	var f fields
	if err := decode(&f); err != nil {
		return err
	}
	*l = Library(f)
	return nil
}

// Keys of the library settings.
const (
	KeyLibrary    = "library"
	KeyService    = "service"
	KeyCreated    = "created"
	KeyModified   = "modified"
	KeyTimestamps = "timestamps"
)

// Library names.
const (
	LibraryOneTable  = "onetable"
	LibraryElectroDB = "electrodb"
	LibraryToolbox   = "dynamodb-toolbox"
)

// Attributes the libraries read on every item.
const (
	OneTableTypeField       = "_type"
	ElectroDBEntityAttr     = "__edb_e__"
	ElectroDBVersionAttr    = "__edb_v__"
	ToolboxEntityAttr       = "_et"
	ToolboxCreatedAttr      = "_ct"
	ToolboxModifiedAttr     = "_md"
	DefaultElectroDBVersion = "1"
)

var libraryNames = []string{LibraryOneTable, LibraryElectroDB, LibraryToolbox}

// TypeAttribute is the library's entity-type attribute (DefaultTypeAttribute
// without one).
func (l Library) TypeAttribute() string {
	switch l.Name {
	case LibraryOneTable:
		return OneTableTypeField
	case LibraryElectroDB:
		return ElectroDBEntityAttr
	case LibraryToolbox:
		return ToolboxEntityAttr
	}
	return DefaultTypeAttribute
}

// KeyText is a preset's key rules beyond pg2dynamo's own; the zero KeyText is
// no preset's.
type KeyText struct {
	// Library is the preset that re-renders keys from item attributes
	// (onetable, electrodb), or "". A negative number has no key text: the
	// library zero-pads in front (-3 is "00000000-3"), which does not sort.
	Library string
	// Lower: keys are lower-cased (ElectroDB's default).
	Lower bool
	// Plain: an unwidthed number placeholder is its plain text (ElectroDB's
	// String(value)).
	Plain bool
	// Variables: keys are templates over attributes (OneTable's "${name}"): a
	// literal "${" starts a variable, and a named attribute cannot hold ':',
	// '}', '.' or '['.
	Variables bool
	// DefaultFormat: every key must be in ElectroDB's default format
	// (electroTemplate).
	DefaultFormat bool
}

// KeyText returns the library's key rules.
func (l Library) KeyText() KeyText {
	switch l.Name {
	case LibraryOneTable:
		return KeyText{Library: l.Name, Variables: true}
	case LibraryElectroDB:
		return KeyText{Library: l.Name, Lower: true, Plain: true, DefaultFormat: true}
	}
	return KeyText{}
}

// ElectroDBVersion is the entity version electrodb items carry.
func (l Library) ElectroDBVersion() string {
	if l.Version == "" {
		return DefaultElectroDBVersion
	}
	return l.Version
}

// Constants are the same-value attributes the library writes on every item:
// ElectroDB's __edb_v__.
func (l Library) Constants() [][2]string {
	if l.Name == LibraryElectroDB {
		return [][2]string{{ElectroDBVersionAttr, l.ElectroDBVersion()}}
	}
	return nil
}

// ToolboxTimestamps reports whether items carry dynamodb-toolbox's _ct and _md.
func (l Library) ToolboxTimestamps() bool {
	return l.Name == LibraryToolbox && (l.Timestamps == nil || *l.Timestamps)
}

// ElectroDBService is library.service, else the table name.
func (m *Mapping) ElectroDBService() string {
	if m.Library.Service != "" {
		return m.Library.Service
	}
	return m.Table.Name
}

// LibraryAttributes are what the preset writes besides the type attribute.
func (m *Mapping) LibraryAttributes() []string {
	switch {
	case m.Library.Name == LibraryElectroDB:
		return []string{ElectroDBVersionAttr}
	case m.Library.ToolboxTimestamps():
		return []string{ToolboxCreatedAttr, ToolboxModifiedAttr}
	}
	return nil
}

// validateLibrary checks the settings and each entity's needs, after templates
// are parsed.
func (m *Mapping) validateLibrary() Errors {
	l := m.Library
	if l == (Library{}) {
		return nil
	}
	errs := m.checkLibrarySettings()
	if !slices.Contains(libraryNames, l.Name) {
		return errs
	}
	add := func(path, format string, args ...any) { errs = append(errs, m.Errorf(path, format, args...)) }
	typeOf := map[string]string{}
	for _, e := range m.Entities {
		ep := Path(KeyEntities, e.Name)
		if other, ok := typeOf[e.Type]; ok {
			add(Path(ep, KeyType), "entity %s has the type %q too: library %s tells entities apart by their type, so each needs its own", other, e.Type, l.Name)
		}
		typeOf[e.Type] = e.Name
		if e.Mirror != nil {
			add(Path(ep, KeyMirror), "library %s reads each item of an entity as one of its records, under one key format: a mirror would be read as a second copy of the row; model the other direction as an entity of its own", l.Name)
		}
		errs = append(errs, m.checkLibraryKeys(e, ep)...)
	}
	return errs
}

// checkLibrarySettings checks the library's fields against its name, and the
// type attribute.
func (m *Mapping) checkLibrarySettings() Errors {
	var errs Errors
	add := func(path, format string, args ...any) { errs = append(errs, m.Errorf(path, format, args...)) }
	l, lp := m.Library, KeyLibrary
	switch {
	case l.Name == "":
		add(Path(lp, KeyName), "missing: expected the library, one of %s", strings.Join(libraryNames, ", "))
		return errs
	case !slices.Contains(libraryNames, l.Name):
		add(Path(lp, KeyName), "unknown library %q: expected one of %s", l.Name, strings.Join(libraryNames, ", "))
		return errs
	case m.TypeAttribute != l.TypeAttribute():
		add(KeyTypeAttribute, "library %s reads the entity type from %q: remove type_attribute (or set it to %q)",
			l.Name, l.TypeAttribute(), l.TypeAttribute())
	}
	only := func(key, lib string, set bool) {
		if set && l.Name != lib {
			add(Path(lp, key), "%s is a setting of library %s", key, lib)
		}
	}
	only(KeyService, LibraryElectroDB, l.Service != "")
	only(KeyVersion, LibraryElectroDB, l.Version != "")
	only(KeyCreated, LibraryToolbox, l.Created != "")
	only(KeyModified, LibraryToolbox, l.Modified != "")
	only(KeyTimestamps, LibraryToolbox, l.Timestamps != nil)
	switch {
	case l.Name == LibraryElectroDB:
		for _, kv := range [][2]string{{KeyService, m.ElectroDBService()}, {KeyVersion, l.ElectroDBVersion()}} {
			if strings.ContainsAny(kv[1], "#$") {
				add(Path(lp, kv[0]), "%s %q holds '#' or '$', which ElectroDB's keys use as separators", kv[0], kv[1])
			}
		}
	case l.ToolboxTimestamps() && l.Created == "":
		add(Path(lp, KeyCreated), "missing: library %s reads %s and %s on every item (an Entity's timestamps, on by default): name the columns they come from (created: created_at, modified: updated_at), or set timestamps: false if your Entities are built with timestamps: false",
			LibraryToolbox, ToolboxCreatedAttr, ToolboxModifiedAttr)
	case !l.ToolboxTimestamps() && (l.Created != "" || l.Modified != "") && l.Name == LibraryToolbox:
		add(Path(lp, KeyTimestamps), "timestamps: false writes no %s and %s: remove created and modified", ToolboxCreatedAttr, ToolboxModifiedAttr)
	}
	return errs
}

// checkLibraryKeys checks e's key templates against what onetable and electrodb
// render.
func (m *Mapping) checkLibraryKeys(e *Entity, ep string) Errors {
	kt := m.Library.KeyText()
	if kt.Library == "" {
		return nil
	}
	var errs Errors
	add := func(path, format string, args ...any) { errs = append(errs, m.Errorf(path, format, args...)) }
	for _, k := range m.librarySlots(e) {
		for _, part := range k.Template.Parts {
			if part.Column == "" {
				if kt.Variables && strings.Contains(part.Literal, "${") {
					add(k.Path, "the literal \"${\" would start a OneTable template variable: remove it")
				}
				continue
			}
			attr, why := keyAttribute(e, part.Column)
			switch {
			case why != "":
				add(k.Path, "${%s}: %s: library %s renders the keys again from the item's attributes when it addresses an item it read (get, update, delete), so write it as an attribute",
					part.Column, why, kt.Library)
			case kt.Variables && strings.ContainsAny(attr, ":}.["):
				add(k.Path, "${%s}: its attribute name %q holds one of ':', '}', '.', '[', which a OneTable value template cannot name: rename it", part.Column, attr)
			case kt.Lower && e.IDs[part.Column] != nil && e.IDs[part.Column].Kind == IDKSUID:
				add(k.Path, "${%s}: a KSUID mixes upper- and lower-case letters and ElectroDB lower-cases keys, so two IDs could share a key: use kind: %s (one case)", part.Column, IDULID)
			}
		}
		if kt.DefaultFormat {
			if want, ok := m.electroTemplate(e, k); !ok {
				add(k.Path, "library electrodb reads this key in ElectroDB's default format: expected %q (%s), got %q", want, m.electroForm(k), k.Template.Source)
			}
		}
	}
	return errs
}

// librarySlots returns e's own key slots: the table's, then the GSIs' by name.
func (m *Mapping) librarySlots(e *Entity) []KeySlot {
	var out []KeySlot
	for _, s := range m.KeySlots(e) {
		if !s.Mirror {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b KeySlot) int { return strings.Compare(a.Index, b.Index) })
	return out
}

func (m *Mapping) pairedKey(k KeySlot) bool {
	if k.Sort {
		return true
	}
	if k.Index == "" {
		return m.Table.SortKey != ""
	}
	g := m.Table.GSI(k.Index)
	return g != nil && g.SortKey != ""
}

// electroForm says, for an error, what ElectroDB's format of k is.
func (m *Mapping) electroForm(k KeySlot) string {
	comp := `then "#" attribute "_" value for each composite attribute, all lower-case`
	switch {
	case k.Sort:
		return `"$", the entity type, "_" and the version (after "$collection#" in a collection), ` + comp
	case !m.pairedKey(k):
		return `"$" and the service, "$", the entity type, "_" and the version (the index has no sort key), ` + comp
	}
	return `"$" and the service, ` + comp
}

// keyAttribute returns the attribute e writes placeholder name as (stable ID,
// duplicate or kept column), or why none.
func keyAttribute(e *Entity, name string) (string, string) {
	if e.IDs[name] != nil {
		return name, ""
	}
	for _, d := range e.Duplicate {
		for _, col := range d.Attributes.Select {
			if to, ok := d.Attributes.Rename[col]; ok && to == name || !ok && col == name {
				return name, ""
			}
		}
	}
	a := e.Attributes
	switch {
	case slices.Contains(a.Exclude, name):
		return "", fmt.Sprintf("column %q is not written on the item (attributes.exclude lists it)", name)
	case len(a.Select) > 0 && !slices.Contains(a.Select, name):
		return "", fmt.Sprintf("column %q is not written on the item (attributes.select does not list it)", name)
	}
	if to, ok := a.Rename[name]; ok {
		return to, ""
	}
	return name, ""
}

// electroTemplate returns ElectroDB's default format of k over its
// placeholders, and whether k is in it.
func (m *Mapping) electroTemplate(e *Entity, k KeySlot) (string, bool) {
	entity := strings.ToLower(e.Type) + "_" + m.Library.ElectroDBVersion()
	first := "$" + strings.ToLower(m.ElectroDBService())
	switch {
	case k.Sort:
		first = "$" + entity
	case !m.pairedKey(k):
		first += "$" + entity
	}
	var want []Part
	var text strings.Builder
	lit := first
	for _, part := range k.Template.Parts {
		if part.Column == "" {
			continue
		}
		attr, _ := keyAttribute(e, part.Column)
		lit += "#" + strings.ToLower(attr) + "_"
		want = append(want, Part{Literal: lit}, part)
		text.WriteString(lit + placeholderText(part))
		lit = ""
	}
	if lit != "" {
		want = append(want, Part{Literal: lit})
		text.WriteString(lit)
	}
	got := k.Template.Parts
	if len(got) != len(want) || len(got) == 0 {
		return text.String(), false
	}
	for i := range got {
		if got[i].Column != want[i].Column || i > 0 && got[i].Literal != want[i].Literal {
			return text.String(), false
		}
	}
	g0, w0 := got[0].Literal, want[0].Literal
	if g0 == w0 {
		return text.String(), true
	}
	// A collection: "$collection#entity_version…" in a sort key.
	coll, ok := strings.CutSuffix(g0, "#"+strings.TrimPrefix(w0, "$"))
	ok = ok && k.Sort && len(coll) > 1 && coll[0] == '$' && !strings.ContainsAny(coll[1:], "#$") && coll == strings.ToLower(coll)
	return text.String(), ok
}

func placeholderText(p Part) string {
	if p.Width == WidthAuto {
		return "${" + p.Column + "}"
	}
	return fmt.Sprintf("${%s:%d}", p.Column, p.Width)
}
