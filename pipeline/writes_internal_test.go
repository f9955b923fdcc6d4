package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

func keyItem(pk string, del bool) transform.Item {
	return transform.Item{Entity: -1, Attrs: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}}, Delete: del}
}

// A delete the sink refuses stops its Group with an error naming the key
// (the window is not applied); a second Group of the same Writes goes on
// and is counted.
func TestWritesRefusedDeleteStopsItsGroup(t *testing.T) {
	sink := load.SinkFunc(func(_ context.Context, batch []transform.Item) error {
		be := &load.BatchError{}
		for i, it := range batch {
			if it.Delete && transform.ItemKey(it.Attrs, [2]string{"PK", ""})[0] == "GONE#2" {
				be.Failed = append(be.Failed, load.ItemError{Index: i, Err: errors.New("refused")})
			}
		}
		if len(be.Failed) > 0 {
			return be
		}
		return nil
	})
	w := NewWrites(sink, [2]string{"PK", ""}, 2)
	defer w.Close()
	bad := w.Group(context.Background(), nil)
	for i := range 3 {
		if err := bad.Add([]transform.Item{keyItem(fmt.Sprint("GONE#", i), true)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bad.Wait(); err == nil || !strings.Contains(err.Error(), "GONE#2") {
		t.Fatalf("Wait after a refused delete: %v; want an error naming its key", err)
	}
	good := w.Group(context.Background(), nil)
	for i := range 60 {
		if err := good.Add([]transform.Item{keyItem(fmt.Sprint("OK#", i), true)}); err != nil {
			t.Fatal(err)
		}
	}
	if rejects, err := good.Wait(); err != nil || len(rejects) != 0 {
		t.Fatalf("the next group: %v, %d rejects", err, len(rejects))
	}
	if n := w.Written(); n != 60 {
		t.Errorf("Written() = %d, want the 60 deletes of the second group (the first's batch was refused)", n)
	}
}
