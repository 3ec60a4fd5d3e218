#!/usr/bin/env bash
# bench/run.sh takes the figures of BENCHMARKS.md: it builds each test
# binary once (go test -c), then runs R rounds, each of which runs every
# suite's binary once (-test.count 1 -test.benchmem), so that the peers and
# variants of a table are measured side by side and load that drifts over
# the minutes of a run spreads over all of them alike (-count=10 in one go
# test run would repeat each sub-benchmark back to back instead). It
# concatenates each suite's rounds into one file and feeds it to benchstat.
#
#	bench/run.sh                      # every suite, 10 rounds, -benchtime 1s
#	bench/run.sh -r 20 keyed operator # the named suites only
#	bench/run.sh -r 2 -t 100x         # a quick check that it all runs
#
# The suite redisprocs is not a benchmark: each round runs TestRedisProcs
# (P OS processes x G goroutines on one Redis key: redisstore against
# redis_rate and the EVALSHA "return 1" ceiling, with server time and CPU
# per admission) for RXTHROTTLE_REDIS_PROCS (default 1x1,1x8,4x8), each
# run RXTHROTTLE_REDIS_PROCS_TIME long (default 2s); DIR/redisprocs.txt
# keeps every round's table, and the summary gives each PxG's ratios
# round by round and their median.
#
# Options: -r ROUNDS (10), -t BENCHTIME (1s; the suites whose operation is
# large keep their own count, e.g. keyednew's 1x), -o DIR
# (bench-results/DATE-TIME). The results: DIR/machine.txt (the machine, its
# clock source and CPU, the commit, the load before and after), and for each
# suite DIR/SUITE.txt (the rounds, for benchstat) and DIR/SUITE.benchstat.
# Run it on a quiet machine: every other process's load is in the figures.
set -euo pipefail
cd "$(dirname "$0")/.."

# The suites: name, package directory, -test.bench, -test.cpu, -test.benchtime
# ("-" for the -t option's), benchstat's options ("-" for none).
suites='
peers        bench   ^BenchmarkWaitFree$                 1     -     -col /impl
core         .       ^Benchmark(WaitByN|OperatorByN)$    1     -     -
acquire      .       ^BenchmarkAcquireRelease$           1     -     -
metering     .       ^BenchmarkMetering$                 1     -     -
operator     .       ^BenchmarkOperator$                 1,2   -     -col /impl
throttlemap  .       ^BenchmarkThrottleMap$              1     -     -
keyed        .       ^BenchmarkKeyedWait$                1,2   -     -
keyednew     .       ^BenchmarkKeyedNewKeys$             1     1x    -
keyednear    .       ^BenchmarkKeyedNeighbours$          1,2   -     -
redis        bench   ^BenchmarkAdmission$                1,8   -     -col /impl
redisprocs   bench   -                                   -     -     -
redisfloor   bench   ^BenchmarkRedisFloor$               1,2,8 -     -col /impl
wake         bench   ^BenchmarkWake$                     1,2   -     -
replicaack   bench   ^BenchmarkReplicaAck$               1,8   -     -col /impl
marble       marble  ^BenchmarkRun100k$                  1     5x    -
guard        guard   .                                   1,2   -     -
learn        bench   ^BenchmarkLearn$                    1     1x    -
learnreal    httpthrottle/interop ^BenchmarkLearnReal$   1     1x    -
learnnginx   httpthrottle/interop ^BenchmarkLearnNginx$  1     1x    -
inflight     bench   ^BenchmarkInflight$                 1     1x    -
'
benchstat_version=v0.0.0-20260908200009-22c9c6c9d4da

rounds=10 benchtime= out=
while getopts 'r:t:o:h' opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	t) benchtime=$OPTARG ;;
	o) out=$OPTARG ;;
	*)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		[[ $opt == h ]] && exit 0 || exit 2
		;;
	esac
done
shift $((OPTIND - 1))
if ! [[ $rounds =~ ^[1-9][0-9]*$ ]]; then
	echo "bench/run.sh: -r $rounds: the number of rounds must be a positive integer" >&2
	exit 2
fi
out=${out:-bench-results/$(date -u +%Y%m%d-%H%M%S)}

# The suites asked for, all by default.
selected=()
while read -r name _; do
	[[ -z $name ]] && continue
	if (($# == 0)) || [[ " $* " == *" $name "* ]]; then
		selected+=("$name")
	fi
done <<<"$suites"
for want in "$@"; do
	if [[ " ${selected[*]} " != *" $want "* ]]; then
		echo "bench/run.sh: no suite $want; the suites are:" $(awk 'NF {print $1}' <<<"$suites") >&2
		exit 2
	fi
done

field() { # field SUITE N: the Nth field of SUITE's line (N=6: the rest of it)
	awk -v s="$1" -v n="$2" '$1 == s { if (n < 6) print $n; else { for (i = 6; i <= NF; i++) printf "%s%s", $i, (i < NF ? " " : ""); print "" } }' <<<"$suites"
}

mkdir -p "$out/bin"
echo "== machine ($out/machine.txt)"
{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "commit: $(git rev-parse HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo ' (with uncommitted changes)')"
	echo "kernel: $(uname -srm)"
	echo "cpu: $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
	echo "cores: $(nproc)"
	echo "clock source: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown)"
	echo "go: $(go version)"
	echo "redis-server: $(redis-server --version 2>/dev/null || echo 'not installed (the redis suite skips)')"
	echo "benchstat: golang.org/x/perf/cmd/benchstat@$benchstat_version"
	echo "rounds: $rounds, benchtime: ${benchtime:-per suite, else 1s}, suites: ${selected[*]}"
	echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/machine.txt"

echo "== building the test binaries"
declare -A binary
for s in "${selected[@]}"; do
	dir=$(field "$s" 2)
	if [[ -z ${binary[$dir]:-} ]]; then
		binary[$dir]=$(cd "$out/bin" && pwd)/$(tr '/.' '__' <<<"$dir").test
		go test -c -o "${binary[$dir]}" "./$dir"
	fi
	: >"$out/$s.txt"
done

for ((r = 1; r <= rounds; r++)); do
	echo "== round $r of $rounds"
	for s in "${selected[@]}"; do
		dir=$(field "$s" 2)
		t=$(field "$s" 5)
		[[ $t == - ]] && t=${benchtime:-1s}
		# Each binary runs in its package's directory, as go test runs it.
		log=$out/$s.log
		if [[ $s == redisprocs ]]; then
			if ! (cd "$dir" && RXTHROTTLE_REDIS_PROCS=${RXTHROTTLE_REDIS_PROCS:-1x1,1x8,4x8} \
				"${binary[$dir]}" -test.run '^TestRedisProcs$' -test.v -test.count 1) >"$log" 2>&1; then
				echo "bench/run.sh: suite $s failed in round $r:" >&2
				cat "$log" >&2
				exit 1
			fi
			{
				echo "round $r"
				grep -E 'redis_procs_test.go:[0-9]+: ' "$log" | sed 's/^ *redis_procs_test.go:[0-9]*: //'
			} >>"$out/$s.txt"
			rm "$log"
			continue
		fi
		if ! (cd "$dir" && "${binary[$dir]}" -test.run '^$' -test.bench "$(field "$s" 3)" \
			-test.cpu "$(field "$s" 4)" -test.benchtime "$t" -test.count 1 -test.benchmem) >"$log" 2>&1; then
			echo "bench/run.sh: suite $s failed in round $r:" >&2
			cat "$log" >&2
			exit 1
		fi
		grep -E '^(Benchmark|goos:|goarch:|pkg:|cpu:)' "$log" >>"$out/$s.txt" || true
		rm "$log"
	done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/machine.txt"

echo "== benchstat"
for s in "${selected[@]}"; do
	if [[ $s == redisprocs ]]; then
		echo "-- redisprocs ($out/redisprocs.txt): the ratios of redisstore.Wait and of its leases (1ms and 1s windows), round by round, and the median"
		grep -E 'redisstore\.Wait(\(lease(,1s)?\))?: ' "$out/redisprocs.txt" | awk '
			{ pg = $1 " " substr($2, 1, length($2) - 1); r = $3 + 0; w = $5 + 0; c = $7 + 0
			  n[pg]++; rr[pg, n[pg]] = r; rw[pg, n[pg]] = w; rc[pg, n[pg]] = c; if (!(pg in seen)) { seen[pg] = 1; order[++k] = pg } }
			function median(a, pg, m,   i, j, t, v) {
				for (i = 1; i <= m; i++) v[i] = a[pg, i]
				for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
				return (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
			}
			END {
				for (i = 1; i <= k; i++) {
					pg = order[i]; line = ""
					for (j = 1; j <= n[pg]; j++) line = line sprintf(" %.2f", rr[pg, j])
					printf "%-28s vs redis_rate.Allow:%s; median %.2fx (vs Allow(writes) %.2fx, vs the ceiling %.2fx)\n", pg, line, median(rr, pg, n[pg]), median(rw, pg, n[pg]), median(rc, pg, n[pg])
				}
			}' | tee "$out/$s.benchstat"
		continue
	fi
	if ! grep -q '^Benchmark' "$out/$s.txt"; then
		echo "-- $s: no results (skipped?)"
		continue
	fi
	opts=$(field "$s" 6)
	[[ $opts == - ]] && opts=
	# shellcheck disable=SC2086 # opts are words
	go run "golang.org/x/perf/cmd/benchstat@$benchstat_version" $opts "$out/$s.txt" >"$out/$s.benchstat"
	echo "-- $s (benchstat $opts $out/$s.txt)"
	cat "$out/$s.benchstat"
done
