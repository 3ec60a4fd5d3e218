package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/examples/internal/example"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// The two clients, as the API knows them (the X-Client header).
const (
	unthrottled = "unthrottled"
	throttled   = "throttled"
)

// run starts the API, sends the batch as each client, and writes the story,
// the progress, the timeline and the statistics to stdout.
func run(ctx context.Context, cfg config, stdout io.Writer) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	if cfg.serve == nil {
		cfg.serve = example.Loopback("apicalls")
	}
	out := newPrinter(stdout, cfg.live)
	a, err := newAPI(cfg, out)
	if err != nil {
		return err
	}
	base, url, stop, err := cfg.serve(a.handler)
	if err != nil {
		return err
	}
	defer stop()

	if err := runOneByOne(ctx, cfg, out, a, base, url); err != nil {
		return err
	}
	if err := runInFlight(ctx, cfg, out, a, base, url); err != nil {
		return err
	}
	return out.failed()
}

// runOneByOne sends the batch one request at a time as each client, the
// plain one and the throttled one, and writes their story, timeline,
// statistics and moral.
func runOneByOne(ctx context.Context, cfg config, out *printer, a *api, base http.RoundTripper, url string) error {
	out.printf(`Calling an API that has a quota, without and with rxthrottle

The API at %s allows each client %d requests per %v.
A client that goes over is refused (429 Too Many Requests) and shut out for
%v%s.
Two clients send it the same %s, one by one:

  %-11s  a plain http.Client, which retries a refused request after %v
  %-11s  the same client, its Transport an httpthrottle.Transport over
               rxthrottle.NewBucket(rxthrottle.Per(%d, %v)): each request
               waits for a token of the API's own quota, so none goes over

Times are demo time, running %gx faster than real time (-speed): the %v
window lasts %v.
`, url, cfg.rate, cfg.window, cfg.block, price(cfg), plural(cfg.count, "request"),
		unthrottled, cfg.retry, throttled, cfg.rate, cfg.window,
		cfg.speed, cfg.window, cfg.real(cfg.window).Round(time.Millisecond))

	// Unthrottled: the client learns the quota from the API's refusals.
	out.printf("\n%s\n", unthrottled)
	plain, err := sendBatch(ctx, cfg, &http.Client{Transport: base}, url, unthrottled, a.begin(newProgress(out, cfg, unthrottled)))
	if err != nil {
		return err
	}
	out.printf("  done in %s: %s\n", clock(plain.elapsed), summary(plain))

	// Throttled: the client keeps to the quota before sending. The API
	// counts requests when they arrive; the Transport holds each token
	// until the request's answer is back, so a token only renews a window
	// after the API has counted its request. The API's answer to the last
	// request of a window also says the quota is spent, and the Transport
	// pauses the bucket until the API's window is over.
	prog := newProgress(out, cfg, throttled)
	bucket, tr, err := newThrottled(cfg, base, out, prog)
	if err != nil {
		return err
	}
	out.printf("\n%s\n", throttled)
	paced, err := sendBatch(ctx, cfg, &http.Client{Transport: tr}, url, throttled, a.begin(prog))
	if err != nil {
		return err
	}
	out.printf("  done in %s: %s\n\n", clock(paced.elapsed), summary(paced))

	var tl strings.Builder
	writeTimeline(&tl, cfg.slot, []series{{unthrottled, a.log(unthrottled)}, {throttled, a.log(throttled)}})
	out.printf("%s\n", tl.String())
	writeStats(out, cfg, bucket.Stats(), tr.Stats(), a)
	out.printf("\n%s\n", moral(cfg, plain, paced))
	return nil
}

// newThrottled returns the throttled client's bucket and Transport over
// base, reporting its pauses to out on prog's clock.
func newThrottled(cfg config, base http.RoundTripper, out *printer, prog *progress) (*rxthrottle.Bucket, *httpthrottle.Transport, error) {
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(cfg.rate, cfg.real(cfg.window)))
	if err != nil {
		return nil, nil, err
	}
	prog.waiting = func() bool { return bucket.Stats().Queued > 0 }
	tr, err := httpthrottle.NewTransport(bucket,
		httpthrottle.WithBase(base),
		httpthrottle.OnPushback(func(status int, until time.Time) {
			why := "RateLimit-Remaining: 0"
			if status != http.StatusOK {
				why = fmt.Sprintf("%d %s", status, http.StatusText(status))
			}
			out.event(prog.now(), "%s from the API: the bucket pauses until %s", why, clock(cfg.demo(until.Sub(prog.start))))
		}),
		// The API's quota headers count whole seconds of real time,
		// too coarse for demo time: at -speed 200 "RateLimit-Reset: 1"
		// means 3m20s. Cap the pauses they cause at one window, the
		// longest a spent quota of this API can take to renew.
		httpthrottle.WithMaxPause(cfg.real(cfg.window)),
		httpthrottle.OnHeaderError(nil),
	)
	if err != nil {
		return nil, nil, err
	}
	return bucket, tr, nil
}

// runInFlight sends the batch from many workers at once over a network
// that delays each request, as two clients: tokens held until the answer,
// and tokens taken at the departure.
func runInFlight(ctx context.Context, cfg config, out *printer, a *api, base http.RoundTripper, url string) error {
	out.printf(`
Many requests in flight, and a network that delays them

Now %d workers send the same %s at once, and the network delays each
request on its way to the API by a random %v to %v (seed %d, -seed). Two
clients, at the API's own quota of %d per %v:

  %-11s  httpthrottle.Transport as it comes: each request holds its token
               until its answer is back, and the token renews a window later
  %-11s  rxthrottle.NewBucket(rxthrottle.Per(%d, %v)) and bucket.Wait
               before each request: a token renews a window after its
               request left
`, cfg.workers, plural(cfg.count, "request"), time.Duration(0), cfg.delay, cfg.seed, cfg.rate, cfg.window,
		held, departure, cfg.rate, cfg.window)
	heldOut, depOut, err := runConcurrent(ctx, cfg, base, url, a, out)
	if err != nil {
		return err
	}
	var tl strings.Builder
	writeTimeline(&tl, cfg.slot, []series{{held, a.log(held)}, {departure, a.log(departure)}})
	out.printf("\n%s\n", tl.String())
	out.printf("%s\n", moralConcurrent(cfg, heldOut, depOut))
	return nil
}

// moralConcurrent draws the conclusion from the concurrent run.
func moralConcurrent(cfg config, heldOut, depOut outcome) string {
	var s string
	switch {
	case heldOut.refused > 0:
		s = fmt.Sprintf("The held client was refused %s: that should not happen (please report it, with the flags and seed).",
			plural(heldOut.refused, "time"))
	case depOut.refused == 0:
		s = "Neither client was refused this time: the departure bucket is refused when a window's first requests are delayed more than the next window's. Try another -seed or a longer -delay."
	default:
		s = fmt.Sprintf("The held client was never refused. The departure bucket was refused %s and shut out: it sent the next window's requests exactly a window after the first ones left, but the API counts requests when they arrive, and some of those arrived before the first ones' window was over. Holding each token until the answer is back closes that gap whatever the network does.",
			plural(depOut.refused, "time"))
	}
	return wrap(s, 76)
}

// price says what a cool-down costs next to the window it punishes.
func price(cfg config) string {
	if cfg.block <= cfg.window {
		return ""
	}
	return fmt.Sprintf(", %.3gx the window: going over a quota can cost far more than keeping to it", float64(cfg.block)/float64(cfg.window))
}

// summary sums up a client's outcome in a line.
func summary(o outcome) string {
	s := fmt.Sprintf("%d of %d accepted, %s", o.accepted, o.accepted+o.gaveUp, plural(o.refused, "refusal"))
	if o.gaveUp > 0 {
		s += fmt.Sprintf(", %d given up", o.gaveUp)
	}
	return s
}

// writeStats prints the counters of the throttled client's bucket and
// Transport, and of the API's guard. The limiter's durations are real time;
// they are shown in demo time like everything else.
func writeStats(out *printer, cfg config, b rxthrottle.Stats, t httpthrottle.TransportStats, a *api) {
	g := a.guard.Stats()
	mean := time.Duration(0)
	if b.Waited > 0 {
		mean = b.TotalWait / time.Duration(b.Waited)
	}
	out.printf(`Statistics
  %s client's bucket (rxthrottle.Bucket.Stats)
    admitted %d, waited %d (longest %s, mean %s), queued %d, free tokens %d
  %s client's Transport (httpthrottle.Transport.Stats)
    sent %d, pushbacks %d (pauses the API asked for), retries %d
  the API's guard (guard.Guard.Stats)
    checks %d: allowed %d, refused %d; blocks %d; keys live %d, blocked %d
`,
		throttled, b.Admitted, b.Waited, clock(cfg.demo(b.MaxWait)), clock(cfg.demo(mean)), b.Queued, b.Free,
		throttled, t.Sent, t.Pushbacks, t.Retries,
		g.Checks, g.Allowed, g.Refused, g.Blocks, g.KeysLive, g.KeysBlocked)
}

// moral draws the conclusion from the two outcomes.
func moral(cfg config, plain, paced outcome) string {
	shut := fmt.Sprintf("shut it out for the %v cool-down", cfg.block)
	if cfg.block <= cfg.window {
		shut = "refused it until its window was over"
	}
	var s string
	switch {
	case paced.refused > 0:
		s = fmt.Sprintf("The throttled client was refused %s: its bucket counts from when requests leave, the API from when they arrive, and nothing closed the gap.",
			plural(paced.refused, "time"))
	case plain.refused == 0:
		s = "Neither client went over the quota: with this batch the API never pushed back. Try a larger -count."
	case float64(plain.elapsed) < 1.1*float64(paced.elapsed): // no speed-up worth a word
		s = fmt.Sprintf("The throttled client was never refused; the unthrottled one was refused %s, as each time it went over the quota the API %s.",
			plural(plain.refused, "time"), shut)
	default:
		s = fmt.Sprintf("The throttled client was never refused, and finished in %s instead of %s (%.1fx sooner): each time the unthrottled one went over the quota, the API %s, while the throttled one only ever waited for its next token.",
			clock(paced.elapsed), clock(plain.elapsed), float64(plain.elapsed)/float64(paced.elapsed), shut)
	}
	return wrap(s, 76)
}

// wrap breaks s into lines of at most width columns, between words.
func wrap(s string, width int) string {
	var b strings.Builder
	col := 0
	for _, word := range strings.Fields(s) {
		switch {
		case col == 0:
		case col+1+len(word) > width:
			b.WriteByte('\n')
			col = 0
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(word)
		col += len(word)
	}
	return b.String()
}
