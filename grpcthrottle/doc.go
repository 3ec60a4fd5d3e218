// Package grpcthrottle keeps gRPC clients within a quota as the server
// counts it: unary and stream client interceptors over any
// rxthrottle.Limiter (a *rxthrottle.Bucket, a Redis-backed
// *redisstore.Bucket shared by several processes).
//
// Every RPC waits, with its own context, for a token, holds it while in
// flight and releases it when the server's answer is back, so that the
// server never sees more than the quota arrive in a window (SPEC.md,
// "Held tokens"); a RESOURCE_EXHAUSTED with retry info pauses the limiter,
// as a 429 with Retry-After pauses httpthrottle's Transport:
//
//	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(100, time.Second))
//	// handle err
//	it, err := grpcthrottle.New(bucket)
//	// handle err
//	conn, err := grpc.NewClient(target, append(it.DialOptions(),
//		grpc.WithTransportCredentials(creds))...)
//
// See Interceptor for what happens to the token of an RPC that fails or is
// cancelled at each point. The package is the nested module
// github.com/rxthrottle/rxthrottle/grpcthrottle, so that only programs that
// import it depend on grpc-go.
package grpcthrottle
