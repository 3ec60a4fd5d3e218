// Package example holds what the example programs under examples/ share,
// so that each program keeps only its own story: the command-line plumbing
// (NewFlagSet, Parse, Main), the local HTTP server they talk to (Loopback,
// and InMemory for tests on virtual time), and the check that README.md's
// sample output is what a program prints (READMEBlock, MatchSample).
//
// It is internal: the examples are not an API, and neither is this.
package example
