#!/usr/bin/env bash
# slack-load.sh: end-to-end load of the Slack headend — the real bot over
# Socket Mode against the emulator (slack/emulator) with the fake model
# (llm/llmtest), all in one process — and the median of COUNT runs of each
# figure. Targets: ≥ 500 sessions/s with a zero-latency model, ack p99
# ≤ 5 ms, ≤ 64 KB heap per in-flight session. BenchmarkReplicas runs the
# sessions/s load against one bot and against two bots sharing a real
# redis-server (make redis installs it), both on the Redis store.
#
#   bench/slack-load.sh            # 3 runs of each benchmark
#   COUNT=5 bench/slack-load.sh
#
# Each run is a fixed workload (see the constants in slack/bench_test.go),
# so the raw lines feed benchstat across commits too.
set -euo pipefail
cd "$(dirname "$0")/.."

COUNT=${COUNT:-3}
GO=${GO:-go}

out=$($GO test -run '^$' -bench '^(BenchmarkSlackSessions|BenchmarkReplicas|BenchmarkAckLatency|BenchmarkInFlightMemory)$' \
	-benchtime 1x -count "$COUNT" ./slack/)
echo "$out" | grep '^Benchmark'
echo
echo "median of $COUNT runs:"
echo "$out" | awk '
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	for (i = 3; i < NF; i += 2) {
		if ($(i + 1) == "ns/op") continue
		key = name " " $(i + 1)
		if (!(key in n)) order[++keys] = key
		v[key, ++n[key]] = $i
	}
}
END {
	for (k = 1; k <= keys; k++) {
		key = order[k]; m = n[key]
		for (i = 1; i <= m; i++) a[i] = v[key, i]
		for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		med = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
		split(key, p, " ")
		printf "  %-26s %-24s %10.2f\n", p[1], p[2], med
	}
}'
