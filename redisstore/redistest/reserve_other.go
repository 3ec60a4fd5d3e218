//go:build !linux

package redistest

import (
	"net"
	"strconv"
)

// reserve finds port free (port 0: one the kernel chooses) by listening on
// it for a moment, and keeps nothing: outside Linux a bound socket would
// keep the server's own redis-server off its port, so another process may
// take the port of a stopped server before its Start.
func reserve(port int) (int, func(), error) {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return 0, nil, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, func() {}, nil
}

// reserves says whether reserve keeps the port from others (Linux).
const reserves = false
