package ddbjson

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// AppendLine writes JSON that encoding/json reads back, member for
// member, as the values it encoded: escapes, control characters, non-ASCII
// text, every type. The reading here is encoding/json's alone, apart from
// DecodeItem.
func TestAppendLineIsJSON(t *testing.T) {
	item := everyType()
	line, err := AppendLine(nil, item)
	if err != nil {
		t.Fatal(err)
	}
	if line[len(line)-1] != '\n' {
		t.Fatalf("no newline: %q", line)
	}
	// Attributes in byte order of their names, the same line every time.
	var last int
	for _, name := range []string{`"PK"`, `"b"`, `"bs"`, `"l"`, `"m"`, `"n"`, `"ns"`, `"null"`, `"ss"`, `"t"`} {
		i := strings.Index(string(line), name+":")
		if i < last {
			t.Errorf("attribute %s at %d, before the previous one at %d: %s", name, i, last, line)
		}
		last = i
	}
	if again, _ := AppendLine(nil, item); string(again) != string(line) {
		t.Errorf("a second encoding differs:\n%s\n%s", line, again)
	}
	var doc struct {
		Item map[string]map[string]any
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, line)
	}
	b64 := base64.StdEncoding.EncodeToString
	want := map[string]map[string]any{
		"PK":   {"S": "A#\"quoted\"\\back\x01\x1f\ttab é 日本 <&> \u2028"},
		"n":    {"N": "-12.5E3"},
		"b":    {"B": b64([]byte{0, 1, 255})},
		"t":    {"BOOL": true},
		"null": {"NULL": true},
		"ss":   {"SS": []any{"x", "y\n", ""}},
		"ns":   {"NS": []any{"2", "1"}},
		"bs":   {"BS": []any{b64([]byte{2, 3}), b64([]byte{1})}},
		"l":    {"L": []any{map[string]any{"S": "in"}, map[string]any{"N": "0"}}},
		"m":    {"M": map[string]any{"k\"": map[string]any{"S": ""}}},
	}
	if got, w := mustJSON(t, doc.Item), mustJSON(t, want); got != w {
		t.Errorf("encoding/json reads\n%s\nwant\n%s", got, w)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A value of a type the format has not is an error on the line, null in
// the canonical form.
func TestUnknownValueType(t *testing.T) {
	for name, v := range map[string]types.AttributeValue{"nil": nil, "unknown": &types.UnknownUnionMember{Tag: "X"}} {
		item := map[string]types.AttributeValue{"a": v}
		if _, err := AppendLine(nil, item); err == nil {
			t.Errorf("%s: AppendLine: no error", name)
		}
		if _, err := AppendValue(nil, &types.AttributeValueMemberL{Value: []types.AttributeValue{v}}); err == nil {
			t.Errorf("%s: AppendValue: no error", name)
		}
		if got := string(Canonical(item)); got != `{"a":null}` {
			t.Errorf("%s: Canonical = %s", name, got)
		}
	}
}

// AppendItem and AppendValue are the line's object and one of its values.
func TestAppendItemIsTheLinesObject(t *testing.T) {
	item := everyType()
	line, _ := AppendLine(nil, item)
	obj, err := AppendItem([]byte("pre"), item)
	if err != nil {
		t.Fatal(err)
	}
	if want := "pre" + strings.TrimSuffix(strings.TrimPrefix(string(line), `{"Item":`), "}\n"); string(obj) != want {
		t.Errorf("AppendItem\n%s\nwant\n%s", obj, want)
	}
	v, err := AppendValue(nil, item["m"])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(line), `"m":`+string(v)+",") {
		t.Errorf("AppendValue %s is not the line's value of m: %s", v, line)
	}
}

// LineBytes is the length of AppendLine's line, and reuses its buffer.
func TestLineBytesIsTheLineLength(t *testing.T) {
	item := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "A#1"}, "n": &types.AttributeValueMemberN{Value: "12"}}
	line, err := AppendLine(nil, item)
	if err != nil {
		t.Fatal(err)
	}
	if got := LineBytes(item); got != int64(len(line)) {
		t.Errorf("LineBytes %d, the line has %d bytes", got, len(line))
	}
	if allocs := testing.AllocsPerRun(100, func() { LineBytes(item) }); allocs > 0 && !raceOn {
		t.Errorf("LineBytes allocates %.0f times a call", allocs)
	}
	if got := LineBytes(map[string]types.AttributeValue{"a": nil}); got != 0 {
		t.Errorf("LineBytes of an item it cannot encode = %d, want 0", got)
	}
}

// AppendLine allocates nothing for an item of up to 32 attributes once
// its buffer is large enough: names are sorted on the stack, binary
// values encoded in place.
func TestAppendLineAllocatesNothing(t *testing.T) {
	if raceOn {
		t.Skip("the race detector allocates")
	}
	item := benchTicket()
	item["blob"] = &types.AttributeValueMemberB{Value: []byte("some bytes")}
	item["blobs"] = &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2}}}
	buf := make([]byte, 0, 4096)
	if allocs := testing.AllocsPerRun(100, func() { buf, _ = AppendLine(buf[:0], item) }); allocs > 0 {
		t.Errorf("AppendLine allocates %.0f times a call", allocs)
	}
}

// appendString's word-at-a-time scan finds every byte JSON escapes,
// wherever it is in a word: each ASCII byte at each position of strings
// of 1 to 24 bytes encodes as encoding/json encodes it (HTML escaping
// off: it escapes <, > and & where JSON need not), but for the control
// characters encoding/json writes short (\n), which the line writes as
// \u00XX; and appendCanonicalString writes each exactly as
// encoding/json.Marshal does.
func TestStringsEscapeEveryByte(t *testing.T) {
	for n := 1; n <= 24; n++ {
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 0x80; c++ {
				s := []byte(strings.Repeat("a", n))
				s[pos] = byte(c)
				var want bytes.Buffer
				enc := json.NewEncoder(&want)
				enc.SetEscapeHTML(false)
				if err := enc.Encode(string(s)); err != nil {
					t.Fatal(err)
				}
				got := appendString(nil, string(s))
				var back string
				if err := json.Unmarshal(got, &back); err != nil || back != string(s) {
					t.Fatalf("%q encoded as %s, which reads back as %q (%v)", s, got, back, err)
				}
				if w := strings.TrimSuffix(want.String(), "\n"); c != '\b' && c != '\f' && c != '\n' && c != '\r' && c != '\t' && string(got) != w {
					t.Fatalf("%q encoded as %s, encoding/json gives %s", s, got, w)
				}
				checkCanonicalString(t, string(s))
			}
		}
	}
}

// appendCanonicalString is encoding/json.Marshal beyond ASCII too.
func TestCanonicalStringIsEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "é 日本 😀", "\u2028\u2029", "a\u2028b\u2029c", "\xff", "a\xc3", "\xe2\x80", "\xed\xa0\x80",
		"ok\x7f", "<script>&amp;</script>", "\ufffd", "\xf4\x90\x80\x80", strings.Repeat("é\x00", 20)} {
		checkCanonicalString(t, s)
	}
}

// FuzzCanonicalString holds appendCanonicalString to encoding/json.Marshal
// on any string.
func FuzzCanonicalString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c", "\x00\x1f\t\n", "<&>", "é\u2028", "\xff\xfe", "\xe2\x80\xa8"} {
		f.Add(s)
	}
	f.Fuzz(checkCanonicalString)
}

func checkCanonicalString(t *testing.T, s string) {
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendCanonicalString(nil, s); string(got) != string(want) {
		t.Fatalf("%q: canonical %s, encoding/json.Marshal %s", s, got, want)
	}
}

// needsEscape finds a byte JSON escapes at any position of strings of
// any length (short ones byte by byte, longer ones by words, the last
// overlapping), and no other byte: its neighbours in value, high bytes.
func TestNeedsEscape(t *testing.T) {
	for n := 1; n <= 24; n++ {
		for at := range n {
			for _, c := range []byte{0x00, 0x1f, 0x20, 0x21, '"', '#', '[', '\\', ']', 0x7f, 0x80, 0xa2, 0xdc, 0xff} {
				p := []byte(strings.Repeat("a", n))
				p[at] = c
				want := c < 0x20 || c == '"' || c == '\\'
				if got := needsEscape(string(p)); got != want {
					t.Errorf("needsEscape(%q) = %v, want %v", p, got, want)
				}
			}
		}
	}
}
