#!/usr/bin/env bash
# boot-test.sh MODE IMAGE
#
# Boots a storybox gokrazy image under QEMU (TCG, direct kernel boot) and
# checks it from the outside, through loopback-only port forwards:
#
#   vm   amd64 image (storybox-vm, -output=null): API ready, library from
#        /perm/media, a folder plays (state playing, position advancing), an
#        announcement renders with the shipped speech program.
#   pi   Raspberry Pi image (storybox, kernel.rpi) under `-M virt`, the image
#        exactly as flashed: API ready, library from /perm/media, and playing
#        a folder reports the missing sound card (virt has none) as an error
#        state while the API keeps serving.
#   Both: gokrazy's web interface: 9080 only redirects to TLS on 9443, which
#        shows the pinned certificate (webui.sh) and answers 401 without,
#        200 with the update password (playerd and hatd listed, no
#        fbstatus); nothing on port 80; clean power-off through gokrazy over
#        TLS. Prints boot-to-API-ready.
#   run  amd64 image, interactive: serial console on this terminal, API on
#        127.0.0.1:$API_PORT (default 8090), web interface on
#        https://127.0.0.1:9443 (9080 redirects there).
#        Quit with Ctrl-A X.
#
# The guest never gets a network beyond QEMU's user-mode stack with
# restrict=on; every forward binds 127.0.0.1 only. The test modes run the
# image through -snapshot, so the image file stays as it was built.
#
# Environment: API_PORT, UI_PORT, UIS_PORT (host ports), HUNG_AFTER (seconds of a
# silent console before the API answers that count as a hung boot, booted
# again once; default 120), BOOT_TIMEOUT (seconds, default
# 300), SECRETS_DIR (where build-image.sh keeps the update password),
# LOG_DIR (serial logs, default: next to the image).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
mode=${1:?usage: boot-test.sh vm|pi|run IMAGE}
img=${2:?usage: boot-test.sh vm|pi|run IMAGE}
SECRETS_DIR=${SECRETS_DIR:-$here/.secrets}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-300}
LOG_DIR=${LOG_DIR:-$(dirname "$img")}

# A port is taken when something on 127.0.0.1 accepts a connection on it.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# free_port BASE: the first port from BASE on that nobody listens on, so the
# test never talks to another program's server (other tests run in parallel).
free_port() {
	local p=$1
	while port_busy "$p" || [[ " $taken " == *" $p "* ]]; do p=$((p + 1)); done
	echo "$p"
}
taken=
case $mode in
vm | pi)
	API_PORT=${API_PORT:-$(free_port 38090)}
	taken="$taken $API_PORT"
	UI_PORT=${UI_PORT:-$(free_port 39080)}
	taken="$taken $UI_PORT"
	UIS_PORT=${UIS_PORT:-$(free_port 39443)}
	taken="$taken $UIS_PORT"
	WEB80_PORT=${WEB80_PORT:-$(free_port 38080)}
	;;
run) API_PORT=${API_PORT:-8090} UI_PORT=${UI_PORT:-9080} UIS_PORT=${UIS_PORT:-9443} WEB80_PORT= ;;
*) echo "boot-test: unknown mode $mode (want vm, pi or run)" >&2; exit 2 ;;
esac

fail() {
	echo "boot-test[$mode]: FAIL: $*" >&2
	if [ -n "${serial:-}" ] && [ -s "$serial" ]; then
		echo "---- last 40 lines of the serial console ($serial) ----" >&2
		tail -n 40 "$serial" >&2
	fi
	exit 1
}
say() { echo "boot-test[$mode]: $*"; }

[ -f "$img" ] || fail "no image $img"
for tool in mcopy mtype partx curl jq; do
	command -v "$tool" >/dev/null || fail "$tool missing (Debian: mtools, util-linux, curl, jq)"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/storybox-boot.XXXXXX")
qpid=
cleanup() {
	# Every exit path ends here: the VM must never outlive the test.
	if [ -n "$qpid" ] && kill -0 "$qpid" 2>/dev/null; then
		kill "$qpid" 2>/dev/null || true
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$qpid" 2>/dev/null || break; sleep 0.5; done
		kill -9 "$qpid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'fail "interrupted"' INT TERM

# Direct kernel boot: take the kernel and its command line from the image's
# own boot partition, so what boots is what gok built.
read -r bstart _ < <(partx -g -n 1 -o START,SECTORS "$img") || fail "no boot partition in $img"
fat="$img@@$((bstart * 512))"
mcopy -n -o -i "$fat" ::vmlinuz "$work/vmlinuz" || fail "no vmlinuz on the boot partition"
# Refuse a kernel of the wrong architecture at once instead of waiting for a
# boot that cannot happen: arm64 Image has "ARMd" at 0x38, x86 bzImage "HdrS"
# at 0x202.
case $mode in
pi) want=ARMd off=56 ;;
*) want=HdrS off=514 ;;
esac
magic=$(dd if="$work/vmlinuz" bs=1 skip=$off count=4 status=none)
[ "$magic" = "$want" ] || fail "the kernel in $img is not for mode $mode (magic ${magic@Q}, want $want)"
cmdline=$(mtype -i "$fat" ::cmdline.txt | tr -d '\r\n' | tr -s ' ') || fail "no cmdline.txt on the boot partition"
# rootdelay waits a fixed 10 s (for slow USB card readers); rootwait waits
# only as long as the disk needs. Console: the emulated UART.
cmdline=$(sed -E 's/(^| )console=[^ ]*//g; s/rootdelay=[0-9]+/rootwait/' <<<"$cmdline")

net="user,id=net0,restrict=on,hostfwd=tcp:127.0.0.1:$API_PORT-:8090,hostfwd=tcp:127.0.0.1:$UI_PORT-:9080,hostfwd=tcp:127.0.0.1:$UIS_PORT-:9443"
[ -z "$WEB80_PORT" ] || net="$net,hostfwd=tcp:127.0.0.1:$WEB80_PORT-:80"
case $mode in
vm | run)
	qemu=(qemu-system-x86_64 -machine pc -accel tcg -smp 2 -m 1024
		-drive "file=$img,format=raw,if=virtio"
		-device "e1000,netdev=net0")
	cmdline="$cmdline console=ttyS0,115200"
	;;
pi)
	# kernel.rpi carries virtio, e1000 and a generic PCI host for exactly
	# this: the Pi image boots unmodified on QEMU's virt board.
	qemu=(qemu-system-aarch64 -machine virt -cpu cortex-a72 -accel tcg -smp 2 -m 1024
		-drive "file=$img,format=raw,if=none,id=hd0" -device "virtio-blk-pci,drive=hd0"
		-device "e1000,netdev=net0")
	cmdline="$cmdline console=ttyAMA0,115200"
	;;
esac
[[ $net == *restrict=on* ]] || fail "refusing to start a VM without restrict=on"
qemu+=(-kernel "$work/vmlinuz" -append "$cmdline" -netdev "$net" -nic none -monitor none)

if [ "$mode" = run ]; then
	say "API on http://127.0.0.1:$API_PORT, gokrazy web interface on https://127.0.0.1:$UIS_PORT (user gokrazy, password in $SECRETS_DIR/gokrazy/http-password.txt); quit with Ctrl-A X"
	"${qemu[@]}" -display none -serial mon:stdio
	exit 0
fi

mkdir -p "$LOG_DIR"
serial=$LOG_DIR/boot-test-$mode.serial.log
: >"$serial"
port_busy "$API_PORT" && fail "127.0.0.1:$API_PORT already answers: another server would be tested instead of the VM"

api() { curl -sS --fail-with-body --max-time 5 "$@"; }

# -snapshot: the image stays as built. timeout: even if this script is killed
# with SIGKILL, QEMU ends on its own.
start_vm() {
	: >"$serial"
	t0=$(date +%s.%N)
	timeout --signal=KILL $((BOOT_TIMEOUT + 300)) "${qemu[@]}" -snapshot -display none -serial "file:$serial" &
	qpid=$!
}

# wait_ready: 0 once GET /api/health answers ok; 1 when BOOT_TIMEOUT passes;
# 2 when the console has been silent for HUNG_AFTER seconds before the API
# answered. Under TCG the guest kernel now and then stops early in its boot
# and never prints again (a fresh-clone run stopped 1.0 s in, at the HPET,
# and waited out the 300 s); such a boot is the emulator's, not the image's.
HUNG_AFTER=${HUNG_AFTER:-120}
wait_ready() {
	local deadline=$(($(date +%s) + BOOT_TIMEOUT)) size=-1 changed now
	changed=$(date +%s)
	while :; do
		now=$(date +%s)
		[ "$now" -lt "$deadline" ] || return 1
		kill -0 "$qpid" 2>/dev/null || { wait "$qpid" || true; qpid=; fail "QEMU exited before the API answered"; }
		if h=$(curl -sf --max-time 3 "http://127.0.0.1:$API_PORT/api/health" 2>/dev/null) &&
			[ "$(jq -r .status <<<"$h" 2>/dev/null)" = ok ]; then
			ready=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}")
			return 0
		fi
		local s
		s=$(stat -c %s "$serial" 2>/dev/null || echo 0)
		if [ "$s" != "$size" ]; then
			size=$s changed=$now
		elif [ $((now - changed)) -ge "$HUNG_AFTER" ]; then
			return 2
		fi
		sleep 0.5
	done
}

ready=
start_vm
rc=0
wait_ready || rc=$?
if [ "$rc" = 2 ]; then
	# Once only: a second hang is reported as a failure like any other.
	say "the boot hung: no console output for $HUNG_AFTER s, the last line: $(tail -n 1 "$serial" | tr -d '\r'); powering the VM off and booting again"
	cp "$serial" "$serial.hung"
	kill "$qpid" 2>/dev/null || true
	wait "$qpid" 2>/dev/null || true
	qpid=
	start_vm
	rc=0
	wait_ready || rc=$?
fi
case $rc in
1) fail "no {\"status\":\"ok\"} from /api/health within $BOOT_TIMEOUT s" ;;
2) fail "the boot hung twice: no console output for $HUNG_AFTER s before the API answered" ;;
esac
say "boot-to-API-ready: $ready s (QEMU start to first healthy GET /api/health; health: $h)"

lib=$(api "http://127.0.0.1:$API_PORT/api/library") || fail "GET /api/library: $lib"
# The library is a list of folders (or an object with "folders").
folders='if type == "array" then . else .folders end'
folder_id=$(jq -er "$folders | map(select((.tracks // []) | length > 0)) | .[0].id" <<<"$lib") ||
	fail "GET /api/library lists no folder with tracks (demo media missing from /perm/media?): $lib"
say "library: $(jq "$folders | length" <<<"$lib") folder(s), $(jq "[$folders | .[].tracks // [] | length] | add" <<<"$lib") track(s) from /perm/media; playing $(jq -c "$folders | map(select(.id == \"$folder_id\"))[0] | {id, name}" <<<"$lib")"

body=$(jq -cn --arg id "$folder_id" '{action: "folder", folder_id: $id}')
r=$(api -X POST -H 'Content-Type: application/json' -d "$body" "http://127.0.0.1:$API_PORT/api/command") ||
	fail "POST /api/command $body: $r"

if [ "$mode" = pi ]; then
	# The virt board has no sound card: playerd (-output=alsa) must say so in
	# its status and keep serving, never crash-loop.
	for _ in $(seq 1 40); do
		s=$(api "http://127.0.0.1:$API_PORT/api/status") || fail "GET /api/status: $s"
		[ "$(jq -r .state <<<"$s")" = error ] && break
		sleep 0.5
	done
	if [ "$(jq -r .state <<<"$s")" != error ] || ! grep -q 'no playback device' <<<"$(jq -r .error <<<"$s")"; then
		fail "without a sound card the status should be error/no playback device: $s"
	fi
	say "no sound card on virt: state error, \"$(jq -r .error <<<"$s")\"; API still serving"
else
	# Playing means state "playing" and a position that moves: poll, bounded.
	p1='' s=''
	for _ in $(seq 1 40); do
		s=$(api "http://127.0.0.1:$API_PORT/api/status") || fail "GET /api/status: $s"
		if [ "$(jq -r .state <<<"$s")" = playing ]; then
			p1=$(jq -er '.position' <<<"$s") || fail "status has no numeric position: $s"
			break
		fi
		sleep 0.5
	done
	[ -n "$p1" ] || fail "state never became playing after $body; last status: $s"
	sleep 3
	s=$(api "http://127.0.0.1:$API_PORT/api/status") || fail "GET /api/status: $s"
	[ "$(jq -r .state <<<"$s")" = playing ] || fail "stopped playing after 3 s: $s"
	p2=$(jq -er '.position' <<<"$s") || fail "status has no numeric position: $s"
	awk "BEGIN{exit !($p2 > $p1 + 1)}" || fail "position did not advance over 3 s: $p1 -> $p2"
	say "state playing: position $p1 s -> $p2 s over 3 s"

	# The static speech program and its voices ship as gokrazy extra files;
	# an announcement renders only if both arrived and run on the box.
	r=$(api --max-time 30 -X POST -H 'Content-Type: application/json' \
		-d '{"text":"Gute Nacht, schlaf gut.","language":"de"}' "http://127.0.0.1:$API_PORT/api/speak") ||
		fail "POST /api/speak (speech program in the image?): $r"
	[ "$(jq -r .speaking <<<"$r")" = true ] || fail "POST /api/speak: $r"
	say "speech: POST /api/speak answered $r"
fi

# gokrazy's own web interface moved to 9080/9443 (Update.HTTPPort,
# HTTPSPort) so it can never take 8090 from playerd, and nothing answers on
# port 80; it speaks TLS only (webui.sh), wants the update password and lists
# our services (and no fbstatus, which would fight playerd for the
# framebuffer).
# shellcheck source=webui.sh
. "$here/webui.sh"
case $mode in pi) instance=storybox ;; *) instance=storybox-vm ;; esac
page=$(webui_check "$instance" "$UI_PORT" "$UIS_PORT" 2>"$work/webui.err") || fail "gokrazy web interface: $(cat "$work/webui.err")"
for svc in /user/playerd /user/hatd; do
	grep -q "$svc" <<<"$page" || fail "gokrazy does not list $svc"
done
! grep -q fbstatus <<<"$page" || fail "fbstatus runs in the image: it would fight playerd for /dev/fb0"
if curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$WEB80_PORT/"; then
	fail "something answers on guest port 80"
fi
say "gokrazy web interface: 9080 redirects to TLS on 9443; the pinned certificate, 401 without, 200 with the update password, another pin refused; lists playerd and hatd, no fbstatus; port 80 closed"

# Clean power-off through gokrazy: services get SIGTERM, /perm is unmounted,
# and QEMU exits on its own.
webui_curl "$(webui_pin "$(webui_cert "$instance")")" "$SECRETS_DIR/gokrazy/http-password.txt" \
	"https://127.0.0.1:$UIS_PORT/poweroff" -o /dev/null --max-time 60 -X POST || true
for _ in $(seq 1 120); do kill -0 "$qpid" 2>/dev/null || break; sleep 0.5; done
kill -0 "$qpid" 2>/dev/null && fail "guest did not power off within 60 s"
wait "$qpid" || true
qpid=
say "powered off cleanly"

say "PASS"
