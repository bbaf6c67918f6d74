#!/bin/bash
# netd's radio integration test, two boots under qemu-system-aarch64 (TCG,
# -nic none) with main.go as /init, checked by the RESULT lines they print:
#
#  radios:    Debian's arm64 kernel with two mac80211_hwsim radios, the real
#             netd (cross-compiled) and gokrazy's own DHCP client at
#             /gokrazy/dhcp as on the box on one, Debian's hostapd with its
#             libraries, a test DHCP server and an mDNS client on the other,
#             and the regulatory database the Pi image ships.
#  pi-kernel: the Pi's own kernel (kernel.rpi, as pinned for the image) with
#             the image's modules and /lib/firmware: netd loads brcmfmac and
#             gets the country from that database.
#
# Kernel, modules and .debs are downloaded once (build/arm64-kernel,
# build/debian-arm64, the Go module cache); the rest is rebuilt each run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
build=${BUILD:-$repo/build/netd-vm}
go=${GO:-go}
mkdir -p "$build"
t0=$(date +%s)

# rfkill, cfg80211, libarc4 and mac80211 are what mac80211_hwsim needs;
# ctr and ccm are the CCMP cipher of the WPA2 network's group key.
modules=(rfkill cfg80211 libarc4 mac80211 mac80211_hwsim ctr ccm)
bash "$repo/services/playerd/internal/vmtest/kernel/fetch.sh" "$build/kernel" "${modules[@]}"

root=$build/root
rm -rf "$root"
mkdir -p "$root"/{dev,proc,sys,tmp,run,gokrazy,hostapd/lib,lib/firmware,lib/modules/vm/kernel}

# The modules with a modules.dep, for netd's own loader (-modules), which
# the Pi needs for brcmfmac. Each line lists a module's dependencies so that
# every one comes after those that need it (depmod's order).
for m in "${modules[@]}"; do cp "$build/kernel/modules/$m.ko" "$root/lib/modules/vm/kernel/"; done
deps_of() { tr '\0' '\n' <"$root/lib/modules/vm/kernel/$1.ko" | sed -n 's/^depends=//p' | tr ',' ' '; }
closure() {
	local d
	for d in $(deps_of "$1"); do
		echo "$d"
		closure "$d"
	done
}
for m in "${modules[@]}"; do
	# The last mention of each dependency is the one that keeps the order.
	list=$(closure "$m" | tac | awk '!seen[$0]++' | tac | sed 's|.*|kernel/&.ko|' | paste -sd' ')
	echo "kernel/$m.ko:${list:+ $list}"
done >"$root/lib/modules/vm/modules.dep"
: >"$root/lib/modules/vm/modules.builtin"

# hostapd and its libraries, started through the dynamic loader.
x=$(mktemp -d)
trap 'rm -rf "$x"' EXIT
bash "$repo/board/debian-debs.sh" "$repo/build/debian-arm64" --deps hostapd | while read -r deb; do
	dpkg-deb -x "$deb" "$x"
done
cp "$x/usr/sbin/hostapd" "$root/hostapd/hostapd"
cp -L "$(find "$x" -name 'ld-linux-aarch64.so.1' | head -1)" "$root/hostapd/ld.so"
for d in "$x"/lib/aarch64-linux-gnu "$x"/usr/lib/aarch64-linux-gnu; do
	if [ -d "$d" ]; then find "$d" -maxdepth 1 -name '*.so*' -exec cp -a {} "$root/hostapd/lib/" \;; fi
done

# The regulatory database exactly as the Pi image carries it.
bash "$repo/board/wifi-firmware.sh" "$repo/build/wifi-firmware" >/dev/null
cp "$repo/build/wifi-firmware/firmware/regulatory.db" "$repo/build/wifi-firmware/firmware/regulatory.db.p7s" "$root/lib/firmware/"

export CGO_ENABLED=0 GOOS=linux GOARCH=arm64
(cd "$repo" && "$go" build -trimpath -o "$root/init" ./services/netd/internal/vmtest)
(cd "$repo" && "$go" build -trimpath -o "$root/netd" ./services/netd)
# gokrazy's dhcp at the version the image pins.
(cd "$repo/gokrazy-instance/storybox/builddir/github.com/gokrazy/gokrazy" &&
	"$go" build -mod=mod -trimpath -o "$root/gokrazy/dhcp" github.com/gokrazy/gokrazy/cmd/dhcp)
(cd "$root" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$build/initrd.cpio"

# The second boot: the Pi's kernel package at the version the image pins,
# its whole module tree, and all of the image's /lib/firmware, which the
# init moves into place after boot (pi.go).
rpi=$(cd "$repo/gokrazy-instance/storybox/builddir/github.com/gokrazy/kernel.rpi" &&
	"$go" mod download -json github.com/gokrazy/kernel.rpi | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -s "$rpi/vmlinuz" ] || { echo "test-netd-vm: no kernel.rpi in the module cache ($rpi)"; exit 1; }
piroot=$build/root-pi
rm -rf "$piroot"
mkdir -p "$piroot"/{dev,proc,sys,tmp,run,lib/modules}
cp "$root/init" "$root/netd" "$piroot/"
cp -r "$rpi/lib/modules/." "$piroot/lib/modules/"
cp -r "$repo/build/wifi-firmware/firmware" "$piroot/firmware-later"
chmod -R u+w "$piroot"
(cd "$piroot" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$build/initrd-pi.cpio"

# boot NAME KERNEL INITRD APPEND CASE...: one VM run, its console in
# $build/NAME.log. -nic none: the VM has no network but its virtual radios.
# panic=-1 + -no-reboot: a kernel panic ends qemu instead of hanging until
# the timeout.
boot() {
	local name=$1 kernel=$2 initrd=$3 append=$4 c t1
	shift 4
	local log=$build/$name.log
	: >"$log"
	t1=$(date +%s)
	timeout 300 qemu-system-aarch64 -M virt -cpu cortex-a72 -smp 2 -m 512 -accel tcg \
		-kernel "$kernel" -initrd "$initrd" -append "console=ttyAMA0 panic=-1 quiet $append" \
		-nic none -display none -monitor none -no-reboot -serial "file:$log" || {
		echo "test-netd-vm: qemu failed or timed out (exit $?); console:"; tail -60 "$log"; exit 1; }
	echo "test-netd-vm: $name: VM ran $(($(date +%s) - t1)) s"
	grep -a '^RESULT\|^kernel: cfg80211' "$log" | tr -d '\r' || true
	grep -aq '^RESULT done' "$log" || { echo "test-netd-vm: the VM did not finish; console:"; tail -60 "$log"; exit 1; }
	for c in "$@"; do
		grep -aq "^RESULT $c ok" "$log" || { echo "test-netd-vm: case $c did not pass; console: $log"; tail -60 "$log"; exit 1; }
	done
}

echo "test-netd-vm: prepared in $(($(date +%s) - t0)) s"
boot radios "$build/kernel/vmlinuz" "$build/initrd.cpio" "" adapters country scan join wpa2-refused mdns reconnect stop
boot pi-kernel "$rpi/vmlinuz" "$build/initrd-pi.cpio" "storybox.kernel=pi" pi-modules pi-country stop
echo "test-netd-vm: passed in $(($(date +%s) - t0)) s"
