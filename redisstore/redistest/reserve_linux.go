package redistest

import (
	"fmt"
	"syscall"
)

// reserve binds a socket to 127.0.0.1:port (port 0: one the kernel
// chooses) without listening on it, and returns the port and the socket's
// release. While it is held the kernel gives the port to nobody else: it
// never picks a port a socket is bound to, for another process's bind to
// port 0 (a freePort, an httptest server, a gRPC listener) or for its
// outgoing connections, and the bind fails if anything has the port
// already. The socket is bound without SO_REUSEADDR, so that the bind
// finds any socket on the port (TIME_WAIT ones too), and then given it, so
// that the port's own redis-server, which binds with SO_REUSEADDR, may
// listen on it beside the reservation: Linux lets a SO_REUSEADDR socket
// bind a port whose other sockets all have it and none listens. A server
// that keeps its reservation from launch to the test's end keeps its port
// while it is stopped, for its Start.
func reserve(port int) (int, func(), error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, nil, fmt.Errorf("reserving port %d: %w", port, err)
	}
	release := func() { _ = syscall.Close(fd) }
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		release()
		return 0, nil, fmt.Errorf("reserving port %d: %w", port, err)
	}
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		release()
		return 0, nil, fmt.Errorf("reserving port %d: %w", port, err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		release()
		return 0, nil, fmt.Errorf("reserving port %d: %w", port, err)
	}
	return sa.(*syscall.SockaddrInet4).Port, release, nil
}

// reserves says whether reserve keeps the port from others (Linux).
const reserves = true
