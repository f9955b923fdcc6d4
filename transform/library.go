package transform

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5/pgtype"
	"golang.org/x/text/cases"
	"golang.org/x/text/language"

	"github.com/pg2dynamo/pg2dynamo/extract"
	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// What a library preset adds to a plan: the attributes it reads besides the
// type attribute (ElectroDB's __edb_v__, dynamodb-toolbox's _ct and _md), and
// which columns may be key placeholders when it renders keys from attributes
// (onetable, electrodb). Its key rendering lives in the one key renderer
// (keyEnc.noNegative, keyPlan.lower) per mapping.KeyText.

type libraryPlan struct {
	consts []libraryConst
	// created and modified index Plan.cols for dynamodb-toolbox's _ct and _md;
	// -1 for none.
	created, modified int
}

type libraryConst struct {
	name string
	val  types.AttributeValue
}

// compileLibrary checks (and marks read) the columns the preset reads and
// returns the toolbox timestamp columns: created and modified ("" when absent:
// _md is then created).
func (c *compiler) compileLibrary() (created, modified string) {
	l := c.m.Library
	if !l.ToolboxTimestamps() || l.Created == "" {
		return "", ""
	}
	for _, col := range []struct{ key, name, attr string }{
		{mapping.KeyCreated, l.Created, mapping.ToolboxCreatedAttr},
		{mapping.KeyModified, l.Modified, mapping.ToolboxModifiedAttr},
	} {
		path := mapping.Path(mapping.KeyLibrary, col.key)
		i, ok := c.byName[col.name]
		switch {
		case col.name == "":
			continue
		case !ok && col.key == mapping.KeyModified:
			continue
		case !ok:
			c.add(path, "entity %s: its source %s has no column %q, which dynamodb-toolbox's %s comes from on every item (a query source can alias one); it has columns: %s",
				c.e.Name, c.e.Source, col.name, col.attr, columnList(c.cols))
			continue
		}
		cl := c.cols[i]
		if cl.Array || cl.AsText || cl.Type != "date" && cl.Type != "timestamp" && cl.Type != "timestamptz" {
			c.add(path, "entity %s: column %q is of type %s: expected a date, timestamp or timestamptz column for dynamodb-toolbox's %s",
				c.e.Name, col.name, typeName(cl), col.attr)
			continue
		}
		c.need[col.name] = true
		if col.key == mapping.KeyCreated {
			created = col.name
		} else {
			modified = col.name
		}
	}
	if created == "" {
		return "", ""
	}
	return created, modified
}

// setLibrary sets p.lib from m and the timestamp columns compile found.
func (p *Plan) setLibrary(m *mapping.Mapping, created, modified string) {
	p.lib = libraryPlan{created: -1, modified: -1}
	for _, c := range m.Library.Constants() {
		p.lib.consts = append(p.lib.consts, libraryConst{c[0], &types.AttributeValueMemberS{Value: c[1]}})
	}
	if created != "" {
		p.lib.created = columnIndex(p.cols, created)
		p.lib.modified = columnIndex(p.cols, modified)
		if p.lib.modified < 0 {
			p.lib.modified = p.lib.created
		}
	}
	p.mapSize += len(m.LibraryAttributes())
}

// putLibraryAttrs puts the library's attributes into attrs and returns the size
// added. A created column NULL or beyond JavaScript's Date rejects the row:
// toolbox cannot read its item.
func (p *Plan) putLibraryAttrs(values []any, attrs map[string]types.AttributeValue) (int, error) {
	size := 0
	for _, c := range p.lib.consts {
		attrs[c.name] = c.val
		size += len(c.name) + valueSize(c.val)
	}
	if p.lib.created < 0 {
		return size, nil
	}
	ct, err := toolboxTime(values[p.lib.created])
	if err != nil {
		return size, p.rowError(values, p.lib.created, fmt.Sprintf("%s: %v", mapping.ToolboxCreatedAttr, err))
	}
	md := ct
	if v := values[p.lib.modified]; v != nil {
		if md, err = toolboxTime(v); err != nil {
			return size, p.rowError(values, p.lib.modified, fmt.Sprintf("%s: %v", mapping.ToolboxModifiedAttr, err))
		}
	}
	attrs[mapping.ToolboxCreatedAttr] = &types.AttributeValueMemberS{Value: ct}
	attrs[mapping.ToolboxModifiedAttr] = &types.AttributeValueMemberS{Value: md}
	return size + len(mapping.ToolboxCreatedAttr) + len(ct) + len(mapping.ToolboxModifiedAttr) + len(md), nil
}

// toolboxTimeLayout is JavaScript's toISOString, which toolbox writes _ct and
// _md with: UTC, milliseconds.
const toolboxTimeLayout = "2006-01-02T15:04:05.000Z"

// toolboxTime renders a date or timestamp as toolbox does (no time zone read as
// UTC, a date at midnight), dropping sub-milliseconds.
func toolboxTime(v any) (string, error) {
	switch t := v.(type) {
	case nil:
		return "", fmt.Errorf("NULL: dynamodb-toolbox reads it on every item")
	case time.Time:
		t = t.UTC()
		if y := t.Year(); y < 0 || y > 9999 {
			return "", fmt.Errorf("year %d is outside JavaScript's four-digit toISOString", y)
		}
		return t.Format(toolboxTimeLayout), nil
	case pgtype.InfinityModifier:
		return "", fmt.Errorf("%s is no JavaScript Date", t)
	}
	return "", fmt.Errorf("unexpected Go value %T for a time", v)
}

// libraryKeyReason says why c cannot be key placeholder name under lib, which
// renders keys from attributes: the library's text of c's attribute
// (String(value), zero-padded for a width) must be c's key text. Strings, uuid,
// boolean, date and text-read types qualify, as do integers and numeric(p,0);
// times (six key fraction digits against the attribute's own), fractions and
// floats (JavaScript writes 1e-7) do not. Empty when c can be.
func libraryKeyReason(lib, name string, c extract.Column) string {
	switch {
	case c.AsText && c.Type != "time",
		textSorted[c.Type] && !c.AsText,
		numberWidths[c.Type] > 0 && !c.AsText,
		c.Type == "numeric" && !c.AsText && c.Precision > 0 && c.Scale == 0:
		return ""
	case c.Type == "timestamp" || c.Type == "timestamptz" || c.Type == "time":
		return fmt.Sprintf("${%s}: library %s renders keys from the item's attributes, and column %q of type %s has six fraction digits in a key but only those it has in its attribute, so the library would render another key: cast it to text in a query source (%s::text) or leave it out of the keys",
			name, lib, c.Name, c.Type, c.Name)
	}
	return fmt.Sprintf("${%s}: library %s renders keys from the item's attributes with JavaScript's String(value), and column %q of type %s has no key text that is that: cast it to an integer or text in a query source, or leave it out of the keys",
		name, lib, c.Name, typeName(c))
}

// lowerTail lower-cases text[start:] as ElectroDB does: JavaScript's
// toLowerCase, Unicode's full case mapping (U+0130 to i and U+0307, a final
// Σ to ς), which strings.ToLower's simple mapping is not; in place when ASCII.
// https://tc39.es/ecma262/#sec-string.prototype.tolowercase
func lowerTail(text []byte, start int) []byte {
	for i := start; i < len(text); i++ {
		c := text[i]
		if c >= utf8.RuneSelf {
			return append(text[:start], cases.Lower(language.Und).String(string(text[start:]))...)
		}
		if 'A' <= c && c <= 'Z' {
			text[i] = c + 'a' - 'A'
		}
	}
	return text
}
