package app

import (
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// Several migrate --shard i/N --create-table runs started at once, against
// a DynamoDB whose new tables stay CREATING for a while (as AWS's do for
// seconds): one creates the table; the others find it being created, by
// CreateTable's ResourceInUseException or DescribeTable's CREATING, and
// wait until it is ACTIVE, checking it fits the mapping, before writing
// anything. Every run exits 0, no summary counts a negative number of
// retries, and verify passes.
func TestShardsCreateTheTableAtOnce(t *testing.T) {
	t.Parallel()
	d, err := testenv.StartDynaliteCreating(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ownDynalites.Store(t.Name(), d)
	t.Cleanup(func() {
		ownDynalites.Delete(t.Name())
		d.Stop()
	})
	url, _ := fixtureSource(t, "tickets", 0.25)
	mappingFile := testenv.RepoFile(t, "fixtures", "mappings", "strategies", "tickets.yaml")
	table := testenv.TableName("shards-create")
	const shards = 4
	results := make([]cliResult, shards)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := migrateArgs(t, mappingFile, url, table, "--create-table", "--shard", fmt.Sprintf("%d/%d", i+1, shards))
			<-start
			results[i] = runCLI(t, args...)
		}()
	}
	close(start)
	wg.Wait()
	retried := regexp.MustCompile(`(-?\d+) retried by the SDK`)
	created := 0
	for i, res := range results {
		if res.code != 0 {
			t.Errorf("shard %d/%d: exit %d\n%s\n%s", i+1, shards, res.code, res.stdout, res.stderr)
			continue
		}
		if m := retried.FindStringSubmatch(res.stdout); m == nil {
			t.Errorf("shard %d/%d: no retry count in the summary\n%s", i+1, shards, res.stdout)
		} else if n, _ := strconv.Atoi(m[1]); n < 0 {
			t.Errorf("shard %d/%d: the summary counts %d retries\n%s", i+1, shards, n, res.stdout)
		}
		if regexp.MustCompile(`(?m)^created table `).MatchString(res.stderr) {
			created++
		}
	}
	if created != 1 {
		t.Errorf("%d runs say they created the table, want 1", created)
	}
	v := runCLI(t, "verify", "--mapping", mappingFile, "--source", url, "--endpoint-url", d.Endpoint, "--table", table)
	if v.code != 0 {
		t.Errorf("verify of the shards' table: exit %d\n%s", v.code, v.stdout)
	}
}
