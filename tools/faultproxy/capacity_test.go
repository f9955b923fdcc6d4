package faultproxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// batch is a BatchWriteItem body of n puts of items of about size bytes.
func batch(t *testing.T, first, n, size int) string {
	t.Helper()
	var reqs []string
	for i := range n {
		reqs = append(reqs, fmt.Sprintf(`{"PutRequest":{"Item":{"pk":{"S":"k%d"},"d":{"S":%q}}}}`, first+i, strings.Repeat("x", size)))
	}
	return `{"RequestItems":{"t":[` + strings.Join(reqs, ",") + `]},"ReturnConsumedCapacity":"TOTAL"}`
}

func post(t *testing.T, url, body string) (int, map[string]json.RawMessage) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.BatchWriteItem")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]json.RawMessage
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("answer %q: %v", b, err)
	}
	return resp.StatusCode, out
}

// A table of WriteUnits takes items, each its size in 1 KB units, while
// its bucket has them: a request whose items do not all fit gets the rest
// back in UnprocessedItems, one whose first item does not fit is refused
// with ProvisionedThroughputExceededException. With AnswerWrites nothing
// reaches the server behind.
func TestWriteUnitsThrottle(t *testing.T) {
	behind := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("%s reached the server behind", r.Header.Get("X-Amz-Target"))
	}))
	defer behind.Close()
	// A unit every 1,000 seconds after a bucket of 100: the test's requests
	// earn none, however slow the machine.
	p, err := Start(behind.URL, Rates{WriteUnits: 0.001, WriteBurst: 100, AnswerWrites: true}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// 30 items of 2 units (2,000-byte strings): 60 units.
	code, out := post(t, p.URL, batch(t, 0, 30, 2000))
	if code != 200 || string(out["UnprocessedItems"]) != "{}" || !strings.Contains(string(out["ConsumedCapacity"]), `"CapacityUnits":60`) {
		t.Fatalf("first request: %d %s", code, out)
	}
	// 20 fit in the 40 units left; 10 come back.
	code, out = post(t, p.URL, batch(t, 30, 30, 2000))
	var un map[string][]json.RawMessage
	_ = json.Unmarshal(out["UnprocessedItems"], &un)
	if code != 200 || len(un["t"]) != 10 || !strings.Contains(string(out["ConsumedCapacity"]), `"CapacityUnits":40`) {
		t.Fatalf("second request: %d %s", code, out)
	}
	code, out = post(t, p.URL, batch(t, 60, 1, 10))
	if code != 400 || !strings.Contains(string(out["__type"]), "ProvisionedThroughputExceededException") {
		t.Fatalf("third request: %d %s", code, out)
	}
	c := p.Capacity()
	if c.Requests != 3 || c.Exceeded != 1 || c.Partial != 1 || c.Units != 100 || c.Items != 50 || c.Burst != 100 {
		t.Errorf("capacity %+v; want 3 requests, 1 refused, 1 partial, 100 units of 50 items", c)
	}
	if got := c.Throttled(); got < 0.66 || got > 0.67 {
		t.Errorf("throttled share %.3f, want 2/3", got)
	}
	if n := p.Counts(); n["capacity-exceeded"] != 1 || n["capacity-partial"] != 1 || n["op:BatchWriteItem"] != 3 {
		t.Errorf("counts %v", n)
	}
}

func TestValueSize(t *testing.T) {
	for _, tc := range []struct {
		item  string
		units float64
	}{
		{`{"PutRequest":{"Item":{"pk":{"S":"abc"},"n":{"N":"12345"}}}}`, 1},
		{`{"PutRequest":{"Item":{"pk":{"S":"x"},"d":{"S":"` + strings.Repeat("y", 1030) + `"}}}}`, 2},
		{`{"PutRequest":{"Item":{"pk":{"S":"x"},"l":{"L":[{"S":"` + strings.Repeat("y", 3000) + `"},{"BOOL":true}]}}}}`, 3},
		{`{"DeleteRequest":{"Key":{"pk":{"S":"x"}}}}`, 1},
	} {
		if got := writeUnits(json.RawMessage(tc.item)); got != tc.units {
			t.Errorf("%.60s…: %v units, want %v", tc.item, got, tc.units)
		}
	}
}

// With AnswerDeletes a DeleteItem is answered as deleted, one unit, and
// never reaches the server behind.
func TestAnswerDeletes(t *testing.T) {
	behind := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("%s reached the server behind", r.Header.Get("X-Amz-Target"))
	}))
	defer behind.Close()
	p, err := Start(behind.URL, Rates{AnswerDeletes: true}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	req, _ := http.NewRequest(http.MethodPost, p.URL, strings.NewReader(
		`{"TableName":"t","Key":{"pk":{"S":"k"}},"ConditionExpression":"#0 = :0","ReturnConsumedCapacity":"TOTAL"}`))
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.DeleteItem")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(b) != `{"ConsumedCapacity":{"CapacityUnits":1,"TableName":"t"}}` {
		t.Fatalf("answer %d %s", resp.StatusCode, b)
	}
}
