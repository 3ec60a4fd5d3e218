package learn

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"

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
