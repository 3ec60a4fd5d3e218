module github.com/rxthrottle/rxthrottle/bench

go 1.26.0

require (
	github.com/go-redis/redis_rate/v10 v10.0.1
	github.com/redis/go-redis/v9 v9.23.0
	github.com/rxthrottle/rxthrottle v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.12.1
	go.uber.org/ratelimit v0.3.1
	golang.org/x/time v0.16.0
)

require github.com/dunglas/httpsfv v1.1.2 // indirect

require (
	github.com/benbjohnson/clock v1.3.5 // indirect
	github.com/cenkalti/backoff/v4 v4.0.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/emirpasic/gods v1.12.0 // indirect
	github.com/reactivex/rxgo/v2 v2.5.0
	github.com/rxthrottle/rxthrottle/redisstore v0.0.0-00010101000000-000000000000
	github.com/stretchr/objx v0.5.3 // indirect
	github.com/teivah/onecontext v0.0.0-20200513185103-40f981bfd775 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

replace github.com/rxthrottle/rxthrottle => ../

replace github.com/rxthrottle/rxthrottle/redisstore => ../redisstore
