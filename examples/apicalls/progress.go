package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// printer serialises everything the demo writes: lines, and in live mode a
// status line that stays at the bottom, rewritten in place with '\r'. Lines
// come from the clients and from the API's hooks, on several goroutines.
type printer struct {
	mu     sync.Mutex
	w      io.Writer
	live   bool
	status string // the status line on screen now; live mode only
	err    error  // the first write error, reported by run
}

func newPrinter(w io.Writer, live bool) *printer { return &printer{w: w, live: live} }

// printf writes a line (or several) below the status line's place, and
// draws the status line again under it.
func (p *printer) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	shown := p.status
	p.clearLocked()
	p.writeLocked(fmt.Sprintf(format, args...))
	p.showLocked(shown)
}

// event writes one line about something that happened at demo time at.
func (p *printer) event(at time.Duration, format string, args ...any) {
	p.printf("  %6s  %s\n", clock(at), fmt.Sprintf(format, args...))
}

// setStatus replaces the status line (live mode only; plain output gets
// events and summaries, which read well in a log).
func (p *printer) setStatus(s string) {
	if !p.live {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s == p.status {
		return
	}
	if p.status == "" || s == "" {
		p.clearLocked()
		p.showLocked(s)
		return
	}
	// Overwrite in place, blanking what the old line had beyond the new.
	pad := max(utf8.RuneCountInString(p.status)-utf8.RuneCountInString(s), 0)
	p.writeLocked("\r" + s + strings.Repeat(" ", pad))
	p.status = s
}

// clearStatus removes the status line.
func (p *printer) clearStatus() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
}

// clearLocked blanks the status line; requires p.mu.
func (p *printer) clearLocked() {
	if p.status == "" {
		return
	}
	p.writeLocked("\r" + strings.Repeat(" ", utf8.RuneCountInString(p.status)) + "\r")
	p.status = ""
}

// showLocked draws s as the status line, on a line that is blank; requires
// p.mu.
func (p *printer) showLocked(s string) {
	if s == "" {
		return
	}
	p.writeLocked(s)
	p.status = s
}

// writeLocked writes s and keeps the first error; requires p.mu.
func (p *printer) writeLocked(s string) {
	if p.err != nil {
		return
	}
	if _, err := io.WriteString(p.w, s); err != nil {
		p.err = err
	}
}

// failed returns the first write error.
func (p *printer) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// progress is one client's live status: how far its batch has gone.
type progress struct {
	out   *printer
	cfg   config
	name  string
	start time.Time // set by api.begin, before the batch starts

	accepted, refused atomic.Int64
	state             atomic.Pointer[string] // what the client is doing now
	waiting           func() bool            // reports a wait for a token; may be nil

	showMu sync.Mutex // orders the reading of the figures with their display
}

// statusPeriod is how often, in real time, the live status line is
// refreshed while the client waits (it is also refreshed on every answer).
const statusPeriod = 50 * time.Millisecond

func newProgress(out *printer, cfg config, name string) *progress {
	return &progress{out: out, cfg: cfg, name: name}
}

// now is the demo time since the client started.
func (p *progress) now() time.Duration { return p.cfg.demo(time.Since(p.start)) }

func (p *progress) setState(s string) {
	p.state.Store(&s)
	p.show()
}

// show redraws the status line.
func (p *progress) show() {
	if !p.out.live {
		return
	}
	// Two goroutines show the line (the client and the ticker): without
	// the lock, a line read earlier could be written later, and the count
	// would seem to go backwards.
	p.showMu.Lock()
	defer p.showMu.Unlock()
	state := ""
	if s := p.state.Load(); s != nil {
		state = *s
	}
	if state == "" && p.waiting != nil && p.waiting() {
		state = "waiting for a token"
	}
	p.out.setStatus(fmt.Sprintf("  %-11s %6s  %d/%d accepted, %s  %s",
		p.name, clock(p.now()), p.accepted.Load(), p.cfg.count, plural(int(p.refused.Load()), "refusal"), state))
}

// run refreshes the status line until stop is closed: time moves on the
// line even while the client waits for a token or a retry.
func (p *progress) run(stop <-chan struct{}) {
	if !p.out.live {
		return
	}
	t := time.NewTicker(statusPeriod)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			p.show()
		}
	}
}
