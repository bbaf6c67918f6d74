#!/usr/bin/env bash
# make contract: docs/openapi.yaml checked by tools written elsewhere.
#
#  1. Redocly's OpenAPI linter (redocly.yaml: recommended-strict and two
#     rules of ours), zero problems.
#  2. Portman generates contract and fuzz tests from the document
#     (portman.json), and Newman runs them against a real playerd on
#     loopback, with the demo library, no password, no Wi-Fi service and no
#     voice: every answer must have the status, content type, headers and
#     schema the document gives, and every refused request (a foreign Host,
#     a cross-site write, a body of another type, a body the fuzzer broke)
#     its documented refusal. Zero failures.
#
# Usage: run.sh PLAYERD OUTDIR (the Makefile passes bin/playerd and
# build/contract); OUTDIR keeps the collection and the Newman report.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
playerd=$(realpath "$1")
mkdir -p "$2"
out=$(realpath "$2")
bin=$here/node_modules/.bin
work=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

start=$(date +%s)
echo "contract: lint docs/openapi.yaml"
(cd "$here" && timeout 120 "$bin/redocly" lint "$root/docs/openapi.yaml" --config redocly.yaml --format=stylish)

# The box: loopback on a port the kernel picks (read back from the ready
# line), the home-automation API on another, nothing from outside.
mkdir -p "$work/data"
go run "$root/services/playerd/cmd/demomedia" "$work/media"
"$playerd" -listen 127.0.0.1:0 -ha-listen 127.0.0.1:0 -ha-mdns=false -media "$work/media" -data "$work/data" \
	-output null -fb none -touch none -console "" -hat "" -speech-program none 2>"$out/playerd.log" &
pid=$!
base=
for _ in $(seq 100); do
	base=$(sed -n 's/.*msg="playerd ready" listen=\([^ ]*\).*/\1/p' "$out/playerd.log")
	[ -n "$base" ] && break
	kill -0 "$pid" 2>/dev/null || { cat "$out/playerd.log"; exit 1; }
	sleep 0.1
done
[ -n "$base" ] || { echo "contract: playerd did not come up"; cat "$out/playerd.log"; exit 1; }
# Ready means listening; the first scan is what the tests read.
for _ in $(seq 100); do
	node -e 'fetch(process.argv[1]).then(r => r.json()).then(j => process.exit(j.library && j.library.scanned ? 0 : 1), () => process.exit(1))' \
		"http://$base/api/info" && break
	sleep 0.1
done

echo "contract: generate the tests (Portman) and run them against playerd at $base (Newman)"
(cd "$here" && timeout 300 "$bin/portman" -l "$root/docs/openapi.yaml" -c portman.json --filterFile filter.json \
	-b "http://$base" -o "$out/collection.json" >"$out/portman.log" 2>&1) || { cat "$out/portman.log"; exit 1; }
timeout 600 "$bin/newman" run "$out/collection.json" --timeout-request 10000 --reporters cli \
	--reporter-cli-no-success-assertions --reporter-cli-no-console >"$out/newman.log" 2>&1 ||
	{ cat "$out/newman.log"; echo "contract: failed (collection and log in $out)"; exit 1; }
tail -n 20 "$out/newman.log" | grep -E 'requests|assertions|total run duration' || true
echo "contract: passed in $(($(date +%s) - start)) s"
