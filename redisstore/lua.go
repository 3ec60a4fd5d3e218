package redisstore

import (
	"embed"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// luaFiles are the scripts' sources: one file per operation (lua/*.lua,
// each with a header that says what it does, its KEYS, ARGV and reply).
//
//go:embed lua/*.lua
var luaFiles embed.FS

// The scripts sent to Redis are composed from luaFiles once, when the
// package is initialised (luaScript), by two rules:
//
//   - a line "--#include NAME" is replaced by the composed text of
//     lua/NAME (which may include others, but not itself), or, for NAME
//     "go:constants", by the Lua spelling of the Go constants the scripts
//     share (luaConstants), so that each has one definition;
//   - full-line comments and blank lines are left out: the documentation
//     stays in the files, Redis gets the code. (The files use no long
//     strings nor block comments, which this would cut.)
//
// So a script is its file with its includes written out in place, and a
// piece of code shared by several scripts (the ends of admissions, the
// latest live departure, a schedule's init) is one file included where
// it runs: inline, in the including script's scope (a Lua function would
// be a closure over the script's locals, which costs more than the work
// itself). The includes are one level of text, not of scope: a fragment
// reads and writes the locals the includer names in its header.
const luaInclude = "--#include "

// luaScript returns the script composed from lua/name. It panics if the
// files are malformed: they are part of the package, and TestLuaCompose
// composes every one.
func luaScript(name string) *redis.Script {
	src, err := composeLua(luaFiles, name, nil)
	if err != nil {
		panic(err)
	}
	return redis.NewScript(src)
}

// composeLua composes lua/name of fsys by the rules above; within lists
// the files being composed (an include of one of them is a cycle).
func composeLua(fsys fs.FS, name string, within []string) (string, error) {
	for _, w := range within {
		if w == name {
			return "", fmt.Errorf("redisstore: lua/%s includes itself (through %s)", name, strings.Join(within, ", "))
		}
	}
	raw, err := fs.ReadFile(fsys, "lua/"+name)
	if err != nil {
		return "", fmt.Errorf("redisstore: %v", err)
	}
	var b strings.Builder
	for line := range strings.Lines(string(raw)) {
		text := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(text, luaInclude):
			inc := strings.TrimSpace(strings.TrimPrefix(text, luaInclude))
			if inc == "go:constants" {
				b.WriteString(luaConstants())
				continue
			}
			sub, err := composeLua(fsys, inc, append(within, name))
			if err != nil {
				return "", err
			}
			b.WriteString(sub)
		case text == "" || strings.HasPrefix(text, "--"):
		default:
			b.WriteString(strings.TrimRight(line, " \t\r\n"))
			b.WriteByte('\n')
		}
	}
	return b.String(), nil
}

// luaConstants is the Lua spelling of the Go constants the schedule's
// scripts share, as locals: the long sentinel of done (scripts.go), the
// completions past which done becomes a skiplist, confBound and leaseLive
// in µs, and leaseLive in ms (the expiry of the leaseholders' ZSET).
func luaConstants() string {
	return "local SENTINEL = '" + doneSentinel + "'\n" +
		"local SKIPLIST_AT = " + strconv.Itoa(skiplistAt) + "\n" +
		"local CONF_BOUND = " + strconv.FormatInt(micros(confBound), 10) + "\n" +
		"local LEASE_LIVE = " + strconv.FormatInt(micros(leaseLive), 10) + "\n" +
		"local LEASE_LIVE_MS = " + strconv.FormatInt(leaseLive.Milliseconds(), 10) + "\n"
}
