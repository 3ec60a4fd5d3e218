package httpthrottle

import (
	"bytes"
	"io"
	"net/http"
)

// rewind returns a copy of req with a fresh body from GetBody, for a retry.
func rewind(req *http.Request) (*http.Request, error) {
	out := req.Clone(req.Context())
	if req.Body == nil || req.Body == http.NoBody {
		return out, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, wrapError(err, "replaying the body of %s %s for a retry", req.Method, redactURL(req.URL))
	}
	out.Body = body
	return out, nil
}

// maxDrain bounds how much of a refused response is read before closing it:
// enough for any error page, so the connection can be reused, but a huge
// body is cut off rather than downloaded.
const maxDrain = 64 << 10

func discard(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxDrain))
	_ = body.Close()
}

// drained reads at most maxDrain of resp's body, closes it, and returns
// resp with what was read as its body: a refusal kept while its retry
// waits, without its connection.
func drained(resp *http.Response) *http.Response {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxDrain))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp
}

// closeBody closes req's body, if there is a request and it has one.
func closeBody(req *http.Request) {
	if req != nil && req.Body != nil {
		_ = req.Body.Close()
	}
}
