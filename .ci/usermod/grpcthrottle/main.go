// A user's program of grpcthrottle: a health check on a loopback gRPC
// server, through a client whose interceptor holds a token per RPC.
package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/grpcthrottle"
)

func main() {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(5, time.Second))
	if err != nil {
		log.Fatal(err)
	}
	ic, err := grpcthrottle.New(bucket)
	if err != nil {
		log.Fatal(err)
	}
	conn, err := grpc.NewClient(lis.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(ic.Unary), grpc.WithStatsHandler(ic.StatsHandler()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("grpcthrottle: sent", ic.Stats().Sent)
}
