package export

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/transform"
)

// discard is a Store whose objects go nowhere.
type discard struct{}

func (discard) Create(context.Context, string) (Writer, error) { return discardWriter{}, nil }
func (discard) Remove(context.Context, string) error           { return nil }
func (discard) URL(key string) string                          { return "discard:" + key }
func (discard) List(context.Context, string) ([]string, error) { return nil, nil }

type discardWriter struct{}

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (discardWriter) Close() error                { return nil }
func (discardWriter) Abort() error                { return nil }

var _ io.Writer = discardWriter{}

// BenchmarkSink writes tickets-like items (32,768 distinct lines of
// about 590 bytes of DynamoDB JSON) through a Sink, in the default
// compression (gzip), in batches of 25 from one writer: the CPU an export spends per
// item beyond the pipeline's (encoding, shuffling, compressing), the
// store apart.
func BenchmarkSink(b *testing.B) {
	const batch = 25
	items := make([]transform.Item, 1<<15) // none again in a measured run (callgrind's: 1,200 ops)
	for i := range items {
		items[i] = transform.Item{Attrs: ticket(i)}
	}
	s, err := NewSink(context.Background(), discard{}, 1, Options{})
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		i := n % (len(items) - batch + 1)
		if err := s.Write(context.Background(), items[i:i+batch]); err != nil {
			b.Fatal(err)
		}
		n += batch
	}
	if _, _, err := s.Close(); err != nil {
		b.Fatal(err)
	}
}

func ticket(i int) map[string]types.AttributeValue {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	return map[string]types.AttributeValue{
		"PK": s(fmt.Sprintf("USER#%019d", 19650+i/7)), "SK": s(fmt.Sprintf("TICKET#%019d", 663+i)),
		"created_at": s("2025-12-05T20:42:04.478038Z"), "updated_at": s(fmt.Sprintf("2025-12-08T05:%02d:27.478038Z", i%60)),
		"metadata": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"channel": s("web"), "csat": n("1.4"), "related": &types.AttributeValueMemberL{}, "sla_hours": n(fmt.Sprint(4 + i%3)),
			"source": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"ip": s(fmt.Sprintf("10.150.%d.14", i)), "user_agent": s("Firefox 128")}},
		}},
		"org_id": n(fmt.Sprint(582 + i%5)), "priority": n(fmt.Sprint(i % 4)), "status": s("closed"), "subject": s(fmt.Sprintf("Invoice #%d shows the wrong amount", 97823+i)),
		"tags": &types.AttributeValueMemberL{Value: []types.AttributeValue{s("export")}}, "ticket_id": n(fmt.Sprint(663 + i)),
		"type": s("Ticket"), "user_id": n(fmt.Sprint(19650 + i/7)),
	}
}
