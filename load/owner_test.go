package load

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/google/go-cmp/cmp"
)

// An owner's tags carry its name, hash and types; types that a tag value
// cannot hold (a space in one, more than 256 characters) are left out.
// OwnerOf reads them back, and reads an older pg2dynamo's file tag.
func TestOwnerTags(t *testing.T) {
	for _, tc := range []struct {
		name  string
		types []string
		want  string // TagTypes' value, "" for none
	}{
		{"types", []string{"Order", "User"}, "Order User"},
		{"a type with a space", []string{"Order", "Line item"}, ""},
		{"a type with a comma", []string{"a,b"}, ""},
		{"too long", []string{strings.Repeat("A", 200), strings.Repeat("B", 60)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Owner{Name: "shop", Hash: "0123456789abcdef", Types: tc.types}
			got := map[string]string{}
			for _, tag := range o.Tags() {
				got[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
			}
			want := map[string]string{TagName: "shop", TagMappingHash: "0123456789abcdef"}
			if tc.want != "" {
				want[TagTypes] = tc.want
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("tags (-want +got):\n%s", d)
			}
			back, ok := OwnerOf(got)
			if !ok || back.Name != "shop" || back.Hash != o.Hash || (tc.want != "" && strings.Join(back.Types, " ") != tc.want) {
				t.Errorf("OwnerOf: %+v, %v", back, ok)
			}
		})
	}
	old, ok := OwnerOf(map[string]string{TagMapping: "tickets", TagMappingHash: "abc"})
	if !ok || old.Name != "" || old.File != "tickets" || old.String() != "file tickets (SHA-256 abc…)" {
		t.Errorf("an older pg2dynamo's tags: %+v (%s), %v", old, old, ok)
	}
	if (Owner{Name: "a"}).Same(Owner{File: "a"}) || (Owner{}).Same(Owner{}) || !(Owner{Name: "a", Hash: "1"}).Same(Owner{Name: "a", Hash: "2"}) {
		t.Error("Same: want only equal declared names")
	}
}

// A lease's tags read back as the lease, its heartbeat to the second; a
// heartbeat that does not parse is the zero time (long stale).
func TestLeaseTags(t *testing.T) {
	l := Lease{Slot: "pg2dynamo_shop", Heartbeat: time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC), Every: 30 * time.Second}
	tags := map[string]string{}
	for _, tag := range l.Tags() {
		tags[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
	}
	back, ok := LeaseOf(tags)
	if !ok || back.Slot != l.Slot || !back.Heartbeat.Equal(l.Heartbeat.Truncate(time.Second)) || back.Every != l.Every {
		t.Errorf("LeaseOf(%v) = %+v, %v", tags, back, ok)
	}
	tags[TagLeaseHeartbeat] = "yesterday"
	if back, _ := LeaseOf(tags); !back.Heartbeat.IsZero() {
		t.Errorf("an unreadable heartbeat: %v, want the zero time", back.Heartbeat)
	}
	if _, ok := LeaseOf(map[string]string{TagName: "shop"}); ok {
		t.Error("LeaseOf of tags without a slot: want none")
	}
}
