package testenv

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

// WriteRecorder is an HTTP reverse proxy before a DynamoDB-compatible server
// recording every write's key (BatchWriteItem puts and deletes, PutItem,
// DeleteItem, UpdateItem) and request counts per operation. Re-sent writes are
// recorded each time.
type WriteRecorder struct {
	// URL is the proxy's address, to use as the endpoint.
	URL      string
	keyAttrs [2]string
	mu       sync.Mutex
	puts     []string
	deletes  []string
	ops      map[string]int
	// held are the operations whose requests wait until released (Hold).
	held map[string]chan struct{}
}

// NewWriteRecorder starts a recording proxy to target, closed when the test
// ends; keys are pk's and sk's values joined by a space.
func NewWriteRecorder(t testing.TB, target, pk, sk string) *WriteRecorder {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	r := &WriteRecorder{keyAttrs: [2]string{pk, sk}, ops: map[string]int{}, held: map[string]chan struct{}{}}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		op := strings.TrimPrefix(req.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
		r.mu.Lock()
		gate := r.held[op]
		r.mu.Unlock()
		if gate != nil {
			select {
			case <-gate:
			case <-req.Context().Done():
				return
			}
		}
		r.record(strings.TrimPrefix(req.Header.Get("X-Amz-Target"), "DynamoDB_20120810."), body)
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// attrs is an item or key in DynamoDB JSON, each value left encoded.
type attrs map[string]map[string]json.RawMessage

func (r *WriteRecorder) record(op string, body []byte) {
	var in struct {
		RequestItems map[string][]struct {
			PutRequest    *struct{ Item attrs }
			DeleteRequest *struct{ Key attrs }
		}
		Item attrs
		Key  attrs
	}
	_ = json.Unmarshal(body, &in) // what does not decode records nothing
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops[op]++
	switch op {
	case "BatchWriteItem":
		for _, reqs := range in.RequestItems {
			for _, w := range reqs {
				switch {
				case w.PutRequest != nil:
					r.puts = append(r.puts, r.key(w.PutRequest.Item))
				case w.DeleteRequest != nil:
					r.deletes = append(r.deletes, r.key(w.DeleteRequest.Key))
				}
			}
		}
	case "PutItem":
		r.puts = append(r.puts, r.key(in.Item))
	case "UpdateItem":
		r.puts = append(r.puts, r.key(in.Key))
	case "DeleteItem":
		r.deletes = append(r.deletes, r.key(in.Key))
	}
}

// key is an item key's recorded form: its key attributes' string values,
// space-joined.
func (r *WriteRecorder) key(a attrs) string {
	s := func(name string) string {
		var v string
		_ = json.Unmarshal(a[name]["S"], &v)
		return v
	}
	return s(r.keyAttrs[0]) + " " + s(r.keyAttrs[1])
}

// Puts returns the key of every item put (or updated) so far, sorted.
func (r *WriteRecorder) Puts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return sortedCopy(r.puts)
}

// Deletes returns the key of every delete sent so far, sorted.
func (r *WriteRecorder) Deletes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return sortedCopy(r.deletes)
}

// Operations returns how many requests of each operation ("Scan") were
// forwarded so far.
func (r *WriteRecorder) Operations() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.ops))
	for k, v := range r.ops {
		out[k] = v
	}
	return out
}

// Hold makes op's requests wait from now until release is called (or the client
// gives up); release is idempotent.
func (r *WriteRecorder) Hold(op string) (release func()) {
	gate := make(chan struct{})
	r.mu.Lock()
	r.held[op] = gate
	r.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			delete(r.held, op)
			r.mu.Unlock()
			close(gate)
		})
	}
}

// Reset forgets what was recorded.
func (r *WriteRecorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.puts, r.deletes, r.ops = nil, nil, map[string]int{}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
