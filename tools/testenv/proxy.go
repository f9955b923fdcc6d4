package testenv

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
)

// Recorder is an HTTP reverse proxy recording each forwarded request's DynamoDB
// operation (X-Amz-Target).
type Recorder struct {
	// URL is the proxy's address, to use as the endpoint.
	URL string
	mu  sync.Mutex
	ops []string
}

// NewRecorder starts a recording proxy to target, closed when the test ends.
func NewRecorder(t testing.TB, target string) *Recorder {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	r := &Recorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.ops = append(r.ops, req.Header.Get("X-Amz-Target"))
		r.mu.Unlock()
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// Operations returns every request's X-Amz-Target so far, e.g.
// "DynamoDB_20120810.Scan".
func (r *Recorder) Operations() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ops...)
}
