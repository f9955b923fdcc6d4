package export

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// AppendLine writes JSON that encoding/json reads back to the same
// typed values: escapes, control characters, non-ASCII text, every type.
func TestAppendLineIsJSON(t *testing.T) {
	item := map[string]types.AttributeValue{
		"PK":   &types.AttributeValueMemberS{Value: "A#\"quoted\"\\back\x01\x1f\ttab é 日本"},
		"n":    &types.AttributeValueMemberN{Value: "-12.5E3"},
		"b":    &types.AttributeValueMemberB{Value: []byte{0, 1, 255}},
		"t":    &types.AttributeValueMemberBOOL{Value: true},
		"null": &types.AttributeValueMemberNULL{Value: true},
		"ss":   &types.AttributeValueMemberSS{Value: []string{"x", "y\n"}},
		"ns":   &types.AttributeValueMemberNS{Value: []string{"1", "2"}},
		"bs":   &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2, 3}}},
		"l":    &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "in"}, &types.AttributeValueMemberN{Value: "0"}}},
		"m":    &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k\"": &types.AttributeValueMemberS{Value: ""}}},
	}
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
	var doc struct{ Item json.RawMessage }
	if err := json.Unmarshal(line, &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, line)
	}
	got, err := DecodeItem(doc.Item)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(item, got, cmpopts.IgnoreUnexported(types.AttributeValueMemberS{}, types.AttributeValueMemberN{}, types.AttributeValueMemberB{}, types.AttributeValueMemberBOOL{}, types.AttributeValueMemberNULL{}, types.AttributeValueMemberSS{}, types.AttributeValueMemberNS{}, types.AttributeValueMemberBS{}, types.AttributeValueMemberL{}, types.AttributeValueMemberM{})); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
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
}

// appendString's word-at-a-time scan finds every byte JSON escapes,
// wherever it is in a word: each ASCII byte at each position of strings
// of 1 to 24 bytes encodes as encoding/json encodes it (HTML escaping
// off: it escapes <, > and & where JSON need not).
func TestAppendStringEscapesEveryByte(t *testing.T) {
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
			}
		}
	}
}
