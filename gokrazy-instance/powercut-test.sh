#!/usr/bin/env bash
# powercut-test.sh IMAGE
#
# Power cuts on the real image: the amd64 image (storybox-vm) under QEMU on a
# copy of its disk, killed at random moments while commands, settings,
# card mappings and uploads stream at it, and booted again on the same disk,
# CUTS times (powercut/main.go says what each boot checks). Then, with the
# box powered off cleanly, the disk is checked offline: e2fsck finds /perm
# clean, every state file (JSON) parses, no file was set aside as corrupt,
# and every uploaded file on /perm is byte for byte one that was sent (whole
# or absent, never torn).
#
# Environment: CUTS (default 20), SEED (default: from the clock; printed),
# BOOT_TIMEOUT (seconds, default 300), POWERCUT_FLAGS (more flags for the
# driver), LOG_DIR (default build/powercut next to the image's directory:
# serial logs, and on failure the disk), SECRETS_DIR, GO.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
img=${1:?usage: powercut-test.sh IMAGE}
export SECRETS_DIR=${SECRETS_DIR:-$here/.secrets}
GO=${GO:-go}
CUTS=${CUTS:-20}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-300}
LOG_DIR=${LOG_DIR:-$(cd "$(dirname "$img")/.." && pwd)/powercut}
instance=storybox-vm
# shellcheck source=vm.sh
. "$here/vm.sh"
# shellcheck source=webui.sh
. "$here/webui.sh"

fail() { echo "powercut-test: FAIL: $*" >&2; echo "powercut-test: the disk and the serial logs are kept in $LOG_DIR" >&2; exit 1; }
say() { echo "powercut-test: $*"; }
[ -f "$img" ] || fail "no image $img"
[[ $CUTS =~ ^[0-9]+$ ]] && [ "$CUTS" -ge 1 ] || fail "CUTS must be a number >= 1, not $CUTS"
for tool in mcopy mtype partx curl jq e2fsck debugfs sha256sum qemu-system-x86_64; do
	command -v "$tool" >/dev/null || fail "$tool missing"
done
cert=$(webui_cert "$instance")
[ -s "$cert" ] || fail "no web interface certificate $cert (build the image first)"

t0=$(date +%s)
rm -rf "$LOG_DIR"
mkdir -p "$LOG_DIR"
disk=$LOG_DIR/disk.img
cp --sparse=always "$img" "$disk"
(cd "$root" && CGO_ENABLED=0 "$GO" build -o "$LOG_DIR/powercut" ./gokrazy-instance/powercut) || fail "cannot build the driver"
API_PORT=$(vm_free_port 38190)
TLS_PORT=$(vm_free_port 39543)
vm_command "$img" "$LOG_DIR" "$disk" "$API_PORT-:8090" "$TLS_PORT-:9443" || fail "cannot build the QEMU command"

# shellcheck disable=SC2086 # POWERCUT_FLAGS are words
timeout --signal=KILL $(((CUTS + 1) * (BOOT_TIMEOUT + 240))) "$LOG_DIR/powercut" \
	-log-dir "$LOG_DIR" -api-port "$API_PORT" -tls-port "$TLS_PORT" -cert "$cert" \
	-password-file "$SECRETS_DIR/gokrazy/http-password.txt" -manifest "$LOG_DIR/uploads.tsv" \
	-cuts "$CUTS" ${SEED:+-seed "$SEED"} -boot-timeout "${BOOT_TIMEOUT}s" ${POWERCUT_FLAGS:-} \
	-- "${vm_qemu[@]}" || fail "the power-cut driver failed"

# Offline, after the clean power-off.
read -r pstart _ < <(partx -g -n 4 -o START,SECTORS "$disk") || fail "no /perm partition on $disk"
perm="$disk?offset=$((pstart * 512))"
e2fsck -fn "$perm" >"$LOG_DIR/e2fsck.log" 2>&1 || fail "e2fsck finds /perm damaged: $(tail -n 20 "$LOG_DIR/e2fsck.log")"
dump=$LOG_DIR/perm
mkdir -p "$dump"
debugfs -R "rdump /playerd /netd /hatd /media/Powercut $dump" "$perm" >"$LOG_DIR/debugfs.log" 2>&1 ||
	fail "debugfs cannot copy /perm: $(tail -n 5 "$LOG_DIR/debugfs.log")"
[ -d "$dump/playerd" ] && [ -d "$dump/Powercut" ] || fail "/perm/playerd or /perm/media/Powercut missing after the cuts"
corrupt=$(find "$dump" -name '*.corrupt' -printf '%P ')
[ -z "$corrupt" ] || fail "files set aside as corrupt: $corrupt"
# The cuts interrupted writes; the last boot, cut by nothing, swept what
# they left (state.RemoveAllTemps), so none of them outlives a boot.
left=$(find "$dump/playerd" -type f -name '.*.tmp-*' -printf '%P ')
[ -z "$left" ] || fail "temporary files of interrupted writes outlived the last boot: $left"
n=0
while IFS= read -r -d '' f; do
	jq empty "$f" 2>/dev/null || fail "${f#"$dump"/} does not parse as JSON: $(head -c 200 "$f")"
	n=$((n + 1))
done < <(find "$dump" -name '*.json' -print0)
[ -s "$dump/playerd/state.json" ] && [ -s "$dump/playerd/settings.json" ] && [ -s "$dump/playerd/cards.json" ] ||
	fail "a state file is missing: $(cd "$dump" && find playerd -maxdepth 1 -type f -printf '%P ')"
whole=0 temps=0
for f in "$dump/Powercut"/* "$dump/Powercut"/.[!.]*; do
	[ -e "$f" ] || continue
	name=${f##*/}
	if [[ $name == .upload-*.part ]]; then
		temps=$((temps + 1)) # an upload cut short; the next upload removes it
		continue
	fi
	want=$(awk -F'\t' -v n="$name" '$1 == n {print $2}' "$LOG_DIR/uploads.tsv")
	[ -n "$want" ] || fail "/perm/media/Powercut/$name was never uploaded"
	got=$(sha256sum "$f" | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "/perm/media/Powercut/$name is torn: $(stat -c %s "$f") bytes, SHA-256 $got, want $want"
	whole=$((whole + 1))
done
sent=$(wc -l <"$LOG_DIR/uploads.tsv")
say "offline: /perm clean (e2fsck), $n state files parse, none set aside as corrupt, no temporary file left; uploads: $sent sent, $whole on disk byte for byte as sent, $((sent - whole)) absent, none torn ($temps temporary file(s) of cut uploads)"
rm -rf "$disk" "$dump"
say "PASS in $(($(date +%s) - t0)) s"
