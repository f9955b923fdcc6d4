package testenv

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDynaliteSurvivesAbortedRequest: a client that goes away in the middle
// of a request body (a pg2dynamo killed during a BatchWriteItem) must not end
// the shared server (scripts/dynalite-guard.cjs).
func TestDynaliteSurvivesAbortedRequest(t *testing.T) {
	d, err := StartDynalite()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	addr := strings.TrimPrefix(d.Endpoint, "http://")
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		// Half of a 1000-byte body, then a reset (SO_LINGER 0).
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-amz-json-1.0\r\n"+
			"X-Amz-Target: DynamoDB_20120810.BatchWriteItem\r\nContent-Length: 1000\r\n\r\n%s", addr, strings.Repeat("x", 500))
		time.Sleep(100 * time.Millisecond)
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	}
	time.Sleep(300 * time.Millisecond)
	req, _ := http.NewRequest(http.MethodPost, d.Endpoint, strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.ListTables")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=x/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=x")
	req.Header.Set("X-Amz-Date", "20260101T000000Z")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("dynalite no longer answers after clients went away mid-request: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), "TableNames") {
		t.Fatalf("ListTables: %s %s", resp.Status, body)
	}
}
