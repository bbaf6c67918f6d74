#!/usr/bin/env bash
# build-image.sh INSTANCE OUT BYTES
#
# Writes a complete gokrazy disk image for INSTANCE (a directory next to this
# script, e.g. storybox or storybox-vm) to OUT: boot FAT, two root partitions
# and a /perm partition already formatted as ext4 and filled with the demo
# library, so the box plays something on first boot. BYTES is the size of the
# target SD card (or VM disk); /perm takes everything after the 1.1 GB system
# area.
#
# Environment:
#   GOK           gok binary (built by `make gok`)
#   GO            go command (default: go)
#   SECRETS_DIR   git-ignored directory holding the update password and the
#                 web interface's TLS certificate and key
#                 (default: gokrazy-instance/.secrets)
#   DEMOMEDIA     command that writes the demo library into the directory
#                 given as its last argument
#                 (default: go run ./services/playerd/cmd/demomedia)
#   PERM_STAGING  extra directory whose contents are copied into /perm after
#                 the demo media (optional; used by tests)
#   WIFI_SSID, WIFI_PSK, WIFI_COUNTRY
#                 a Wi-Fi network (and regulatory country) for netd, written
#                 into /perm/netd/networks.json with mode 0600; from the
#                 command line only (make image WIFI_SSID=… WIFI_PSK=…), never
#                 committed
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

instance=${1:?usage: build-image.sh INSTANCE OUT BYTES}
out=${2:?usage: build-image.sh INSTANCE OUT BYTES}
bytes=${3:?usage: build-image.sh INSTANCE OUT BYTES}

GOK=${GOK:-$root/bin/gok}
GO=${GO:-go}
SECRETS_DIR=${SECRETS_DIR:-$here/.secrets}
read -r -a demomedia <<<"${DEMOMEDIA:-$GO run ./services/playerd/cmd/demomedia}"

die() { echo "build-image: $*" >&2; exit 1; }

[ -f "$here/$instance/config.json" ] || die "no instance $here/$instance"
[ -x "$GOK" ] || die "gok not found at $GOK (run: make gok)"
[[ $bytes =~ ^[0-9]+$ ]] && [ "$bytes" -ge 1258299392 ] || # (die exits)
	die "BYTES must be a number >= 1258299392 (gokrazy needs 1.1 GB plus room for /perm), got $bytes"
for tool in mkfs.ext4 partx openssl jq; do
	command -v "$tool" >/dev/null || die "$tool missing (Debian: e2fsprogs, util-linux, openssl, jq)"
done

# The update password must not live in the repository. gok reads it from
# $XDG_CONFIG_HOME/gokrazy/http-password.txt when config.json has none, so we
# point XDG_CONFIG_HOME at a git-ignored directory and create the file once.
# Every later build (and `gok update`) reuses it, so a flashed box stays
# updatable. GOENV keeps the user's own `go env -w` settings visible.
pwfile=$SECRETS_DIR/gokrazy/http-password.txt
if [ ! -s "$pwfile" ]; then
	mkdir -p "$(dirname "$pwfile")"
	chmod 700 "$SECRETS_DIR" "$(dirname "$pwfile")"
	(umask 077 && od -An -tx1 -N16 /dev/urandom | tr -d ' \n' >"$pwfile.tmp")
	mv "$pwfile.tmp" "$pwfile"
	echo "build-image: generated the update password in $pwfile (keep it: gok update needs it)"
fi
# The web interface and update API speak TLS only (webui.sh): the
# certificate is made once, beside the password, and gok builds it in.
# shellcheck source=webui.sh
. "$here/webui.sh"
webui_ensure_cert "$instance" || die "could not make the web interface certificate in $SECRETS_DIR"
export GOENV=${GOENV:-$($GO env GOENV)}
export XDG_CONFIG_HOME=$SECRETS_DIR

outdir=$(dirname "$out")
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
out=$outdir/$(basename "$out")
tmp=$out.tmp
staging=$(mktemp -d "$outdir/.perm-staging.XXXXXX")
trap 'rm -rf "$staging" "$tmp"' EXIT

t0=$(date +%s.%N)
rm -f "$tmp"
# gok logs the web interface URL with the password in it: mask it so build
# logs (CI) never carry it.
"$GOK" --parent_dir "$here" -i "$instance" overwrite --sudo never \
	--full "$tmp" --target_storage_bytes "$bytes" 2>&1 |
	sed -E 's#(gokrazy:)[^@[:space:]]+@#\1****@#g' >"$outdir/$instance.gok.log" ||
	{ tail -n 40 "$outdir/$instance.gok.log" >&2; die "gok failed (full log: $outdir/$instance.gok.log)"; }
grep -q 'Build complete' "$outdir/$instance.gok.log" || {
	tail -n 40 "$outdir/$instance.gok.log" >&2
	die "gok did not finish (full log: $outdir/$instance.gok.log)"
}
t1=$(date +%s.%N)

# gok leaves partition 4 (/perm) unformatted on a file target. Read its
# position from the partition table instead of trusting a copied constant.
read -r pstart psectors < <(partx -g -n 4 -o START,SECTORS "$tmp") ||
	die "no partition 4 in $tmp"
[ "$psectors" -gt 0 ] || die "partition 4 in $tmp is empty"

# /perm layout (board/README.md): media/ the library, playerd/ and hatd/ the
# services' state, machine-id unique per image (gokrazy prefers it to
# /etc/machine-id, so no id has to be committed).
mkdir -p "$staging/media" "$staging/playerd" "$staging/hatd" "$staging/netd"
chmod 700 "$staging/netd"
if [ -n "${WIFI_SSID:-}" ]; then
	command -v jq >/dev/null || die "jq missing (Debian: jq); needed for WIFI_SSID"
	[ ${#WIFI_SSID} -le 32 ] || die "WIFI_SSID is longer than 32 bytes"
	psk=${WIFI_PSK:-}
	[ -z "$psk" ] || [ ${#psk} -ge 8 ] && [ ${#psk} -le 64 ] || die "WIFI_PSK must be 8 to 63 characters (or 64 hex digits), or empty for an open network"
	[[ ${WIFI_COUNTRY:-} =~ ^([A-Z]{2}|00)?$ ]] || die "WIFI_COUNTRY must be two capital letters, e.g. DE"
	(umask 077 && jq -n --arg ssid "$WIFI_SSID" --arg psk "$psk" --arg country "${WIFI_COUNTRY:-}" \
		'{country: $country, networks: [{ssid: $ssid, psk: $psk, priority: 0}]}' >"$staging/netd/networks.json")
	echo "build-image: Wi-Fi network \"$WIFI_SSID\" written to /perm/netd (mode 0600)"
fi
(cd "$root" && "${demomedia[@]}" "$staging/media") || die "demo media generation failed: ${demomedia[*]}"
[ -n "$(ls -A "$staging/media")" ] || die "demo media generation wrote nothing"
if [ -n "${PERM_STAGING:-}" ]; then
	cp -a "$PERM_STAGING/." "$staging/"
fi
od -An -tx1 -N16 /dev/urandom | tr -d ' \n' >"$staging/machine-id"
echo >>"$staging/machine-id"

mkfs.ext4 -q -F -L perm -E offset=$((pstart * 512)) -d "$staging" "$tmp" $((psectors / 2)) ||
	die "mkfs.ext4 of /perm failed"
t2=$(date +%s.%N)
mv "$tmp" "$out"

apparent=$(stat -c %s "$out")
allocated=$(($(stat -c %b "$out") * $(stat -c %B "$out")))
printf 'build-image: %s: %s bytes apparent, %s bytes allocated, /perm %s MiB; gok %.1f s, /perm %.1f s\n' \
	"$out" "$apparent" "$allocated" $((psectors / 2048)) \
	"$(awk "BEGIN{print $t1 - $t0}")" "$(awk "BEGIN{print $t2 - $t1}")"
echo "build-image: the web interface (https://$(webui_hostname "$instance"):$(jq -r .Update.HTTPSPort "$here/$instance/config.json")) shows the certificate with SHA-256 $(webui_fingerprint "$(webui_cert "$instance")")"
