package redistest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelMaster is the name under which a Sentinel watches its master.
const SentinelMaster = "rxthrottle"

// Sentinel is a redis-server in sentinel mode (redis-server --sentinel,
// part of the redis-server package) that alone watches one master: with a
// quorum of 1 it promotes a replica once the master has not answered for
// the down-after time. It is a Server, stopped when the test ends.
type Sentinel struct {
	*Server
}

// StartSentinel starts a Sentinel for tb that watches master, which it
// deems down after downAfter without an answer.
func StartSentinel(tb testing.TB, master *Server, downAfter time.Duration) *Sentinel {
	tb.Helper()
	conf := filepath.Join(tb.TempDir(), "sentinel.conf") // Sentinel rewrites it
	text := fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 1\nsentinel down-after-milliseconds %s %d\nsentinel failover-timeout %s 10000\n",
		SentinelMaster, master.port, SentinelMaster, downAfter.Milliseconds(), SentinelMaster)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		tb.Fatalf("redistest: writing %s: %v", conf, err)
	}
	s := &Server{tb: tb, bin: prepare(tb), watch: conf}
	tb.Cleanup(s.Stop)
	s.launch(freePort)
	return &Sentinel{s}
}

// MasterPort returns the port of the master the Sentinel names now.
func (s *Sentinel) MasterPort() (int, error) {
	v, err := s.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", SentinelMaster)
	if err != nil {
		return 0, err
	}
	addr, ok := v.([]any)
	if !ok || len(addr) != 2 {
		return 0, fmt.Errorf("redistest: SENTINEL GET-MASTER-ADDR-BY-NAME answered %v", v)
	}
	return strconv.Atoi(fmt.Sprint(addr[1]))
}

// WaitMaster waits until the Sentinel names node the master and node says
// it is one; it fails the test after 30 seconds.
func (s *Sentinel) WaitMaster(node *Server) {
	s.tb.Helper()
	WaitFor(s.tb, fmt.Sprintf("the Sentinel names %d the master", node.port), func() error {
		port, err := s.MasterPort()
		if err != nil || port != node.port {
			return fmt.Errorf("it names %d (%v)", port, err)
		}
		if role, err := node.Do("ROLE"); err != nil || role.([]any)[0] != "master" {
			return fmt.Errorf("node %d is %v (%v)", node.port, role, err)
		}
		return nil
	})
}

// NewFailoverClient returns a client that asks the Sentinel at addr for
// the master (go-redis's failover client, a *redis.Client), with context
// deadlines bounding socket I/O. The caller closes it, with CloseClient
// for goleak.
func NewFailoverClient(addr string) *redis.Client {
	w := &dialWatch{}
	return watched(redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName:            SentinelMaster,
		SentinelAddrs:         []string{addr},
		ContextTimeoutEnabled: true,
		DialTimeout:           defaultDialTimeout,
		Dialer:                w.dialer(defaultDialTimeout), // for CloseClient
	}), w)
}
