package httpthrottle

import (
	"errors"
	"strings"
)

// sfMember is one member of a Structured Field (RFC 9651) List or
// Dictionary, as the RateLimit and RateLimit-Policy headers use them:
//
//	"default";r=0;t=30       a List member: item "default", params r, t
//	remaining=0              a Dictionary member: key "remaining", item "0"
type sfMember struct {
	key    string            // the Dictionary key; "" for a List member
	item   string            // the bare item or Dictionary value, unquoted
	params map[string]string // parameter values, unquoted; "?1" for a bare key
}

// parseMembers parses a List or Dictionary field value into its members. It
// is deliberately lenient about the item types (every value stays a string
// and callers parse the numbers they need) but strict about the structure:
// an unterminated string or an empty member is an error, so a garbled header
// is reported rather than half-read.
func parseMembers(v string) ([]sfMember, error) {
	parts, err := splitOutsideQuotes(v, ',')
	if err != nil {
		return nil, err
	}
	members := make([]sfMember, 0, len(parts))
	for _, part := range parts {
		fields, _ := splitOutsideQuotes(part, ';') // quotes already checked
		head := strings.TrimSpace(fields[0])
		if head == "" {
			return nil, errors.New("empty member")
		}
		var m sfMember
		if k, val, ok := strings.Cut(head, "="); ok && isKey(k) {
			m.key, m.item = k, unquote(strings.TrimSpace(val))
		} else {
			m.item = unquote(head)
		}
		for _, p := range fields[1:] {
			p = strings.TrimSpace(p)
			k, val, ok := strings.Cut(p, "=")
			if !isKey(k) {
				return nil, errors.New("bad parameter " + p)
			}
			if m.params == nil {
				m.params = make(map[string]string)
			}
			if ok {
				m.params[k] = unquote(strings.TrimSpace(val))
			} else {
				m.params[k] = "?1"
			}
		}
		members = append(members, m)
	}
	return members, nil
}

// splitOutsideQuotes splits s at every sep that is not inside a "string"
// (where \" and \\ are escapes).
func splitOutsideQuotes(s string, sep byte) ([]string, error) {
	var parts []string
	start, inQuote := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inQuote && c == '\\':
			i++ // skip the escaped byte
		case c == '"':
			inQuote = !inQuote
		case !inQuote && c == sep:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	if inQuote {
		return nil, errors.New("unterminated string")
	}
	return append(parts, s[start:]), nil
}

// unquote returns the content of a "string" with its escapes undone, or v
// itself when it is not quoted.
func unquote(v string) string {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return v
	}
	var b strings.Builder
	for i := 1; i < len(v)-1; i++ {
		if v[i] == '\\' && i+1 < len(v)-1 {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// isKey reports whether k is a Structured Field key: lcalpha or "*", then
// lcalpha, DIGIT, "_", "-", "." or "*".
func isKey(k string) bool {
	if k == "" || !(k[0] >= 'a' && k[0] <= 'z' || k[0] == '*') {
		return false
	}
	for i := 1; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("_-.*", c) >= 0) {
			return false
		}
	}
	return true
}
