package schemagen

import (
	"fmt"
	"strings"

	"github.com/pg2dynamo/pg2dynamo/mapping"
)

// The patterns of the schema, built from named pieces. They are regular
// expressions that RE2 (Go, the tests' validator) and ECMA-262 (editors)
// read alike: no lookaround and no \u escapes, so the Unicode spaces are
// written as the characters themselves. The mapping package's tests hold
// each to the parser it mirrors (TestTemplatePattern, TestOrderPattern,
// TestKeyConditionPattern and their fuzz tests).

// space is the body of a character class of unicode.IsSpace's runes, the
// ones strings.TrimSpace and strings.Fields cut on.
const space = `\t\n\v\f\r ` + "\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"

// width is the ":width" of a placeholder: 0 to 64 in digits, spaces around.
const width = `(?::[` + space + `]*0*(?:[0-9]|[1-5][0-9]|6[0-4])[` + space + `]*)?`

// placeholder matches one ${name} or ${name:width} whose name holds none
// of the characters in except (besides '$' runs before '{', '}' and ':'):
// the name is up to the first ':' or '}', holds no "${" and is not blank.
func placeholder(except string) string {
	return fmt.Sprintf(`\$\{(?:[%[2]s])*(?:[^$}:%[1]s%[2]s](?:[^$}:%[1]s]|\$+[^${}:%[1]s])*\$*|\$+(?:[^${}:%[1]s](?:[^$}:%[1]s]|\$+[^${}:%[1]s])*\$*)?)%[3]s\}`,
		except, space, width)
}

// templatePattern matches exactly what mapping.ParseTemplate parses: a
// literal character, $$, a $ not before { or $, or a placeholder.
var templatePattern = `^(?:[^$]|\$\$|\$[^{$]|` + placeholder("") + `)*\$?$`

const templateComment = `Matches exactly what mapping.ParseTemplate parses (TestTemplatePattern and FuzzTemplatePattern check it): a literal character, $$, a $ not before { or $, or ${name} or ${name:width}, where name is up to the first ':' or '}', holds no "${" and is not blank, and width is 0 to 64 in digits. The spaces are unicode.IsSpace's, spelled out; no lookaround and no \u escapes, so RE2 and ECMA-262 read it alike.`

// orderPattern matches exactly what mapping.ParseOrder parses: a column,
// optionally followed by ASC or DESC in any case (strings.EqualFold folds
// U+017F, ſ, to s).
var orderPattern = `^[` + space + `]*[^` + space + `]+(?:[` + space + `]+(?:[Aa][Ssſ][Cc]|[Dd][Ee][Ssſ][Cc]))?[` + space + `]*$`

const orderComment = `Matches exactly what mapping.ParseOrder parses (TestOrderPattern, FuzzOrderPattern): strings.Fields splits on unicode.IsSpace, and strings.EqualFold folds U+017F to s.`

// keyConditionPattern matches every condition mapping.ParseKeyCondition
// parses. It follows the lexer's tokens and checks each template as
// templatePattern does.
var keyConditionPattern = func() string {
	const (
		ws = `[ \t\n]*` // the lexer's spaces
		// token is one lexer token where a key attribute name stands: a
		// word (with ${…} kept whole), a 'quoted' one, or punctuation.
		token = `(?:(?:[^ \t\n()',<>=]|\$\{[^}]*\})+|'[^']*'|[(),]|[<>]=?|=)`
		// Keywords, in any case.
		and        = `[Aa][Nn][Dd]`
		beginsWith = `[Bb][Ee][Gg][Ii][Nn][Ssſ]_[Ww][Ii][Tt][Hh]`
		between    = `[Bb][Ee][Tt][Ww][Ee][Ee][Nn]`
	)
	// word is a template written as a word: no spaces or punctuation
	// outside placeholders; "$${…}" is literal text.
	word := `(?:(?:\$\$\{[^}(),<>=]*\}|[^$ \t\n()',<>=]|\$\$|\$[^{$ \t\n()',<>=]|` + placeholder("(),<>=") + `)+\$?|\$)`
	quotedBody := `(?:[^$']|\$\$|\$[^{$']|` + placeholder("'") + `)`
	// The partition key's template is not empty; a sort key's may be.
	partition := `(?:` + word + `|'(?:` + quotedBody + `+\$?|\$)')`
	sort := `(?:` + word + `|'` + quotedBody + `*\$?')`
	sortCond := strings.Join([]string{
		beginsWith + ws + `\(` + ws + token + ws + `,` + ws + sort + ws + `\)`,
		token + ws + between + ws + sort + ws + and + ws + sort,
		token + ws + `(?:=|<=?|>=?)` + ws + sort,
	}, "|")
	andWord := `(?:` + and + `|'` + and + `')`
	// Equalities before the last condition: a multi-attribute key's.
	equal := `(?:` + ws + andWord + ws + token + ws + `=` + ws + sort + `)*`
	return `^` + ws + token + ws + `=` + ws + partition + equal +
		`(?:` + ws + andWord + ws + `(?:` + sortCond + `))?` + ws + `$`
}()

const keyConditionComment = `Matches every condition mapping.ParseKeyCondition parses (TestKeyConditionPattern, TestKeyConditionPatternGenerated and FuzzKeyConditionPattern check it) and refuses malformed ones. It follows the lexer's tokens (words, 'quoted' templates, ( ) , = < <= > >=, with ${…} kept whole in a word) and checks each template's syntax as the key template pattern does; it cannot tell two words written without a space between them from one.`

// Name patterns, Load's own.
var (
	tableNamePattern   = mapping.TableNamePattern
	entityNamePattern  = mapping.EntityNamePattern
	mappingNamePattern = mapping.MappingNamePattern
)
