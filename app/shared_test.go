package app

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pg2dynamo/pg2dynamo/fixtures"
	"github.com/pg2dynamo/pg2dynamo/tools/testenv"
)

// sharedSource is a fixture domain loaded into a database of its own once
// per test binary.
type sharedSource struct {
	once   sync.Once
	url    string
	counts map[string]int64
	drop   func() error
	err    error
}

var (
	sharedSourcesMu sync.Mutex
	sharedSources   = map[string]*sharedSource{}
)

// fixtureSource returns the connection string of a database holding
// fixture domain at scale (seed 1), and its rows per table. It is loaded
// on first use and shared by every test that asks for the same domain and
// scale, in parallel: they must only read it (a test that changes the
// source, or ends its connections, loads its own). dropSharedSources drops
// them all.
func fixtureSource(t *testing.T, domain string, scale float64) (string, map[string]int64) {
	t.Helper()
	key := fmt.Sprintf("%s@%g", domain, scale)
	sharedSourcesMu.Lock()
	s := sharedSources[key]
	if s == nil {
		s = &sharedSource{}
		sharedSources[key] = s
	}
	sharedSourcesMu.Unlock()
	s.once.Do(func() {
		s.url, s.drop, s.err = testenv.CreateDatabase()
		if s.err != nil {
			return
		}
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, s.url)
		if err != nil {
			s.err = err
			return
		}
		defer conn.Close(ctx)
		s.counts, s.err = fixtures.Load(ctx, conn, domain, scale, 1)
	})
	if s.err != nil {
		t.Fatalf("fixture %s: %v", key, s.err)
	}
	return s.url, s.counts
}

// dropSharedSources drops the databases fixtureSource created (TestMain,
// after the tests), and reports on stderr each it could not: false then.
func dropSharedSources() bool {
	sharedSourcesMu.Lock()
	defer sharedSourcesMu.Unlock()
	ok := true
	for key, s := range sharedSources {
		if s.drop != nil {
			if err := s.drop(); err != nil {
				fmt.Fprintf(os.Stderr, "fixture %s: %v\n", key, err)
				ok = false
			}
		}
	}
	return ok
}
