package rxthrottle

// MaxInWindow lends the SPEC reference helper of spec_test.go to the tests
// of package rxthrottle_test.
var MaxInWindow = maxInWindow
