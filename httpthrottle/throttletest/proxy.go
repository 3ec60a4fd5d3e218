package throttletest

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Proxy is a TCP proxy on a loopback address that delays what clients send
// on its way to a server, the way a network or a proxy in between does:
// every chunk of bytes a client writes reaches the server a delay later,
// in order, and it reaches the server even if the client has given up on
// the request meanwhile (timed out, cancelled, closed the connection).
// What the server answers comes back at once.
//
// It is what a client-side timeout shorter than the network's delay needs
// to be tested against: the request the client timed out on still
// arrives, and a strict server counts it. Send requests to URL (with the
// base of the client under test dialing it as any server). Build it with
// NewProxy and Close it when done. A Proxy is safe for concurrent use.
type Proxy struct {
	// Addr is the proxy's "127.0.0.1:port".
	Addr string
	// URL is "http://" + Addr.
	URL string

	target string
	delay  func() time.Duration
	ln     net.Listener

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	queued int // chunks read from clients, not yet written to the server
	wg     sync.WaitGroup
}

// Queued returns the number of chunks read from clients and not yet
// delivered to the server (or dropped by Close): 0 once everything the
// clients sent has arrived.
func (p *Proxy) Queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queued
}

func (p *Proxy) addQueued(n int) {
	p.mu.Lock()
	p.queued += n
	p.mu.Unlock()
}

// NewProxy starts a Proxy to target, a "host:port" or a URL such as a
// Server's URL, that delays each chunk a client sends by what delay
// returns (a negative value counts as 0; nil delays nothing). delay is
// called once per chunk read from a client and must be safe for concurrent
// use. An empty target, or one that is not a host and port, is an error.
func NewProxy(target string, delay func() time.Duration) (*Proxy, error) {
	addr, err := proxyTarget(target)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("throttletest: NewProxy(%q): %w", target, err)
	}
	if delay == nil {
		delay = func() time.Duration { return 0 }
	}
	p := &Proxy{
		Addr: ln.Addr().String(), URL: "http://" + ln.Addr().String(),
		target: addr, delay: delay, ln: ln, conns: map[net.Conn]struct{}{},
	}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// proxyTarget returns the host:port of target.
func proxyTarget(target string) (string, error) {
	addr := target
	if strings.Contains(target, "://") {
		u, err := url.Parse(target)
		if err != nil {
			return "", fmt.Errorf("throttletest: NewProxy(%q): %w", target, err)
		}
		addr = u.Host
	}
	if _, _, err := net.SplitHostPort(addr); err != nil || addr == "" {
		return "", fmt.Errorf("throttletest: NewProxy(%q): the target must be host:port or a URL with one", target)
	}
	return addr, nil
}

// Close stops accepting, closes every connection (dropping what was still
// on its way) and waits for the proxy's goroutines to end.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	_ = p.ln.Close()
	p.wg.Wait()
}

// track adds c to the connections Close closes, or closes it if the proxy
// is closed already.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(client) {
			continue
		}
		p.wg.Add(1)
		go p.serve(client)
	}
}

// chunk is what a client wrote, and when the server is to get it.
type chunk struct {
	b   []byte
	due time.Time
}

// serve proxies one client connection: client to server through a queue
// of delayed chunks, server to client as it comes.
func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	defer p.untrack(client)
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	if !p.track(server) {
		return
	}
	defer p.untrack(server)

	queue := make(chan chunk, 64)
	answered := make(chan struct{})
	p.wg.Add(2)
	go func() { // read the client, stamp each chunk with its due time
		defer p.wg.Done()
		defer close(queue)
		var last time.Time
		for {
			buf := make([]byte, 32<<10)
			n, err := client.Read(buf)
			if n > 0 {
				due := time.Now().Add(max(p.delay(), 0))
				if due.Before(last) {
					due = last // in order, as a connection delivers
				}
				last = due
				p.addQueued(1)
				queue <- chunk{buf[:n], due}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { // the answer goes back at once
		defer p.wg.Done()
		defer close(answered)
		_, _ = io.Copy(client, server)
		_ = client.Close() // the server is done: so is the client's side
	}()
	defer func() { <-answered }()
	// Deliver every chunk at its due time, also after the client is gone:
	// that is what the network does with what was sent.
	for c := range queue {
		time.Sleep(time.Until(c.due))
		_, err := server.Write(c.b)
		p.addQueued(-1)
		if err != nil {
			for range queue { // the server is gone: drop the rest, so the reader ends
				p.addQueued(-1)
			}
			return
		}
	}
	// The client closed its side: the server has everything it sent and
	// sees the end of it, as from a client that hung up. The connection
	// stays open until the server is done with it: closing it with the
	// server's answer unread would reset it, and a reset can discard the
	// request before the server has read it.
	if tc, ok := server.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}
