package learn

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dunglas/httpsfv"
)

// sfMember is one member of a Structured Field (RFC 9651) List or
// Dictionary, as the RateLimit and RateLimit-Policy headers use them:
//
//	"default";r=0;t=30       a List member: item "default", params r, t
//	remaining=0              a Dictionary member: key "remaining", item "0"
//
// Values are kept as the strings the callers parse their numbers from, so
// that one reader (parseSeconds) judges every count and delay of every
// dialect alike, structured or not.
type sfMember struct {
	key    string            // the Dictionary key; "" for a List member
	item   string            // the bare item or Dictionary value
	params map[string]string // parameter values; "?1" for a bare key
}

// parseMembers parses a List or, failing that, a Dictionary field value
// with github.com/dunglas/httpsfv, which implements RFC 9651 strictly: a
// garbled header (an unterminated string, an upper-case key, an empty
// member) is an error, reported rather than half-read. A List is tried
// first because `default;r=0` is both a List and a Dictionary and the
// RateLimit fields of the later drafts are Lists; `limit=10, remaining=0`
// (draft -07) is a Dictionary only. An empty value is an error too: the
// header was sent, so it meant something we cannot read.
func parseMembers(v string) ([]sfMember, error) {
	if v == "" {
		return nil, errors.New("empty value")
	}
	list, lerr := httpsfv.UnmarshalList([]string{v})
	if lerr == nil {
		members := make([]sfMember, 0, len(list))
		for _, m := range list {
			item, ok := m.(httpsfv.Item)
			if !ok {
				return nil, errors.New("an inner list is not a quota")
			}
			members = append(members, sfMember{item: bareString(item.Value), params: paramStrings(item.Params)})
		}
		return members, nil
	}
	dict, derr := httpsfv.UnmarshalDictionary([]string{v})
	if derr != nil {
		return nil, lerr // the List's error: the form the later drafts use
	}
	members := make([]sfMember, 0, len(dict.Names()))
	for _, k := range dict.Names() {
		m, _ := dict.Get(k)
		item, ok := m.(httpsfv.Item)
		if !ok {
			return nil, fmt.Errorf("member %s: an inner list is not a quota", k)
		}
		members = append(members, sfMember{key: k, item: bareString(item.Value), params: paramStrings(item.Params)})
	}
	return members, nil
}

// paramStrings returns p's values as strings, or nil when there are none.
func paramStrings(p *httpsfv.Params) map[string]string {
	if p == nil || len(p.Names()) == 0 {
		return nil
	}
	out := make(map[string]string, len(p.Names()))
	for _, k := range p.Names() {
		v, _ := p.Get(k)
		out[k] = bareString(v)
	}
	return out
}

// bareString writes a bare item the way a header would: integers and
// decimals as decimal numbers, strings and tokens as their text, a byte
// sequence (the IETF partition key) as its base64, true as "?1".
func bareString(v any) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		return x
	case httpsfv.Token:
		return string(x)
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case bool:
		if x {
			return "?1"
		}
		return "?0"
	case httpsfv.DisplayString:
		return string(x)
	}
	return fmt.Sprint(v)
}

// parseLenientList reads a List that is no valid Structured Field only
// because a member carries more than one string before its parameters,
// `"fixed window";"api";q=500;w=300` (Hugging Face's RateLimit-Policy):
// the last string is taken as the member's item (the name a RateLimit
// member joins it by) and the key=value segments as its parameters. Any
// other flaw (an unterminated string, an empty segment, a bad parameter)
// is still an error.
func parseLenientList(v string) ([]sfMember, error) {
	var out []sfMember
	for _, raw := range splitOutsideQuotes(v, ',') {
		var m sfMember
		for j, seg := range splitOutsideQuotes(raw, ';') {
			seg = trimOWS(seg)
			if j > 0 && !strings.HasPrefix(seg, `"`) { // a parameter
				item, err := httpsfv.UnmarshalItem([]string{"x;" + seg})
				if err != nil {
					return nil, err
				}
				if m.params == nil {
					m.params = map[string]string{}
				}
				for _, name := range item.Params.Names() {
					pv, _ := item.Params.Get(name)
					m.params[name] = bareString(pv)
				}
				continue
			}
			item, err := httpsfv.UnmarshalItem([]string{seg})
			if err != nil {
				return nil, err
			}
			m.item = bareString(item.Value)
		}
		out = append(out, m)
	}
	return out, nil
}

// splitOutsideQuotes splits s at each sep that is not inside a quoted
// string (a backslash escapes the next character there); an unterminated
// string is left to the item parser to reject.
func splitOutsideQuotes(s string, sep byte) []string {
	var parts []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case quoted && s[i] == '\\':
			i++
		case s[i] == '"':
			quoted = !quoted
		case !quoted && s[i] == sep:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// trimOWS drops the spaces and tabs around s.
func trimOWS(s string) string { return strings.Trim(s, " \t") }
