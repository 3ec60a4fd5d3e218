package httpthrottle

// ResetConn is resetConn, for the tests of the reset close.
var ResetConn = resetConn
