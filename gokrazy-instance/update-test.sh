#!/usr/bin/env bash
# update-test.sh IMAGE
#
# Updates over TLS only, against the amd64 image (storybox-vm) under QEMU
# (-snapshot: the image file stays as built):
#
#   1. an impostor (openssl s_server with another certificate) is refused by
#      update.sh, and never receives the password or any request;
#   2. the real box with a wrong pinned certificate (another checkout's) is
#      refused the same way;
#   3. update.sh with the right pin builds and uploads the instance, the box
#      reboots into the new build (its build timestamp) from the other root
#      partition, and the API comes back with the library from /perm.
#
# Prints how long each step took. Environment: SECRETS_DIR (as
# build-image.sh), BOOT_TIMEOUT (default 300), LOG_DIR (serial log; default
# next to the image), GOK, GO (for update.sh).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
img=${1:?usage: update-test.sh IMAGE}
export SECRETS_DIR=${SECRETS_DIR:-$here/.secrets}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-300}
LOG_DIR=${LOG_DIR:-$(dirname "$img")}
instance=storybox-vm
# shellcheck source=vm.sh
. "$here/vm.sh"
# shellcheck source=webui.sh
. "$here/webui.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/storybox-update-test.XXXXXX")
qpid= spid=
serial=
fail() {
	echo "update-test: FAIL: $*" >&2
	if [ -n "$serial" ] && [ -s "$serial" ]; then
		echo "---- last 30 lines of the serial console ($serial) ----" >&2
		tail -n 30 "$serial" >&2
	fi
	exit 1
}
say() { echo "update-test: $*"; }
cleanup() {
	[ -z "$spid" ] || kill -- -"$spid" 2>/dev/null || true
	for p in $qpid $spid; do
		kill "$p" 2>/dev/null || true
	done
	for p in $qpid $spid; do
		for _ in $(seq 1 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
		kill -9 "$p" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'fail "interrupted"' INT TERM

[ -f "$img" ] || fail "no image $img"
for tool in mcopy mtype partx curl jq openssl qemu-system-x86_64; do
	command -v "$tool" >/dev/null || fail "$tool missing"
done
cert=$(webui_cert "$instance")
pw=$(cat "$SECRETS_DIR/gokrazy/http-password.txt") || fail "no update password in $SECRETS_DIR"
[ -s "$cert" ] || fail "no web interface certificate $cert (build the image first)"

# 1. An impostor on this machine with a certificate of its own: it records
# every byte it is sent after the handshake.
SECRETS_DIR=$work/impostor webui_ensure_cert "$instance" >/dev/null
icert=$(SECRETS_DIR=$work/impostor webui_cert "$instance")
iport=$(vm_free_port 39543)
# Its input stays open (a sleep), or it would end the first connection at
# once; killing the group ends both.
setsid bash -c 'sleep 900 | exec openssl s_server -accept "127.0.0.1:$0" -cert "$1" -key "$2" -quiet' \
	"$iport" "$icert" "${icert%cert.pem}key.pem" >"$work/impostor.out" 2>&1 &
spid=$!
for _ in $(seq 1 40); do (exec 3<>"/dev/tcp/127.0.0.1/$iport") 2>/dev/null && break; sleep 0.25; done
rc=0
UPDATE_PORT=$iport UPDATE_TIMEOUT=10 "$here/update.sh" "$instance" 127.0.0.1 >"$work/impostor.log" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "update.sh accepted the impostor: $(cat "$work/impostor.log")"
grep -q 'shows a certificate other than the pinned' "$work/impostor.log" ||
	fail "update.sh failed against the impostor, but not because of the pin: $(cat "$work/impostor.log")"
b64=$(printf 'gokrazy:%s' "$pw" | base64 -w0)
if grep -qaF -e "$pw" -e "$b64" -e Authorization -e 'GET ' -e 'PUT ' "$work/impostor.out"; then
	fail "the impostor received a request or the password: $(head -c 300 "$work/impostor.out")"
fi
kill -- -"$spid" 2>/dev/null || true
wait "$spid" 2>/dev/null || true
spid=
say "impostor with another certificate: refused in the handshake (the impostor logged: $(tr -s '\n' ' ' <"$work/impostor.out" | head -c 100)), no request, no password reached it"

# The box, booted from the image as built.
API_PORT=$(vm_free_port 38090)
TLS_PORT=$(vm_free_port 39443)
# Through the firmware: the reboot after the update must boot what the
# switched boot partition names.
VM_FIRMWARE=1 vm_command "$img" "$work" "$img" "$API_PORT-:8090" "$TLS_PORT-:9443" || fail "cannot build the QEMU command"
mkdir -p "$LOG_DIR"
serial=$LOG_DIR/update-test.serial.log
: >"$serial"
t0=$(date +%s)
timeout --signal=KILL $((BOOT_TIMEOUT * 2 + 900)) "${vm_qemu[@]}" -snapshot -serial "file:$serial" &
qpid=$!
ready=$(vm_wait_healthy "$API_PORT" "$qpid" "$BOOT_TIMEOUT") || fail "the box did not boot"
say "boot-to-API-ready: $ready s"
before=$(webui_curl "$(webui_pin "$cert")" "$SECRETS_DIR/gokrazy/http-password.txt" "https://127.0.0.1:$TLS_PORT/" \
	--max-time 20 -H 'Accept: application/json') || fail "the box's web interface does not answer over TLS with the pinned certificate"
build0=$(jq -er .BuildTimestamp <<<"$before") || fail "no BuildTimestamp in the status: ${before:0:300}"
part0=$(grep -o 'PARTNROFF=[0-9]*' "$serial" | tail -n 1 || true)

# 2. The real box, but pinned to another certificate.
mkdir -p "$work/other/gokrazy"
cp "$SECRETS_DIR/gokrazy/http-password.txt" "$work/other/gokrazy/"
SECRETS_DIR=$work/other webui_ensure_cert "$instance" >/dev/null
rc=0
SECRETS_DIR=$work/other UPDATE_PORT=$TLS_PORT UPDATE_TIMEOUT=10 "$here/update.sh" "$instance" 127.0.0.1 >"$work/wrong.log" 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q 'shows a certificate other than the pinned' "$work/wrong.log" ||
	fail "update.sh with a wrong pin was not refused for it (exit $rc): $(cat "$work/wrong.log")"
say "the box pinned to another certificate: refused ($(grep -o 'refused before[^.]*' "$work/wrong.log"))"

# 3. The update itself.
t1=$(date +%s)
UPDATE_PORT=$TLS_PORT UPDATE_TIMEOUT=$BOOT_TIMEOUT "$here/update.sh" "$instance" 127.0.0.1 >"$work/update.log" 2>&1 ||
	{ cat "$work/update.log" >&2; fail "update.sh against the box failed"; }
sed 's/^/  /' "$work/update.log"
build1=$(sed -n 's/^update: built .*build timestamp //p' "$work/update.log")
[ -n "$build1" ] && [ "$build1" != "$build0" ] || fail "the update did not bring a new build ($build0 -> $build1)"
vm_wait_healthy "$API_PORT" "$qpid" "$BOOT_TIMEOUT" >/dev/null || fail "the API did not come back after the update"
part1=$(grep -o 'PARTNROFF=[0-9]*' "$serial" | tail -n 1 || true)
lib=$(curl -sf --max-time 10 "http://127.0.0.1:$API_PORT/api/library") || fail "GET /api/library after the update"
n=$(jq '[if type == "array" then . else .folders end | .[] | .tracks // [] | length] | add // 0' <<<"$lib")
[ "$n" -gt 0 ] || fail "no tracks in the library after the update: /perm lost? $lib"
say "updated over TLS in $(($(date +%s) - t1)) s: build $build0 -> $build1, root ${part0:-?} -> ${part1:-?}, library on /perm intact ($n tracks)"

webui_curl "$(webui_pin "$cert")" "$SECRETS_DIR/gokrazy/http-password.txt" "https://127.0.0.1:$TLS_PORT/poweroff" \
	-X POST --max-time 30 -o /dev/null || true
for _ in $(seq 1 120); do kill -0 "$qpid" 2>/dev/null || break; sleep 0.5; done
kill -0 "$qpid" 2>/dev/null && fail "the box did not power off"
wait "$qpid" || true
qpid=
say "PASS ($(($(date +%s) - t0)) s from boot to power-off)"
