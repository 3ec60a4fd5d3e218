module github.com/rxthrottle/rxthrottle

go 1.25.0

require (
	github.com/benbjohnson/clock v1.3.5
	github.com/dunglas/httpsfv v1.1.2
	github.com/reactivex/rxgo/v2 v2.5.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cenkalti/backoff/v4 v4.0.0 // indirect
	github.com/emirpasic/gods v1.12.0 // indirect
	github.com/stretchr/objx v0.5.3 // indirect
	github.com/teivah/onecontext v0.0.0-20200513185103-40f981bfd775 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
