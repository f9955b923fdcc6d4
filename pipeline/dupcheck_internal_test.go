package pipeline

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/transform"
)

// keySet keeps, with each key, the entity (of its group) that claimed it,
// through the table's growth; a row's keys are claimed all or none.
func TestKeySetOwners(t *testing.T) {
	for _, owners := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprint(owners, " owners"), func(t *testing.T) {
			members := make([]int, owners) // entity indexes: 10, 11, …
			for i := range members {
				members[i] = 10 + i
			}
			s := newKeySet(members)
			const n = 20_000 // several doublings from 4096 slots
			for i := range n {
				k := [2]string{fmt.Sprint("P#", i), "S"}
				if _, _, taken := s.claim([][2]string{k}, i%owners); taken {
					t.Fatalf("key %d taken before it was claimed", i)
				}
			}
			for i := range n {
				k := [2]string{fmt.Sprint("P#", i), "S"}
				got, owner, taken := s.claim([][2]string{{"fresh", fmt.Sprint(i)}, k}, (i+1)%owners)
				if !taken || got != k || owner != 10+i%owners {
					t.Fatalf("claim again %v = %v, %d, %v; want it taken by entity %d", k, got, owner, taken, 10+i%owners)
				}
			}
			// Nothing of the refused rows was recorded.
			if _, _, taken := s.claim([][2]string{{"fresh", "7"}}, 0); taken {
				t.Error("a key of a refused row was recorded")
			}
		})
	}
}

// BenchmarkKeyCheck measures the batch check every item gets, proven
// unique keys included: ns/op is per item.
func BenchmarkKeyCheck(b *testing.B) {
	items := make([]transform.Item, 1000)
	for i := range items {
		items[i].Attrs = map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: fmt.Sprintf("USER#%08d", i/4)},
			"SK": &types.AttributeValueMemberS{Value: fmt.Sprintf("TICKET#%08d", i)},
		}
	}
	c := newKeyCheck([2]string{"PK", "SK"})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%25 == 0 {
			c.newBatch()
		}
		it := items[i%len(items) : i%len(items)+1]
		if _, dup := c.check(it, nil, 0); dup {
			b.Fatal("duplicate")
		}
		c.accept()
	}
}
