package faultproxy

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"hash/crc32"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"
)

// maxItemUnits is the write units of DynamoDB's largest item (400 KB).
const maxItemUnits = 400

// writeRequest is one put or delete of a BatchWriteItem, its item or key
// left encoded.
type writeRequest struct {
	PutRequest *struct {
		Item map[string]json.RawMessage
	} `json:",omitempty"`
	DeleteRequest *struct {
		Key map[string]json.RawMessage
	} `json:",omitempty"`
}

// write handles a BatchWriteItem under Rates.WriteUnits and
// Rates.AnswerWrites: the items the bucket has units for are written (by
// the server behind, or dropped), the rest returned in UnprocessedItems,
// or, when the first item finds too few, the request is refused with
// ProvisionedThroughputExceededException. Latency is added as to any
// request.
func (p *Proxy) write(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		awsError(w, http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	var req map[string]json.RawMessage
	var items map[string][]json.RawMessage
	if json.Unmarshal(body, &req) != nil || json.Unmarshal(req["RequestItems"], &items) != nil {
		p.forward(w, r, body)
		return
	}
	accepted, held := p.spend(arrived, items)
	if p.rates.Latency > 0 {
		time.Sleep(p.rates.Latency)
	}
	if len(accepted) == 0 {
		awsError(w, http.StatusBadRequest, "ProvisionedThroughputExceededException",
			"The level of configured provisioned throughput for the table was exceeded (injected by faultproxy)")
		return
	}
	if p.rates.AnswerWrites {
		out := map[string]any{"UnprocessedItems": held}
		var rcc string
		_ = json.Unmarshal(req["ReturnConsumedCapacity"], &rcc)
		if rcc != "" && rcc != "NONE" {
			var cc []map[string]any
			for table, reqs := range accepted {
				cc = append(cc, map[string]any{"TableName": table, "CapacityUnits": p.units(reqs)})
			}
			out["ConsumedCapacity"] = cc
		}
		answer(w, out)
		return
	}
	if len(held) == 0 {
		p.forward(w, r, body)
		return
	}
	req["RequestItems"], _ = json.Marshal(accepted)
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

// answer writes v as DynamoDB's JSON answer, with its CRC32.
func answer(w http.ResponseWriter, v any) {
	out, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-Requestid", "faultproxy")
	w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(out)), 10))
	w.Write(out)
}

// spend takes the units of items' requests, in order, from the bucket at
// arrived; those it has no units for are held back (all those after the
// first held, as DynamoDB keeps no order but the proxy does).
func (p *Proxy) spend(arrived time.Time, items map[string][]json.RawMessage) (accepted, held map[string][]json.RawMessage) {
	accepted, held = map[string][]json.RawMessage{}, map[string][]json.RawMessage{}
	p.mu.Lock()
	defer p.mu.Unlock()
	var units float64
	var n int64
	full := false
	for table, reqs := range items {
		for i, raw := range reqs {
			u := 1.0
			if p.capacity != nil {
				u = writeUnits(raw)
				if !full && !p.capacity.AllowN(arrived, int(u)) {
					full = true
				}
			}
			if full {
				held[table] = append(held[table], reqs[i:]...)
				break
			}
			accepted[table] = append(accepted[table], raw)
			units += u
			n++
		}
	}
	if p.capacity == nil {
		return accepted, held
	}
	c := &p.capStats
	c.Requests++
	switch {
	case n == 0:
		c.Exceeded++
		p.counts["capacity-exceeded"]++
	case len(held) > 0:
		c.Partial++
		p.counts["capacity-partial"]++
	}
	if n > 0 {
		if c.First.IsZero() {
			c.First = arrived
		}
		c.Last = arrived
		c.Units += units
		c.Items += n
	}
	return accepted, held
}

// units is the write units of reqs: WriteUnits' sizes, or one an item.
func (p *Proxy) units(reqs []json.RawMessage) float64 {
	if p.capacity == nil {
		return float64(len(reqs))
	}
	var u float64
	for _, r := range reqs {
		u += writeUnits(r)
	}
	return u
}

// writeUnits is what DynamoDB charges a put request: its item's size
// rounded up to 1 KB; a delete (whose item's size the proxy does not
// know), 1.
func writeUnits(raw json.RawMessage) float64 {
	var wr writeRequest
	if json.Unmarshal(raw, &wr) != nil || wr.PutRequest == nil {
		return 1
	}
	size := 0
	for name, v := range wr.PutRequest.Item {
		size += len(name) + valueSize(v)
	}
	return max(1, math.Ceil(float64(size)/1024))
}

// valueSize is the size DynamoDB counts for an attribute value in
// DynamoDB JSON
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html):
// a string its UTF-8 bytes, a number about one byte per two digits plus
// one, binary its bytes, a boolean or null one, a list or map 3 plus one
// per element plus its elements (a map's names too), a set its elements.
func valueSize(raw json.RawMessage) int {
	var v map[string]json.RawMessage
	if json.Unmarshal(raw, &v) != nil {
		return 0
	}
	size := 0
	for typ, val := range v {
		switch typ {
		case "S":
			var s string
			_ = json.Unmarshal(val, &s)
			size += len(s)
		case "N":
			var s string
			_ = json.Unmarshal(val, &s)
			size += numberSize(s)
		case "B":
			var s string
			_ = json.Unmarshal(val, &s)
			size += base64.StdEncoding.DecodedLen(len(s))
		case "BOOL", "NULL":
			size++
		case "SS", "NS", "BS":
			var ss []string
			_ = json.Unmarshal(val, &ss)
			for _, s := range ss {
				switch typ {
				case "SS":
					size += len(s)
				case "NS":
					size += numberSize(s)
				default:
					size += base64.StdEncoding.DecodedLen(len(s))
				}
			}
		case "L":
			var l []json.RawMessage
			_ = json.Unmarshal(val, &l)
			size += 3 + len(l)
			for _, e := range l {
				size += valueSize(e)
			}
		case "M":
			var m map[string]json.RawMessage
			_ = json.Unmarshal(val, &m)
			size += 3 + len(m)
			for k, e := range m {
				size += len(k) + valueSize(e)
			}
		}
	}
	return size
}

func numberSize(s string) int {
	digits := 0
	for _, c := range s {
		if c >= '0' && c <= '9' {
			digits++
		}
	}
	return (digits+1)/2 + 1
}
