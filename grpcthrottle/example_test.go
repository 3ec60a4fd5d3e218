package grpcthrottle_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/grpcthrottle"
)

// A gRPC client kept within 100 RPCs a second, as the server counts them:
// each RPC holds its token until its answer is back. The server here is
// grpc-go's health service on a loopback port.
func Example() {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go srv.Serve(lis)
	defer srv.Stop()

	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(100, time.Second))
	if err != nil {
		panic(err)
	}
	it, err := grpcthrottle.New(bucket)
	if err != nil {
		panic(err)
	}
	conn, err := grpc.NewClient(lis.Addr().String(),
		append(it.DialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		panic(err)
	}
	defer conn.Close()

	client := healthpb.NewHealthClient(conn)
	for range 3 {
		resp, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{})
		if err != nil {
			panic(err)
		}
		fmt.Println(resp.GetStatus())
	}
	fmt.Println("sent:", it.Stats().Sent, "held:", bucket.Stats().Held)
	// Output:
	// SERVING
	// SERVING
	// SERVING
	// sent: 3 held: 0
}
