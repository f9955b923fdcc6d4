package testenv

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// StatementCounter is a TCP proxy before PostgreSQL counting its clients'
// statements: extended-protocol Execute messages (one per pgx statement) and
// simple-protocol Query messages. It forwards every byte unchanged; connections
// are without TLS (sslmode=disable) so it can read them.
// https://www.postgresql.org/docs/current/protocol-message-formats.html
type StatementCounter struct {
	// URL is the database's connection string, through the proxy.
	URL         string
	target      string
	statements  atomic.Int64
	connections atomic.Int64
	wg          sync.WaitGroup
}

// NewStatementCounter starts a counting proxy for postgres:// URL pgURL,
// stopped when the test ends.
func NewStatementCounter(t testing.TB, pgURL string) *StatementCounter {
	t.Helper()
	u, err := url.Parse(pgURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &StatementCounter{target: u.Host}
	q := u.Query()
	q.Set("sslmode", "disable")
	u.Host, u.RawQuery = ln.Addr().String(), q.Encode()
	c.URL = u.String()
	var mu sync.Mutex
	var conns []net.Conn
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			c.connections.Add(1)
			mu.Lock()
			conns = append(conns, client)
			mu.Unlock()
			c.wg.Add(1)
			go func() {
				defer c.wg.Done()
				c.serve(client)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, conn := range conns {
			conn.Close()
		}
		mu.Unlock()
		c.wg.Wait()
	})
	return c
}

// Statements returns the statements run through the proxy so far.
func (c *StatementCounter) Statements() int64 { return c.statements.Load() }

// Connections returns the connections opened through the proxy so far.
func (c *StatementCounter) Connections() int64 { return c.connections.Load() }

// serve forwards one client connection, counting statements.
func (c *StatementCounter) serve(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", c.target)
	if err != nil {
		return
	}
	defer server.Close()
	go func() {
		io.Copy(client, server)
		client.Close()
	}()
	r := bufio.NewReader(client)
	// Startup: untyped messages (length, code). An SSLRequest or GSSENCRequest
	// gets one refusing byte (the URL disables TLS), then the startup message
	// follows.
	for {
		msg, err := readUntyped(r)
		if err != nil {
			return
		}
		if _, err := server.Write(msg); err != nil {
			return
		}
		code := binary.BigEndian.Uint32(msg[4:8])
		if code != 80877103 && code != 80877104 { // SSLRequest, GSSENCRequest
			break
		}
	}
	for {
		head := make([]byte, 5)
		if _, err := io.ReadFull(r, head); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(head[1:]))
		if n < 4 {
			return
		}
		body := make([]byte, n-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		if head[0] == 'E' || head[0] == 'Q' {
			c.statements.Add(1)
		}
		if _, err := server.Write(append(head, body...)); err != nil {
			return
		}
	}
}

// readUntyped reads one message of the startup phase, whole.
func readUntyped(r io.Reader) ([]byte, error) {
	head := make([]byte, 8)
	if _, err := io.ReadFull(r, head); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(head))
	if n < 8 || n > 1<<20 {
		return nil, errors.New("not a startup message")
	}
	msg := make([]byte, n)
	copy(msg, head)
	_, err := io.ReadFull(r, msg[8:])
	return msg, err
}
