package integration_test

import (
	"context"
	"fmt"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/grpcthrottle"
	rxotel "github.com/rxthrottle/rxthrottle/otel"
	rxprom "github.com/rxthrottle/rxthrottle/prometheus"
	"github.com/rxthrottle/rxthrottle/redisstore"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// Every field of the other modules' Stats has its figure.
func TestEveryFieldIsAFigure(t *testing.T) {
	for _, s := range []rxthrottle.Figures{grpcthrottle.Stats{}, redisstore.LeaseStats{}} {
		assert.Len(t, s.Figures(), reflect.TypeOf(s).NumField(), "%T", s)
	}
}

// grpcCalls makes n health checks on a loopback gRPC server through an
// Interceptor, and returns it.
func grpcCalls(t *testing.T, n int) *grpcthrottle.Interceptor {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	b, err := rxthrottle.NewBucket(rxthrottle.Per(100, time.Second))
	require.NoError(t, err)
	ic, err := grpcthrottle.New(b)
	require.NoError(t, err)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(ic.Unary), grpc.WithStatsHandler(ic.StatsHandler()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	for range n {
		_, err := healthpb.NewHealthClient(conn).Check(t.Context(), &healthpb.HealthCheckRequest{})
		require.NoError(t, err)
	}
	return ic
}

// leasedBucket admits n callers through a leasing redisstore Bucket and
// returns it with its Leased count, which is more than 0.
func leasedBucket(t *testing.T, n int) (*redisstore.Bucket, uint64) {
	t.Helper()
	rdb := redistest.Start(t).Client(t)
	b, err := redisstore.NewBucket(rdb, "figures", rxthrottle.Per(1000, time.Second), redisstore.WithLease(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	for range n {
		require.NoError(t, b.Wait(t.Context()))
	}
	leased := b.Leased()
	require.Positive(t, leased, "of %d callers", n)
	return b, leased
}

// rxprom exports grpcthrottle's Interceptor.Stats and redisstore's
// LeaseStats through their Figures, without importing either module.
func TestRxpromOtherModulesStats(t *testing.T) {
	ic := grpcCalls(t, 3)
	b, leased := leasedBucket(t, 50)
	c, err := rxprom.NewCollector()
	require.NoError(t, err)
	require.NoError(t, rxprom.AddStats(c, "api", ic.Stats))
	require.NoError(t, c.AddLimiter("shared", b))
	require.NoError(t, rxprom.AddStats(c, "shared", b.LeaseStats))

	got := exposition(t, c)
	for _, line := range []string{
		`rxthrottle_grpc_sent_total{interceptor="api"} 3`,
		`rxthrottle_grpc_failed_total{interceptor="api"} 0`,
		`rxthrottle_grpc_holding_past_error{interceptor="api"} 0`,
		`rxthrottle_grpc_kept_open{interceptor="api"} 0`,
		`rxthrottle_grpc_given_up_kept_open_total{interceptor="api"} 0`,
		fmt.Sprintf(`rxthrottle_leased_total{limiter="shared"} %d`, leased),
		`rxthrottle_admitted_total{limiter="shared"} 50`,
	} {
		assert.Contains(t, got, "\n"+line+"\n")
	}
}

// rxotel exports them the same way.
func TestRxotelOtherModulesStats(t *testing.T) {
	ic := grpcCalls(t, 3)
	b, leased := leasedBucket(t, 50)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m, err := rxotel.New(rxotel.WithMeterProvider(mp))
	require.NoError(t, err)
	require.NoError(t, rxotel.AddStats(m, "api", ic.Stats))
	require.NoError(t, m.AddLimiter("shared", b))
	require.NoError(t, rxotel.AddStats(m, "shared", b.LeaseStats))

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(t.Context(), &rm))
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			if sum, ok := mt.Data.(metricdata.Sum[int64]); ok {
				for _, p := range sum.DataPoints {
					for _, kv := range p.Attributes.ToSlice() {
						got[mt.Name+"{"+string(kv.Key)+"="+kv.Value.AsString()+"}"] = p.Value
					}
				}
			}
		}
	}
	assert.Equal(t, int64(3), got["rxthrottle.grpc.sent{interceptor=api}"])
	assert.Contains(t, got, "rxthrottle.grpc.failed{interceptor=api}")
	assert.Equal(t, int64(leased), got["rxthrottle.leased{limiter=shared}"])
	assert.Equal(t, int64(50), got["rxthrottle.admitted{limiter=shared}"])
}
