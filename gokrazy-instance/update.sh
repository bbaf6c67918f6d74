#!/usr/bin/env bash
# update.sh INSTANCE [BOX]
#
# Over-the-air update of a running box, over TLS only. gok builds the
# instance's root and boot file systems and MBR into a temporary directory;
# this script then uploads them to the box's update API on its TLS port
# (Update.HTTPSPort, 9443), with the box's certificate pinned (webui.sh): the
# root file system to the inactive root partition, then the boot partition
# and the MBR, switches the A/B root, reboots the box and waits until it
# answers with the new build. /perm (library, settings, positions) is not
# touched.
#
# A box that shows any other certificate is refused during the TLS
# handshake, before a request, and with it the password, is sent; nothing
# ever goes over plain HTTP. The same checks run before the build, so a
# wrong box costs no build time.
#
# BOX is the host name or address of the box; without it the instance's
# Hostname ("storybox"), which resolves on most home networks through the
# router's DHCP names.
#
# Environment: GOK, GO, SECRETS_DIR as in build-image.sh; UPDATE_PORT, the
# box's TLS port as this machine reaches it (default: the instance's
# Update.HTTPSPort; tests pass a port forward); UPDATE_TIMEOUT, seconds to
# wait for the box to come back with the new build (default 300);
# SWITCH_SETTLE, seconds between the A/B switch and the reboot (default 40,
# see below).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
instance=${1:?usage: update.sh INSTANCE [BOX]}
box=${2:-}
GOK=${GOK:-$root/bin/gok}
GO=${GO:-go}
SECRETS_DIR=${SECRETS_DIR:-$here/.secrets}
UPDATE_TIMEOUT=${UPDATE_TIMEOUT:-300}

die() { echo "update: $*" >&2; exit 1; }
say() { echo "update: $*"; }
[ -f "$here/$instance/config.json" ] || die "no instance $here/$instance"
[ -x "$GOK" ] || die "gok not found at $GOK (run: make gok)"
for tool in curl jq openssl sha256sum; do
	command -v "$tool" >/dev/null || die "$tool missing (Debian: curl, jq, openssl, coreutils)"
done
# shellcheck source=webui.sh
. "$here/webui.sh"

pwfile=$SECRETS_DIR/gokrazy/http-password.txt
cert=$(webui_cert "$instance") || die "no Hostname in $here/$instance/config.json"
[ -s "$pwfile" ] && [ -s "$cert" ] ||
	die "no update password or certificate in $SECRETS_DIR: the box was flashed from another checkout; copy that checkout's gokrazy-instance/.secrets here"
pin=$(webui_pin "$cert") || die "cannot read the public key of $cert"
[ "$(jq -r '.Update.UseTLS // ""' "$here/$instance/config.json")" = self-signed ] ||
	die "$instance/config.json does not turn on TLS (Update.UseTLS): refusing to update over plain HTTP"
port=${UPDATE_PORT:-$(jq -r '.Update.HTTPSPort // "443"' "$here/$instance/config.json")}
[ -n "$box" ] || box=$(webui_hostname "$instance")
[[ $box == *:* ]] && box="[$box]" # an IPv6 address
base="https://$box:$port"

# request METHOD PATH [CURL ARGS...]: one pinned request; explains the
# failures a parent can meet and exits.
request() {
	local method=$1 path=$2 rc=0
	shift 2
	webui_curl "$pin" "$pwfile" "$base$path" -X "$method" --fail-with-body "$@" || rc=$?
	case $rc in
	0) return 0 ;;
	90) die "$box:$port shows a certificate other than the pinned $cert (SHA-256 $(webui_fingerprint "$cert")): refused before anything, the password included, was sent. Wrong box, someone in between, or a box flashed from another checkout." ;;
	7 | 28) die "$box:$port does not answer over TLS (curl exit $rc). A box flashed before TLS was turned on has to be flashed again (make image)." ;;
	*) die "$method $path failed (curl exit $rc)" ;;
	esac
}

t0=$(date +%s)
features=$(request GET /update/features --max-time 20 -H 'Accept: application/json')
say "$box:$port answers with the pinned certificate (features: $(jq -r .features <<<"$features" 2>/dev/null || echo "$features"))"

work=$(mktemp -d "${TMPDIR:-/tmp}/storybox-update.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GOENV=${GOENV:-$($GO env GOENV)}
export XDG_CONFIG_HOME=$SECRETS_DIR
# gok logs the web interface URL with the password in it: mask it.
"$GOK" --parent_dir "$here" -i "$instance" overwrite --sudo never \
	--root "$work/root.img" --boot "$work/boot.img" --mbr "$work/mbr.img" 2>&1 |
	sed -E 's#(gokrazy:)[^@[:space:]]+@#\1****@#g' >"$work/gok.log" ||
	{ tail -n 40 "$work/gok.log" >&2; die "gok failed"; }
build=$(sed -n 's/^.*Build timestamp: //p' "$work/gok.log" | head -n 1)
[ -n "$build" ] && [ -s "$work/root.img" ] && [ -s "$work/boot.img" ] && [ -s "$work/mbr.img" ] ||
	{ tail -n 40 "$work/gok.log" >&2; die "gok did not write the root, boot and MBR images"; }
say "built $instance, build timestamp $build"

# The root file system first: writing the inactive partition cannot break
# the running system. The box answers each upload with the SHA-256 of what
# it wrote.
for part in root boot mbr; do
	f=$work/$part.img
	got=$(request PUT "/update/$part" --max-time 600 -H 'Content-Type: application/octet-stream' -T "$f")
	want=$(sha256sum "$f" | cut -d' ' -f1)
	[ "$got" = "$want" ] || die "the box wrote $part with SHA-256 ${got:0:64}, want $want"
	say "$part: $(stat -c %s "$f") bytes written and checked"
done
request POST /update/switch --max-time 60 -o /dev/null
# gokrazy writes the switch (the root= of the boot partition's
# cmdline.txt) through the block device's page cache without syncing it,
# and restarts without syncing either: a restart right away boots the old
# root again (seen in the QEMU test). The kernel writes dirty
# pages back once they are 30 s old (vm.dirty_expire_centisecs), checking
# every 5 s, so the switch is on the card SWITCH_SETTLE seconds later.
settle=${SWITCH_SETTLE:-40}
say "switched to the updated root partition; rebooting in $settle s, once the box has written the switch to its disk"
sleep "$settle"
# kexec=off: a real restart that reads the boot partition from the disk, as
# a power cut would; a kexec restart could start the new system from the
# page cache while the disk still names the old one.
webui_curl "$pin" "$pwfile" "$base/reboot?kexec=off" -X POST --max-time 30 -o /dev/null || true

deadline=$(($(date +%s) + UPDATE_TIMEOUT))
now=
while [ "$(date +%s)" -lt "$deadline" ]; do
	if s=$(webui_curl "$pin" "$pwfile" "$base/" --max-time 5 -H 'Accept: application/json' 2>/dev/null) &&
		now=$(jq -r '.BuildTimestamp // empty' <<<"$s" 2>/dev/null) && [ "$now" = "$build" ]; then
		say "the box is back with build $build after $(($(date +%s) - t0)) s"
		exit 0
	fi
	sleep 2
done
die "the box did not come back with build $build within $UPDATE_TIMEOUT s (last answer: ${now:-none})"
