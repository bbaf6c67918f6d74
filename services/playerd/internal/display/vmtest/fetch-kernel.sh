#!/bin/bash
# Fetches Debian's arm64 kernel (linux-image-arm64) into $1 and extracts the
# kernel image plus the virtio-gpu, evdev and uinput modules the display VM
# loads. Idempotent. A private APT configuration keeps the host's apt setup
# (amd64 only) untouched.
set -euo pipefail
out=${1:?usage: fetch-kernel.sh OUTDIR}
mods="virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci drm drm_kms_helper drm_shmem_helper virtio_dma_buf virtio-gpu evdev uinput"
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -s "$out/vmlinuz" ] && [ -s "$out/modules/uinput.ko" ]; then
	exit 0
fi

apt="$out/apt"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/etc/preferences.d" "$apt/etc/apt.conf.d" "$apt/debs"
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
pkg=$(apt-cache depends linux-image-arm64 | awk '/Depends:/ && $2 ~ /^linux-image-[0-9]/ {print $2; exit}')
[ -n "$pkg" ] || { echo "fetch-kernel: cannot resolve linux-image-arm64" >&2; exit 1; }
(cd "$apt/debs" && apt-get download -qq "$pkg:arm64")
deb=$(ls "$apt/debs/${pkg}"_*.deb | head -1)
x="$out/extract"
rm -rf "$x" && mkdir -p "$x"
dpkg-deb -x "$deb" "$x"
cp "$x"/boot/vmlinuz-* "$out/vmlinuz.tmp"
mkdir -p "$out/modules"
for m in $mods; do
	f=$(find "$x/lib/modules" -name "$m.ko*" | head -1)
	[ -n "$f" ] || { echo "fetch-kernel: module $m not in $pkg" >&2; exit 1; }
	case "$f" in
	*.ko) cp "$f" "$out/modules/$m.ko" ;;
	*.ko.xz) xz -dc "$f" >"$out/modules/$m.ko" ;;
	*) echo "fetch-kernel: unexpected module file $f" >&2; exit 1 ;;
	esac
done
echo "$pkg $(basename "$deb")" >"$out/kernel-version"
rm -rf "$x" "$apt/debs"
mv "$out/vmlinuz.tmp" "$out/vmlinuz"
