#!/usr/bin/env bash
# blockkit-vs-slackify.sh: time blockkit.Mrkdwn and slackify-markdown (the
# pinned npm peer) on the same corpus, blockkit/testdata/corpus/*.md, and
# print nanoseconds per document for each and the ratio. Target: ours is at
# least 20 times faster.
#
#   bench/blockkit-vs-slackify.sh                 # defaults
#   BENCHTIME=5s ITERATIONS=300 bench/blockkit-vs-slackify.sh
#
# Needs Go and Node.js with testdata/npm installed (`make test` does it:
# npm ci --prefix testdata/npm).
set -euo pipefail
cd "$(dirname "$0")/.."

BENCHTIME=${BENCHTIME:-3s}   # go test -benchtime for BenchmarkMrkdwnCorpus
ITERATIONS=${ITERATIONS:-100} # passes over the corpus for slackify, after a warm-up

if ! command -v node >/dev/null; then
	echo "node is not installed: install Node.js 20+ and run 'npm ci --prefix testdata/npm'" >&2
	exit 1
fi
if [ ! -f testdata/npm/node_modules/slackify-markdown/package.json ]; then
	echo "slackify-markdown is not installed: run 'npm ci --prefix testdata/npm' (make test does it)" >&2
	exit 1
fi

docs=$(ls blockkit/testdata/corpus/*.md | wc -l)
bytes=$(cat blockkit/testdata/corpus/*.md | wc -c)

go_out=$(go test -run '^$' -bench '^BenchmarkMrkdwnCorpus$' -benchtime "$BENCHTIME" ./blockkit/)
go_ns=$(echo "$go_out" | awk '/^BenchmarkMrkdwnCorpus/ { for (i = 2; i < NF; i++) if ($(i+1) == "ns/doc") print $i }')
if [ -z "$go_ns" ]; then
	echo "could not read ns/doc from go test:" >&2
	echo "$go_out" >&2
	exit 1
fi

js_out=$(cd blockkit && node ../testdata/npm/slackify.mjs --bench "$ITERATIONS" testdata/corpus/*.md)
js_ns=$(echo "$js_out" | sed -E 's/.*"ns_per_doc":([0-9]+).*/\1/')

echo "corpus: $docs documents, $bytes bytes (blockkit/testdata/corpus)"
printf '%-28s %12.0f ns/doc\n' "blockkit.Mrkdwn (Go)" "$go_ns"
printf '%-28s %12.0f ns/doc\n' "slackify-markdown 5.0.0" "$js_ns"
awk -v go="$go_ns" -v js="$js_ns" 'BEGIN { r = js / go; printf "ratio: blockkit is %.1fx faster (target >= 20x)%s\n", r, (r >= 20 ? "" : "  BELOW TARGET") }'
