// Package faultproxy is an HTTP reverse proxy in front of a real
// DynamoDB-compatible server that injects production faults at set rates:
// throttling, partial UnprocessedItems, HTTP 500/503, resets and latency.
// Tests put it between pg2dynamo and dynalite: nothing is mocked.
package faultproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/crc32"
	"io"
	"log"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Rates are per-request probabilities (0 to 1), tried in field order; at most
// one fault a request.
type Rates struct {
	// ProvisionedThroughputExceeded and Throttling answer HTTP 400 with those
	// errors, unforwarded.
	ProvisionedThroughputExceeded float64
	Throttling                    float64
	// Unprocessed forwards part of a BatchWriteItem, returning the rest as
	// UnprocessedItems.
	Unprocessed float64
	// Status500 and Status503 answer with those statuses, unforwarded.
	Status500 float64
	Status503 float64
	// Reset closes the connection without an answer, without forwarding.
	Reset float64
	// Permanent, when set, is a DynamoDB error type (HTTP 400) answered to
	// every eligible request from the PermanentAfter-th on.
	Permanent      string
	PermanentAfter int
	// Latency is added to every forwarded request.
	Latency time.Duration
	// Only, when set, limits faults to these operations ("BatchWriteItem").
	Only []string
	// IndexLag answers the first IndexLag GSI Queries with an empty page, as a
	// GSI not yet updated (asynchronously) does. Counted as "index-lag".
	IndexLag int
	// WriteUnits, when above 0, is the table's write capacity per second (a
	// bucket of WriteBurst units, full at first; 0 means a second's worth, at
	// least 400), spent by unfaulted BatchWriteItems as DynamoDB does: each
	// item its size rounded up to 1 KB, in order. Too few units for the first
	// item is ProvisionedThroughputExceededException, for later ones
	// UnprocessedItems.
	WriteUnits float64
	WriteBurst float64
	// AnswerWrites answers BatchWriteItems itself, dropping the items and
	// reporting one unit each (their size with WriteUnits): a costless server
	// for measuring a client against Latency or WriteUnits alone.
	AnswerWrites bool
	// AnswerDeletes answers DeleteItems itself, as if each found its
	// condition true and deleted its item (one unit), which stays: a prune
	// measured again and again on the same table.
	AnswerDeletes bool
}

// Proxy is a running fault-injecting proxy.
type Proxy struct {
	// URL is the endpoint to give the client.
	URL   string
	rates Rates
	srv   *httptest.Server
	proxy *httputil.ReverseProxy

	mu   sync.Mutex
	seed uint64
	// rngs holds one random stream per operation, so one operation's faults do
	// not depend on other requests (waiters, polls) in between.
	rngs   map[string]*rand.Rand
	counts map[string]int
	// consumed is the write capacity reported, by wall-clock second of arrival.
	consumed map[int64]float64
	// read is the read capacity that answers of reads (Scan, Query, GetItem,
	// BatchGetItem) reported, and reported counts those answers by operation
	// (ReturnConsumedCapacity).
	read     float64
	reported map[string]int
	// capacity is WriteUnits' bucket (nil without), and what it let through.
	capacity *rate.Limiter
	capStats Capacity
}

// Capacity is what the WriteUnits bucket let through.
type Capacity struct {
	// Units is the write units of the items accepted, Items their number; First
	// and Last when the first and last arrived.
	Units       float64
	Items       int64
	First, Last time.Time
	// Requests is the BatchWriteItems the bucket saw; Exceeded and Partial
	// those refused or partly written.
	Requests, Exceeded, Partial int64
	// Burst is the bucket's size (its units at first).
	Burst float64
}

// Throttled is the share of requests throttled, 0 to 1.
func (c Capacity) Throttled() float64 {
	if c.Requests == 0 {
		return 0
	}
	return float64(c.Exceeded+c.Partial) / float64(c.Requests)
}

// Held is the share of capacity (units a second) the accepted items used, less
// the initial burst.
func (c Capacity) Held(units float64) float64 {
	span := c.Last.Sub(c.First).Seconds()
	if span <= 0 || units <= 0 {
		return 0
	}
	return (c.Units - c.Burst) / span / units
}

// arrivalKey is the request context key of a request's arrival time.
type arrivalKey struct{}

// Start starts a proxy to target with the given rates and seed.
func Start(target string, rates Rates, seed uint64) (*Proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	p := &Proxy{rates: rates, seed: seed, rngs: map[string]*rand.Rand{}, counts: map[string]int{}, consumed: map[int64]float64{}, reported: map[string]int{}}
	if rates.WriteUnits > 0 {
		burst := rates.WriteBurst
		if burst <= 0 {
			burst = max(rates.WriteUnits, maxItemUnits)
		}
		p.capacity = rate.NewLimiter(rate.Limit(rates.WriteUnits), int(burst))
		p.capStats.Burst = float64(int(burst))
	}
	p.proxy = httputil.NewSingleHostReverseProxy(u)
	p.proxy.ErrorLog = log.New(io.Discard, "", 0) // a client giving up is not news
	p.proxy.ModifyResponse = p.recordConsumed
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	p.URL = p.srv.URL
	return p, nil
}

// Close stops the proxy.
func (p *Proxy) Close() { p.srv.Close() }

// Counts returns how often each fault was injected ("throttle", …) and
// each operation requested ("op:BatchWriteItem").
func (p *Proxy) Counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.counts)
}

// ConsumedPerSecond returns the write units DynamoDB reported consumed, by
// the Unix second the BatchWriteItem reached the proxy.
func (p *Proxy) ConsumedPerSecond() map[int64]float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.consumed)
}

// ReadUnits returns the read units that answers of Scan, Query, GetItem and
// BatchGetItem reported consumed, and the number of answers that reported them,
// by operation ("Query").
func (p *Proxy) ReadUnits() (units float64, reported map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.read, maps.Clone(p.reported)
}

// Capacity returns what the WriteUnits bucket let through so far.
func (p *Proxy) Capacity() Capacity {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.capStats
}

func (p *Proxy) rng(op string) *rand.Rand {
	r := p.rngs[op]
	if r == nil {
		r = rand.New(rand.NewPCG(p.seed, uint64(crc32.ChecksumIEEE([]byte(op)))))
		p.rngs[op] = r
	}
	return r
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
	if op == "Query" && p.rates.IndexLag > 0 && p.lagIndex(r) {
		const empty = `{"Count":0,"Items":[],"ScannedCount":0}`
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("X-Amzn-Requestid", "faultproxy")
		w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(empty))), 10))
		io.WriteString(w, empty)
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), arrivalKey{}, time.Now()))
	p.mu.Lock()
	rng := p.rng(op)
	roll := func(rate float64) bool { return rate > 0 && rng.Float64() < rate }
	p.counts["op:"+op]++
	eligible := len(p.rates.Only) == 0
	for _, o := range p.rates.Only {
		eligible = eligible || o == op
	}
	fault := ""
	if eligible && p.rates.Permanent != "" {
		p.counts["eligible"]++
		if p.counts["eligible"] > p.rates.PermanentAfter {
			fault = "permanent"
		}
	}
	if eligible && fault == "" {
		switch {
		case roll(p.rates.ProvisionedThroughputExceeded):
			fault = "ProvisionedThroughputExceededException"
		case roll(p.rates.Throttling):
			fault = "ThrottlingException"
		case op == "BatchWriteItem" && roll(p.rates.Unprocessed):
			fault = "unprocessed"
		case roll(p.rates.Status500):
			fault = "500"
		case roll(p.rates.Status503):
			fault = "503"
		case roll(p.rates.Reset):
			fault = "reset"
		}
	}
	if fault != "" {
		p.counts[fault]++
	}
	keep := rng.Float64()
	p.mu.Unlock()

	if fault == "" && op == "BatchWriteItem" && (p.capacity != nil || p.rates.AnswerWrites) {
		p.write(w, r)
		return
	}
	if fault == "" && op == "DeleteItem" && p.rates.AnswerDeletes {
		p.answerDelete(w, r)
		return
	}
	if p.rates.Latency > 0 {
		time.Sleep(p.rates.Latency)
	}
	switch fault {
	case "permanent":
		awsError(w, http.StatusBadRequest, p.rates.Permanent, "injected by faultproxy")
	case "ProvisionedThroughputExceededException", "ThrottlingException":
		awsError(w, http.StatusBadRequest, fault, "injected by faultproxy")
	case "500":
		awsError(w, http.StatusInternalServerError, "InternalServerError", "injected by faultproxy")
	case "503":
		awsError(w, http.StatusServiceUnavailable, "ServiceUnavailable", "injected by faultproxy")
	case "reset":
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		awsError(w, http.StatusInternalServerError, "InternalServerError", "reset")
	case "unprocessed":
		p.partial(w, r, keep)
	default:
		p.proxy.ServeHTTP(w, r)
	}
}

// lagIndex reports whether Query r (read and put back) names a GSI and is among
// the first IndexLag.
func (p *Proxy) lagIndex(r *http.Request) bool {
	p.mu.Lock()
	spent := p.counts["index-lag"] >= p.rates.IndexLag
	p.mu.Unlock()
	if spent {
		return false // no need to read the body
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var q struct{ IndexName string }
	if err != nil || json.Unmarshal(body, &q) != nil || q.IndexName == "" {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.counts["index-lag"] >= p.rates.IndexLag {
		return false
	}
	p.counts["index-lag"]++
	return true
}

func awsError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-Requestid", "faultproxy")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"__type": "com.amazonaws.dynamodb.v20120810#" + typ, "message": msg})
}

// partial forwards a share keep of each table's requests, holding back at
// least one, which it adds to the answer's UnprocessedItems.
func (p *Proxy) partial(w http.ResponseWriter, r *http.Request, keep float64) {
	_, req, items, ok := p.batchRequest(w, r)
	if !ok {
		return
	}
	held := map[string][]json.RawMessage{}
	for table, reqs := range items {
		n := int(float64(len(reqs)) * keep)
		if n >= len(reqs) {
			n = len(reqs) - 1
		}
		held[table] = reqs[n:]
		if n == 0 {
			delete(items, table)
		} else {
			items[table] = reqs[:n]
		}
	}
	if len(items) == 0 {
		// Nothing forwarded: answer as DynamoDB does when it writes none.
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		json.NewEncoder(w).Encode(map[string]any{"UnprocessedItems": held})
		return
	}
	p.forwardHolding(w, r, req, items, held)
}

// batchRequest reads r's BatchWriteItem: its body, the request and its
// RequestItems by table. A body it cannot read is answered with a
// SerializationException, one it cannot decode is forwarded as it is; both
// return ok false.
func (p *Proxy) batchRequest(w http.ResponseWriter, r *http.Request) (body []byte, req map[string]json.RawMessage, items map[string][]json.RawMessage, ok bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		awsError(w, http.StatusBadRequest, "SerializationException", err.Error())
		return nil, nil, nil, false
	}
	if json.Unmarshal(body, &req) != nil || json.Unmarshal(req["RequestItems"], &items) != nil {
		p.forward(w, r, body)
		return nil, nil, nil, false
	}
	return body, req, items, true
}

// forwardHolding forwards req with forwarded's requests only, adding held's
// to the server's UnprocessedItems.
func (p *Proxy) forwardHolding(w http.ResponseWriter, r *http.Request, req map[string]json.RawMessage, forwarded, held map[string][]json.RawMessage) {
	req["RequestItems"], _ = json.Marshal(forwarded)
	newBody, _ := json.Marshal(req)
	rec := httptest.NewRecorder()
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(newBody))
	r2.ContentLength = int64(len(newBody))
	r2.Header.Set("Content-Length", strconv.Itoa(len(newBody)))
	p.proxy.ServeHTTP(rec, r2)
	var resp map[string]json.RawMessage
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &resp) != nil {
		copyResponse(w, rec)
		return
	}
	var un map[string][]json.RawMessage
	_ = json.Unmarshal(resp["UnprocessedItems"], &un)
	if un == nil {
		un = map[string][]json.RawMessage{}
	}
	for t, reqs := range held {
		un[t] = append(un[t], reqs...)
	}
	resp["UnprocessedItems"], _ = json.Marshal(un)
	answer(w, resp)
}

func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	p.proxy.ServeHTTP(w, r2)
}

func copyResponse(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

// recordConsumed sums the ConsumedCapacity of BatchWriteItem answers, by
// second, and of the reads' answers.
func (p *Proxy) recordConsumed(resp *http.Response) error {
	op := strings.TrimPrefix(resp.Request.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
	one := op == "Scan" || op == "Query" || op == "GetItem"
	if resp.StatusCode != http.StatusOK || !(one || op == "BatchWriteItem" || op == "BatchGetItem") {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	type units struct{ CapacityUnits float64 }
	var all []units
	if one {
		var out struct{ ConsumedCapacity *units }
		if json.Unmarshal(body, &out) != nil || out.ConsumedCapacity == nil {
			return nil
		}
		all = []units{*out.ConsumedCapacity}
	} else {
		var out struct{ ConsumedCapacity []units }
		if json.Unmarshal(body, &out) != nil || out.ConsumedCapacity == nil {
			return nil
		}
		all = out.ConsumedCapacity
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if op == "BatchWriteItem" {
		at, _ := resp.Request.Context().Value(arrivalKey{}).(time.Time)
		for _, c := range all {
			p.consumed[at.Unix()] += c.CapacityUnits
		}
		return nil
	}
	for _, c := range all {
		p.read += c.CapacityUnits
	}
	p.reported[op]++
	return nil
}
