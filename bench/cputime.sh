#!/usr/bin/env bash
# bench/cputime.sh measures CPU time per operation, for comparisons on a
# loaded machine: for each of R rounds and each benchmark, it runs every
# test binary given in turn for a fixed count (-test.benchtime Nx,
# -test.cpu 1) and prints the binary, the benchmark and its user+sys CPU
# time (/usr/bin/time) over N in ns. Other processes' load moves the wall
# time of a benchmark by 2-10x on the shared VM; the CPU time a process
# uses for a fixed count moves by a few percent. It includes the binary's
# start (a few ms: choose N for a second or more) and, for a benchmark of
# several goroutines, the scheduler's work. BENCHMARKS.md says where it
# was used.
#
#	bench/cputime.sh DIR ROUNDS "BIN1 BIN2" "BENCH-REGEXP:N ..."
#	bench/cputime.sh . 5 "/tmp/old.test /tmp/new.test" '^BenchmarkAcquireRelease$/^Wait$:20000000'
#
# DIR is the package directory the binaries run in (. for the root's,
# bench for this module's).
set -euo pipefail
if (($# != 4)); then
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit 2
fi
dir=$1 rounds=$2 bins=$3 benches=$4
cd "$dir"
for ((r = 1; r <= rounds; r++)); do
	for bb in $benches; do
		b=${bb%:*} n=${bb##*:}
		for bin in $bins; do
			t=$({ /usr/bin/time -f "%U %S" "$bin" -test.run '^$' -test.bench "$b" -test.cpu 1 -test.benchtime "${n}x" >/dev/null; } 2>&1 | tail -1)
			awk -v bin="$(basename "$bin")" -v b="$b" -v n="$n" -v t="$t" 'BEGIN { split(t, a, " "); printf "%s %s %.1f\n", bin, b, (a[1] + a[2]) * 1e9 / n }'
		done
	done
done
