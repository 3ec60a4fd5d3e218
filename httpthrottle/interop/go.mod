module github.com/rxthrottle/rxthrottle/httpthrottle/interop

go 1.26.0

replace github.com/rxthrottle/rxthrottle => ../..

require (
	github.com/didip/tollbooth/v7 v7.0.2
	github.com/go-chi/httprate v0.16.1
	github.com/rxthrottle/rxthrottle v0.0.0-00010101000000-000000000000
	github.com/sethvargo/go-limiter v0.7.1
	github.com/stretchr/testify v1.12.1
	github.com/ulule/limiter/v3 v3.11.2
)

require (
	github.com/benbjohnson/clock v1.3.5 // indirect
	github.com/cenkalti/backoff/v4 v4.0.0 // indirect
	github.com/dunglas/httpsfv v1.1.2 // indirect
	github.com/emirpasic/gods v1.12.0 // indirect
	github.com/go-pkgz/expirable-cache/v3 v3.0.0 // indirect
	github.com/klauspost/cpuid/v2 v2.2.10 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/reactivex/rxgo/v2 v2.5.0 // indirect
	github.com/stretchr/objx v0.5.3 // indirect
	github.com/teivah/onecontext v0.0.0-20200513185103-40f981bfd775 // indirect
	github.com/zeebo/xxh3 v1.0.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.30.0 // indirect
)
