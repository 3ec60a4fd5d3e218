// Package interop holds the tests of httpthrottle's learning Transport
// against rate limiters the project did not write, run on loopback:
// go-chi/httprate (a sliding-window counter), ulule/limiter's stdlib
// middleware (a fixed window from each key's first hit, its reset in
// truncated Unix seconds) and didip/tollbooth (a token bucket that says
// its rate per second). It is a module of its own so that the root's
// go.mod does not require them.
package interop
