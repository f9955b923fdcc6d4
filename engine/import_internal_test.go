package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pg2dynamo/pg2dynamo/export"
)

// ImportTable reads at most export.MaxObjects objects: shards that hold more
// between them (each export counted only its own) are refused before
// ImportTable is sent, the session's client never used.
func TestImportTableRefusesOverMaxObjects(t *testing.T) {
	j := newJob(context.Background(), Config{}, "import")
	ip := &importPlan{from: export.Location{Bucket: "exports", Prefix: "run/"}, objects: export.MaxObjects + 1}
	_, _, err := importTable(j, &session{}, ip)
	if kind, _ := KindOf(err); kind != KindRefused || !strings.Contains(err.Error(), fmt.Sprintf("holds %d objects, over the %d", export.MaxObjects+1, export.MaxObjects)) {
		t.Errorf("importTable of %d objects: %v (kind %v), want refused naming the count", export.MaxObjects+1, err, kind)
	}
}
