package httpthrottle

import (
	"cmp"
	"errors"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// wire follows one call of the base RoundTripper on the wire, through the
// net/http/httptrace hooks that net/http's Transport (HTTP/1 and HTTP/2)
// calls: each connection an attempt gets (GetConn, GotConn) and whether it
// wrote its request's headers (WroteHeaders). With it the Transport knows
// two things the base's answer does not say:
//
//   - whether a failed attempt can still arrive at the server: not if its
//     headers were never written (a request without its headers cannot be
//     counted), so its token goes back unused; otherwise the token is held
//     past the error (Transport.afterWrite);
//   - whether the base sent the request again by itself: net/http re-sends
//     an idempotent request on a new connection when a reused one drops
//     before answering, inside one RoundTrip. The server may have counted
//     the first attempt, so the second waits for a token of its own, in
//     the hook, before it gets a connection (GetConn) or, for HTTP/2's own
//     retries, before it writes (GotConn).
//
// A base that reports nothing (not net/http, or a test double) gives no
// events: then every error is taken as possibly written, the safe side.
type wire struct {
	t     *Transport
	req   *http.Request // the outgoing request, with the hooks in its context
	wait  *http.Request // the request a re-send waits for its token with: its caller's context
	key   string
	timer *attemptTimer // nil without WithAttemptTimeout
	sent  time.Time     // when the call went to the base (its answer's headers are read against it)

	// known is true when the base is net/http's Transport on http or
	// https, which reports every connection through the trace: no event
	// then means nothing was written.
	known bool

	mu        sync.Mutex
	tok       rxthrottle.Token // the current attempt's token
	events    bool             // the base reported a connection event
	conn      bool             // the current attempt has a connection
	netConn   net.Conn         // the current attempt's connection, if the base said
	h2        bool             // the current attempt is a stream of an HTTP/2 connection
	wrote     bool             // the current attempt wrote its headers
	failed    error            // a re-send found no token: no further attempt may write
	abandoned bool             // the caller gave up (abandon): no further attempt may write
	dropped   bool             // after abandon, the base saw the connection drop
	refused   bool             // after abandon, the drop was HTTP/2's refusal of the stream
}

// errGaveUp stops a re-send after the caller gave up on the call.
var errGaveUp = errors.New("httpthrottle: the caller gave up on the request")

// newWire returns the wire of a call of out (token tok) and out with the
// hooks in its context; a re-send waits for its token with wait's context.
func (t *Transport) newWire(out, wait *http.Request, key string, tok rxthrottle.Token, timer *attemptTimer) (*wire, *http.Request) {
	w := &wire{t: t, wait: wait, key: key, tok: tok, timer: timer, sent: t.cfg.clock.Now()}
	if _, ok := t.cfg.base.(*http.Transport); ok && out.URL != nil {
		w.known = out.URL.Scheme == "http" || out.URL.Scheme == "https"
	}
	w.req = out.WithContext(httptrace.WithClientTrace(out.Context(), &httptrace.ClientTrace{
		GetConn:      w.getConn,
		GotConn:      w.gotConn,
		WroteHeaders: w.wroteHeaders,
	}))
	return w, w.req
}

// getConn starts an attempt. After an attempt that had a connection, this
// is the base trying again: a new attempt, which needs a token of its own
// if the last one may have been written.
func (w *wire) getConn(string) {
	w.mu.Lock()
	w.events = true
	again := w.conn
	w.mu.Unlock()
	if again {
		w.nextAttempt()
	}
}

// gotConn is an attempt getting its connection. A second connection
// without a GetConn between is HTTP/2 trying again by itself: a new
// attempt, as in getConn. After a re-send that found no token, the
// connection is closed before anything is written on it: the base's write
// fails and nothing reaches the server.
func (w *wire) gotConn(info httptrace.GotConnInfo) {
	w.getConn("")
	h2 := w.t.http2(w.req, info.Conn)
	w.mu.Lock()
	w.conn, w.netConn, w.h2 = true, info.Conn, h2
	failed := w.failed
	w.mu.Unlock()
	if failed != nil {
		if info.Conn != nil {
			_ = info.Conn.Close()
		}
	}
}

func (w *wire) wroteHeaders() {
	w.mu.Lock()
	w.wrote = true
	w.mu.Unlock()
}

// nextAttempt ends the current attempt, which failed (the base tries
// again), and gets the next one its token: the same one if the failed
// attempt wrote nothing; otherwise that one is held past its error and the
// next waits for a new one, with the attempt's context and without a
// connection held, so the attempt timeout starts again at its grant.
//
// The base tries again after the peer dropped a connection (net/http
// re-sends an HTTP/1 request only after a read from the server failed or
// the server closed the connection): so a written attempt's token is
// released as at the peer's close (Transport.peerClosed). It re-sends an
// HTTP/2 request only when the server said the stream was not processed
// (REFUSED_STREAM, a GOAWAY below it; and, as net/http reads it, a
// PROTOCOL_ERROR reset, golang/go#47635): that token is released at once,
// through a proxy too (Transport.refusedStream). After the caller gave up
// (abandon), no attempt follows: the drop is recorded for the attempt's
// owner.
func (w *wire) nextAttempt() {
	w.mu.Lock()
	prev, wrote, failed, h2 := w.tok, w.wrote, w.failed, w.h2
	w.conn, w.wrote, w.h2 = false, false, false
	if w.abandoned {
		w.dropped = w.dropped || wrote
		w.refused = w.refused || (wrote && h2)
		w.failed = cmp.Or(w.failed, errGaveUp)
		w.mu.Unlock()
		return
	}
	if wrote {
		w.tok = rxthrottle.Token{}
	}
	w.mu.Unlock()
	if !wrote || failed != nil {
		return
	}
	if h2 {
		w.t.refusedStream(prev)
	} else {
		w.t.peerClosed(w.req, prev)
	}
	w.timer.stop()
	tok, err := w.t.wait(w.wait, w.key, !w.t.cfg.departure)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case err != nil:
		w.failed = err
	case w.abandoned: // the caller gave up while it waited: nothing goes
		tok.Cancel()
		w.failed = cmp.Or(w.failed, errGaveUp)
	default:
		w.tok = tok
		w.t.resends.Add(1)
		w.timer.restart()
	}
}

// abandon detaches the call from its caller, who gave up on it: it
// returns the current attempt's token (zero if it has none: a re-send is
// waiting, or found none), whether that attempt may have been written, and
// its connection (nil on HTTP/2, where other streams share it). No
// further attempt takes a token or writes; finish must not be called
// after it.
func (w *wire) abandon() (tok rxthrottle.Token, written bool, conn net.Conn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.abandoned = true
	tok, w.tok = w.tok, rxthrottle.Token{}
	if w.h2 { // other streams share it: not ours to close
		return tok, w.writtenLocked(), nil
	}
	return tok, w.writtenLocked(), w.netConn
}

// writtenLocked reports whether the current attempt may have been
// written: its headers went, or the base reports nothing. It requires
// that w.mu is held.
func (w *wire) writtenLocked() bool { return w.wrote || !(w.known || w.events) }

// state reports, after abandon, whether the abandoned attempt may have
// been written and whether the base saw its connection drop.
func (w *wire) state() (written, dropped bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writtenLocked() || w.dropped, w.dropped
}

// refusedAfterAbandon reports whether, after abandon, the base sent the
// abandoned attempt again because HTTP/2 refused its stream unprocessed.
func (w *wire) refusedAfterAbandon() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.refused
}

// finish ends the call: the token of the last attempt is released if the
// answer is here (err == nil), given back if its request was never
// written, released as at an answer if the peer closed or reset the
// connection after it was written (Transport.peerClosed), and otherwise
// held past the error. It returns the error that stopped a re-send, if one
// did.
func (w *wire) finish(err error) error {
	w.mu.Lock()
	tok, failed := w.tok, w.failed
	written := w.writtenLocked()
	w.tok = rxthrottle.Token{}
	w.mu.Unlock()
	switch {
	case err == nil:
		tok.Release()
	case failed != nil:
		// The re-send never got a token; the one before it is held.
	case written && w.t.peerGone(w.req, err):
		w.t.peerClosed(w.req, tok)
	case written:
		w.t.afterWrite(tok)
	default:
		w.t.unwritten.Add(1)
		tok.Cancel()
	}
	return failed
}
