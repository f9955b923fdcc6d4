package follow_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pg2dynamo/pg2dynamo/follow"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// BenchmarkStreamReceive receives transactions of one inserted row each,
// committed before the clock starts, from a real replication slot: the
// client's cost a transaction (Begin, Insert, Commit) at a backlog, the
// case of a follow behind. The walsender decodes on the other core.
func BenchmarkStreamReceive(b *testing.B) {
	ctx := context.Background()
	url := testenv.NewDatabase(b)
	testenv.Exec(b, url, `CREATE TABLE t (id int PRIMARY KEY, v text NOT NULL);
		CREATE PUBLICATION bench_pub FOR TABLE t;
		CREATE PROCEDURE ins(n int) LANGUAGE plpgsql AS $$
		BEGIN FOR i IN 1..n LOOP INSERT INTO t VALUES (i, 'value ' || i); COMMIT; END LOOP; END $$`)
	s, err := follow.Dial(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	slotName := fmt.Sprintf("pg2dynamo_bench_%d", time.Now().UnixNano())
	slot, err := s.CreateSlot(ctx, slotName, nil)
	if err != nil {
		b.Fatal(err)
	}
	conn := testenv.Connect(b, url)
	b.Cleanup(func() {
		s.Close(context.Background())
		_, _ = conn.Exec(context.Background(), "SELECT pg_drop_replication_slot($1)", slotName)
	})
	if _, err := conn.Exec(ctx, "CALL ins($1)", b.N); err != nil {
		b.Fatal(err)
	}
	if err := s.Start(ctx, slotName, "bench_pub", slot.Consistent); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for got := 0; got < b.N; {
		tx, err := s.Receive(ctx, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if tx == nil {
			b.Fatalf("%d of %d transactions received before a minute passed without one", got, b.N)
		}
		got += len(tx.Changes)
	}
}
