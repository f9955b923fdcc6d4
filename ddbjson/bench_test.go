package ddbjson

import (
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// benchTicket is an item of the tickets fixture's Ticket entity as the
// transform gives it (an export line of 560 bytes).
func benchTicket() map[string]types.AttributeValue {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	return map[string]types.AttributeValue{
		"PK": s("USER#0000000000000019650"), "SK": s("TICKET#0000000000000000663"),
		"created_at": s("2025-12-05T20:42:04.478038Z"), "updated_at": s("2025-12-08T05:37:27.478038Z"),
		"metadata": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"channel": s("web"), "csat": n("1.4"), "related": &types.AttributeValueMemberL{}, "sla_hours": n("4"),
			"source": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"ip": s("10.150.106.14"), "user_agent": s("Firefox 128")}},
		}},
		"org_id": n("582"), "priority": n("2"), "status": s("closed"), "subject": s("Invoice #97823 shows the wrong amount"),
		"tags": &types.AttributeValueMemberL{Value: []types.AttributeValue{s("export")}}, "ticket_id": n("663"),
		"type": s("Ticket"), "user_id": n("19650"),
	}
}

// BenchmarkEncode encodes a Ticket item as an export line (AppendLine,
// and LineEncoder, export's hot path, which knows the item's shape after
// the first); the baseline, in the same run, is encoding/json
// marshalling the same line from plain maps (what a generic encoder costs;
// it sorts map keys too). Compare the ns/op of the two.
func BenchmarkEncode(b *testing.B) {
	item := benchTicket()
	line, err := AppendLine(nil, item)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("AppendLine", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		buf := make([]byte, 0, 4096)
		for b.Loop() {
			if buf, err = AppendLine(buf[:0], item); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("LineEncoder", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		buf := make([]byte, 0, 4096)
		var e LineEncoder
		for b.Loop() {
			if buf, err = e.AppendLine(buf[:0], item); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		var plain map[string]any
		if err := json.Unmarshal(line, &plain); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			if _, err := json.Marshal(plain); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCanonical is the canonical form verify computes for every item
// on both sides of a comparison.
func BenchmarkCanonical(b *testing.B) {
	item := benchTicket()
	b.SetBytes(int64(len(Canonical(item))))
	for b.Loop() {
		Canonical(item)
	}
}

// BenchmarkDecodeItem reads a Ticket item back from its DynamoDB JSON, as
// diff --change-cost and --apply do for each changed item.
func BenchmarkDecodeItem(b *testing.B) {
	in := Canonical(benchTicket())
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := DecodeItem(in); err != nil {
			b.Fatal(err)
		}
	}
}
