#!/usr/bin/env bash
# wifi-firmware.sh OUT
#
# Stages the Wi-Fi files the Raspberry Pi kernel (kernel.rpi, brcmfmac as a
# module, cfg80211 built in) looks for under /lib/firmware, which neither
# kernel.rpi nor gokrazy/firmware carries, into OUT/firmware, for the image's
# ExtraFilePaths (gokrazy-instance/storybox/config.json):
#
#   brcm/brcmfmac<chip>-sdio.{bin,clm_blob}     chip firmware and its CLM blob
#   brcm/brcmfmac<chip>-sdio.raspberrypi,<board>.txt   the board's NVRAM
#   regulatory.db, regulatory.db.p7s             the regulatory database
#   storybox-wifi-firmware.txt                   where they come from, and
#                                                their licences
#
# Sources: Debian trixie's firmware-brcm80211 (non-free-firmware) and
# wireless-regdb (main), fetched by debian-debs.sh (signed Release files,
# checked hashes) into CACHE (default build/debian-arm64). Symbolic links of
# the package are resolved into plain files: gok copies what a link points
# to anyway.
#
# Only what a Raspberry Pi's own chips need is taken: for each chip family
# below, its firmware and CLM blob and every raspberrypi,* NVRAM file. The
# script fails when a file the boards in board/README.md rely on is missing
# (a Debian update that renamed something), rather than build an image whose
# Wi-Fi cannot start.
set -euo pipefail
out=${1:?usage: wifi-firmware.sh OUT}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
cache=${DEBIAN_CACHE:-$repo/build/debian-arm64}

# The chip families of the Pi 3, 3+, 4, 400, 5, 500, CM4/CM5 and Zero 2 W,
# in brcmfmac's firmware names (43430 = CYW43438, 43430b0 = the Zero 2 W's
# later 43436 module, 43455 = CYW43455, 43456 = the Pi 400's chip).
chips=(43430 43430b0 43436 43436s 43455 43456)
# What must be there: the boards board/README.md lists as covered.
required=(
	brcm/brcmfmac43430-sdio.bin brcm/brcmfmac43430-sdio.clm_blob
	brcm/brcmfmac43430-sdio.raspberrypi,3-model-b.txt
	brcm/brcmfmac43430-sdio.raspberrypi,model-zero-2-w.txt
	brcm/brcmfmac43455-sdio.bin brcm/brcmfmac43455-sdio.clm_blob
	brcm/brcmfmac43455-sdio.raspberrypi,3-model-b-plus.txt
	brcm/brcmfmac43455-sdio.raspberrypi,3-model-a-plus.txt
	brcm/brcmfmac43455-sdio.raspberrypi,4-model-b.txt
	brcm/brcmfmac43455-sdio.raspberrypi,4-compute-module.txt
	brcm/brcmfmac43455-sdio.raspberrypi,5-model-b.txt
	brcm/brcmfmac43455-sdio.raspberrypi,5-compute-module.txt
	brcm/brcmfmac43455-sdio.raspberrypi,500.txt
	regulatory.db regulatory.db.p7s
)

mapfile -t debs < <(bash "$here/debian-debs.sh" "$cache" firmware-brcm80211 wireless-regdb)
x=$(mktemp -d)
trap 'rm -rf "$x"' EXIT
for d in "${debs[@]}"; do
	dpkg-deb -x "$d" "$x/root"
done
src=$x/root/usr/lib/firmware
[ -d "$src" ] || src=$x/root/lib/firmware
[ -d "$src/brcm" ] || { echo "wifi-firmware: no brcm/ in ${debs[*]}" >&2; exit 1; }

stage=$out/firmware.tmp
rm -rf "$stage"
mkdir -p "$stage/brcm"
for c in "${chips[@]}"; do
	for f in "$src/brcm/brcmfmac$c-sdio".{bin,clm_blob,txt} "$src/brcm/brcmfmac$c-sdio.raspberrypi,"*; do
		[ -e "$f" ] || continue
		cp -L "$f" "$stage/brcm/"
	done
done
# The kernel.rpi kernel trusts the upstream maintainers' keys (sforshee,
# wens), not Debian's, so the upstream-signed database it is.
cp -L "$src/regulatory.db-upstream" "$stage/regulatory.db"
cp -L "$src/regulatory.db.p7s-upstream" "$stage/regulatory.db.p7s"

missing=()
for f in "${required[@]}"; do
	[ -s "$stage/$f" ] || missing+=("$f")
done
if ((${#missing[@]})); then
	echo "wifi-firmware: missing from ${debs[*]}: ${missing[*]}" >&2
	exit 1
fi

# Provenance and licences travel with the files (the Broadcom and Cypress
# licences ask for a copy of the agreement with every distribution; the
# NVRAM files are GPL-2).
copyright=$x/root/usr/share/doc/firmware-brcm80211/copyright
{
	echo "Wi-Fi firmware and regulatory database of the storybox image"
	echo
	echo "Taken unmodified from Debian packages (board/wifi-firmware.sh):"
	for d in "${debs[@]}"; do
		printf '  %s  sha256 %s\n' "$(basename "$d")" "$(sha256sum "$d" | cut -d' ' -f1)"
	done
	echo
	echo "Files (brcm/brcmfmac{43430,43455}-sdio.{bin,clm_blob} are Debian's"
	echo "cypress/cyfmac{43430,43455}-sdio.{bin,clm_blob}, linked there):"
	(cd "$stage" && find . -type f | LC_ALL=C sort | sed 's|^\./||' | while read -r f; do
		printf '  %s  sha256 %s\n' "$f" "$(sha256sum "$f" | cut -d' ' -f1)"
	done)
	echo
	echo "==== firmware-brcm80211: debian/copyright, the parts for these files"
	echo
	awk 'BEGIN { RS = ""; ORS = "\n\n" }
		/^Files: brcm\/bcm43xx\*\.fw brcm\/brcmfmac\*\.bin/ ||
		/^Files: brcm\/brcmfmac4373\.bin cypress\/cyfmac43\*\.bin/ ||
		/^Files: brcm\/brcmfmac43241b4-sdio/ ||
		/^License: binary-redist-Broadcom-wifi\n/ ||
		/^License: binary-redist-Cypress\n/ ||
		/^License: GPL-2\n/' "$copyright"
	echo "==== wireless-regdb: debian/copyright"
	echo
	cat "$x/root/usr/share/doc/wireless-regdb/copyright"
	if [ -s /usr/share/common-licenses/GPL-2 ]; then
		echo
		echo "==== GPL-2"
		echo
		cat /usr/share/common-licenses/GPL-2
	fi
} >"$x/manifest"
grep -q 'License: binary-redist-Cypress' "$x/manifest" ||
	{ echo "wifi-firmware: the Cypress licence was not found in $copyright" >&2; exit 1; }
mv "$x/manifest" "$stage/storybox-wifi-firmware.txt"

rm -rf "$out/firmware"
mv "$stage" "$out/firmware"
echo "wifi-firmware: $(find "$out/firmware" -type f | wc -l) files, $(du -sk "$out/firmware" | cut -f1) KiB in $out/firmware"
