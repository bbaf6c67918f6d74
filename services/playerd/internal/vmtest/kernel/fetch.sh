#!/bin/bash
# Fetches Debian's arm64 kernel package (linux-image-arm64) once into a cache
# shared by the VM tests (build/arm64-kernel) and extracts the kernel image
# and the named modules into OUTDIR:
#
#   fetch.sh OUTDIR MODULE...      -> OUTDIR/vmlinuz, OUTDIR/modules/M.ko, OUTDIR/kernel-version
#
# Idempotent: with everything in place it does nothing. A private APT
# configuration keeps the host's apt setup (amd64 only) untouched.
set -euo pipefail
out=${1:?usage: fetch.sh OUTDIR MODULE...}
shift
mkdir -p "$out/modules"
out=$(cd "$out" && pwd)
repo=$(cd "$(dirname "$0")/../../../../.." && pwd)
cache=${KERNEL_CACHE:-$repo/build/arm64-kernel}

complete=1
[ -s "$out/vmlinuz" ] || complete=0
for m in "$@"; do [ -s "$out/modules/$m.ko" ] || complete=0; done
[ "$complete" = 0 ] || exit 0

apt="$cache/apt"
deb=$(ls "$cache"/debs/linux-image-*.deb 2>/dev/null | head -1 || true)
if [ -z "$deb" ]; then
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/etc/preferences.d" "$apt/etc/apt.conf.d" "$cache/debs"
	: >"$apt/status"
	cat >"$apt/etc/sources.list" <<'SRC'
deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bookworm-security main
SRC
	cat >"$apt/apt.conf" <<CONF
Dir::Etc::SourceList "$apt/etc/sources.list";
Dir::Etc::SourceParts "$apt/etc/sources.list.d";
Dir::Etc::Preferences "$apt/etc/preferences";
Dir::Etc::PreferencesParts "$apt/etc/preferences.d";
Dir::Etc::Parts "$apt/etc/apt.conf.d";
Dir::State::Lists "$apt/lists";
Dir::State::status "$apt/status";
Dir::Cache "$apt/cache";
APT::Architecture "arm64";
APT::Architectures { "arm64"; };
APT::Sandbox::User "root";
CONF
	export APT_CONFIG="$apt/apt.conf"
	apt-get update -qq
	# linux-image-arm64 is a metapackage; its first dependency is the
	# versioned kernel package that holds the files.
	pkg=$(apt-cache depends linux-image-arm64 | awk '/Depends:/ && $2 ~ /^linux-image-[0-9]/ {print $2; exit}')
	[ -n "$pkg" ] || { echo "fetch.sh: cannot resolve linux-image-arm64" >&2; exit 1; }
	(cd "$cache/debs" && apt-get download -qq "$pkg:arm64")
	deb=$(ls "$cache"/debs/"$pkg"_*.deb | head -1)
fi

x=$(mktemp -d)
trap 'rm -rf "$x"' EXIT
dpkg-deb -x "$deb" "$x"
cp "$x"/boot/vmlinuz-* "$out/vmlinuz.tmp"
for m in "$@"; do
	f=$(find "$x/lib/modules" -name "$m.ko*" | head -1)
	[ -n "$f" ] || { echo "fetch.sh: module $m not in $(basename "$deb")" >&2; exit 1; }
	case "$f" in
	*.ko) cp "$f" "$out/modules/$m.ko" ;;
	*.ko.xz) xz -dc "$f" >"$out/modules/$m.ko" ;;
	*) echo "fetch.sh: unexpected module file $f" >&2; exit 1 ;;
	esac
done
basename "$deb" .deb | sed 's/_/ /' >"$out/kernel-version"
mv "$out/vmlinuz.tmp" "$out/vmlinuz"
