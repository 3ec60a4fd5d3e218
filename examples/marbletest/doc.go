// Package marbletest is a worked example of testing your own rxgo operator
// with package marble: copy marbletest_test.go next to your operator, put
// your operator in place of spaced, and write your timelines.
//
// Run it with:
//
//	go test ./examples/marbletest/
package marbletest
