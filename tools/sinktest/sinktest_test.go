package sinktest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pg2dynamo/pg2dynamo/load"
	"github.com/pg2dynamo/pg2dynamo/tools/sinktest"
	"github.com/pg2dynamo/pg2dynamo/transform"
)

// memSink keeps items in memory by partition key; an item with attribute
// "refuse" is refused. bug, if set, breaks one clause of the contract.
type memSink struct {
	bug   string
	mu    sync.Mutex
	items map[string][]map[string]types.AttributeValue
}

func (s *memSink) Write(ctx context.Context, batch []transform.Item) error {
	if err := ctx.Err(); err != nil {
		if s.bug == "rejects on cancel" {
			be := &load.BatchError{}
			for i := range batch {
				be.Failed = append(be.Failed, load.ItemError{Index: i, Err: err})
			}
			return be
		}
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	be := &load.BatchError{}
	for i, it := range batch {
		if _, refused := it.Attrs["refuse"]; refused {
			idx := i
			if s.bug == "wrong index" {
				idx++
			}
			be.Failed = append(be.Failed, load.ItemError{Index: idx, Err: errors.New("refused")})
			continue
		}
		if s.bug == "drops" && i == len(batch)-1 {
			continue
		}
		pk := it.Attrs["PK"].(*types.AttributeValueMemberS).Value
		if it.Delete {
			if s.bug != "ignores deletes" {
				delete(s.items, pk)
			}
			continue
		}
		s.items[pk] = append(s.items[pk], it.Attrs)
		if s.bug == "duplicates" {
			s.items[pk] = append(s.items[pk], it.Attrs)
		}
	}
	if len(be.Failed) > 0 {
		return be
	}
	return nil
}

func (s *memSink) read(_ context.Context, keys []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]types.AttributeValue
	for _, k := range keys {
		out = append(out, s.items[k["PK"].(*types.AttributeValueMemberS).Value]...)
	}
	return out, nil
}

// unwritable fails every Write, as a BatchError when bug says so.
type unwritable struct{ bug string }

func (u unwritable) Write(_ context.Context, batch []transform.Item) error {
	if u.bug == "unwritable as rejects" {
		return &load.BatchError{Failed: []load.ItemError{{Index: 0, Err: errors.New("gone")}}}
	}
	return errors.New("destination gone")
}

func harness(bug string) sinktest.Harness {
	return sinktest.Harness{
		Name:         "memSink",
		PartitionKey: "PK",
		New: func(*testing.T) sinktest.Target {
			s := &memSink{bug: bug, items: map[string][]map[string]types.AttributeValue{}}
			return sinktest.Target{Sink: s, Read: s.read}
		},
		Refusals: map[string]func(transform.Item) transform.Item{
			"marked": func(it transform.Item) transform.Item {
				attrs := map[string]types.AttributeValue{"refuse": &types.AttributeValueMemberBOOL{Value: true}}
				for k, v := range it.Attrs {
					attrs[k] = v
				}
				return transform.Item{Attrs: attrs}
			},
		},
		Unwritable: func(*testing.T) load.Sink { return unwritable{bug} },
	}
}

// A sink that keeps the contract passes every subtest.
func TestMemSink(t *testing.T) {
	sinktest.Test(t, harness(""))
}

// TestBrokenSink runs the suite on a memSink broken as SINKTEST_BUG says;
// TestSuiteCatches runs it in a child process and expects it to fail.
func TestBrokenSink(t *testing.T) {
	bug := os.Getenv("SINKTEST_BUG")
	if bug == "" {
		t.Skip("run by TestSuiteCatches with SINKTEST_BUG set")
	}
	sinktest.Test(t, harness(bug))
}

// Each way of breaking the contract fails the subtest that checks it.
func TestSuiteCatches(t *testing.T) {
	for bug, subtest := range map[string]string{
		"drops":                 "Acknowledged",
		"duplicates":            "ConcurrentWrites",
		"wrong index":           "Rejects/marked",
		"unwritable as rejects": "PermanentError",
		"rejects on cancel":     "CancelledBefore",
		"ignores deletes":       "Deletes",
	} {
		t.Run(bug, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenSink$", "-test.v")
			cmd.Env = append(os.Environ(), "SINKTEST_BUG="+bug)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a sink that %s:\n%s", bug, out)
			}
			if want := "--- FAIL: TestBrokenSink/" + subtest + " "; !strings.Contains(string(out), want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		})
	}
}
