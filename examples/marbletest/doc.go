// Package marbletest is a worked example of testing your own code with
// package marble: copy marbletest_test.go next to your rxgo operator, put
// your operator in place of spaced, and write your timelines. For code
// that moves values over channels, debounce_test.go does the same for a
// hand-written channel debouncer, batch_test.go for a batcher with a
// ticker, and bucket_test.go checks the schedule of rxthrottle.Bucket.Wait
// callers, each admission sent on a channel.
//
// Run it with:
//
//	go test ./examples/marbletest/
package marbletest
