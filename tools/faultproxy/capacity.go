package faultproxy

import (
	"encoding/base64"
	"encoding/json"
	"hash/crc32"
	"math"
	"net/http"
	"strconv"
	"time"
)

// maxItemUnits is the write units of DynamoDB's largest item (400 KB).
const maxItemUnits = 400

// writeRequest is one put or delete of a BatchWriteItem, decoded for its size.
type writeRequest struct {
	PutRequest *struct {
		Item map[string]attrValue
	}
}

// attrValue is an attribute value in DynamoDB JSON.
type attrValue struct {
	S, N, B    *string
	BOOL, NULL *bool
	SS, NS, BS []string
	L          []attrValue
	M          map[string]attrValue
}

// write handles a BatchWriteItem under WriteUnits and AnswerWrites: items the
// bucket has units for are written (or dropped), the rest returned as
// UnprocessedItems, or all refused when the first finds too few.
func (p *Proxy) write(w http.ResponseWriter, r *http.Request) {
	body, req, items, ok := p.batchRequest(w, r)
	if !ok {
		return
	}
	units := map[string][]float64{}
	if p.capacity != nil {
		for table, reqs := range items {
			for _, raw := range reqs {
				units[table] = append(units[table], writeUnits(raw))
			}
		}
	}
	accepted, held := p.spend(items, units)
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
				u := float64(len(reqs)) // one an item, unless measured
				if us := units[table]; len(us) >= len(reqs) {
					u = 0
					for _, x := range us[:len(reqs)] {
						u += x
					}
				}
				cc = append(cc, map[string]any{"TableName": table, "CapacityUnits": u})
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
	p.forwardHolding(w, r, req, accepted, held)
}

// answerDelete answers a DeleteItem under AnswerDeletes: deleted, one unit.
func (p *Proxy) answerDelete(w http.ResponseWriter, r *http.Request) {
	var req struct{ TableName, ReturnConsumedCapacity string }
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		awsError(w, http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	if p.rates.Latency > 0 {
		time.Sleep(p.rates.Latency)
	}
	out := map[string]any{}
	if req.ReturnConsumedCapacity != "" && req.ReturnConsumedCapacity != "NONE" {
		out["ConsumedCapacity"] = map[string]any{"TableName": req.TableName, "CapacityUnits": 1}
	}
	answer(w, out)
}

// answer writes v as DynamoDB's JSON answer, with its CRC32.
func answer(w http.ResponseWriter, v any) {
	out, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-Requestid", "faultproxy")
	w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(out)), 10))
	w.Write(out)
}

// spend takes items' units from the bucket in order; those it lacks units for
// are held back, so each table's accepted items are a prefix.
func (p *Proxy) spend(items map[string][]json.RawMessage, units map[string][]float64) (accepted, held map[string][]json.RawMessage) {
	accepted, held = map[string][]json.RawMessage{}, map[string][]json.RawMessage{}
	p.mu.Lock()
	defer p.mu.Unlock()
	// The bucket's time is read under the lock: rate.Limiter would earn tokens
	// twice from arrival times handed out of order.
	arrived := time.Now()
	var spent float64
	var n int64
	full := false
	for table, reqs := range items {
		for i, raw := range reqs {
			u := 1.0
			if p.capacity != nil {
				u = units[table][i]
				if !full && !p.capacity.AllowN(arrived, int(u)) {
					full = true
				}
			}
			if full {
				held[table] = append(held[table], reqs[i:]...)
				break
			}
			accepted[table] = append(accepted[table], raw)
			spent += u
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
		c.Units += spent
		c.Items += n
	}
	return accepted, held
}

// writeUnits is DynamoDB's charge for a put: its size rounded up to 1 KB; a
// delete, 1.
func writeUnits(raw json.RawMessage) float64 {
	var wr writeRequest
	if json.Unmarshal(raw, &wr) != nil || wr.PutRequest == nil {
		return 1
	}
	size := 0
	for name, v := range wr.PutRequest.Item {
		size += len(name) + v.size()
	}
	return max(1, math.Ceil(float64(size)/1024))
}

// size is the size DynamoDB counts for v: strings their UTF-8 bytes, numbers
// about a byte per two digits plus one, containers 3 plus one per element.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html
func (v attrValue) size() int {
	switch {
	case v.S != nil:
		return len(*v.S)
	case v.N != nil:
		return numberSize(*v.N)
	case v.B != nil:
		return base64.StdEncoding.DecodedLen(len(*v.B))
	case v.BOOL != nil, v.NULL != nil:
		return 1
	case v.SS != nil:
		n := 0
		for _, s := range v.SS {
			n += len(s)
		}
		return n
	case v.NS != nil:
		n := 0
		for _, s := range v.NS {
			n += numberSize(s)
		}
		return n
	case v.BS != nil:
		n := 0
		for _, s := range v.BS {
			n += base64.StdEncoding.DecodedLen(len(s))
		}
		return n
	case v.L != nil:
		n := 3 + len(v.L)
		for _, e := range v.L {
			n += e.size()
		}
		return n
	case v.M != nil:
		n := 3 + len(v.M)
		for k, e := range v.M {
			n += len(k) + e.size()
		}
		return n
	}
	return 0
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
