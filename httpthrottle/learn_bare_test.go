package httpthrottle_test

import (
	"net/http"
	"net/http/httptest"
)

// bareHandler answers with h's status and body only, no header at all:
// a server that refuses with a bare 429 (or 503), saying neither its
// quota nor when to come back.
type bareHandler struct{ h http.Handler }

func (b bareHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	b.h.ServeHTTP(rec, r)
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}
