// Package integration holds the tests that need several of rxthrottle's
// published modules at once: rxprom over redisstore's limiters, rxotel
// through OpenTelemetry's Prometheus exporter under rxprom's names, and
// both exporters over the Stats of every module. It is a module of its
// own that no published module requires, so a user of one integration
// gets that integration's dependencies and no other's.
package integration
