#!/bin/bash
# Cards and buttons integration test: boots Debian's arm64 kernel under
# qemu-system-aarch64 (TCG, no network) with main.go as /init and the real
# playerd binary beside it, and checks the RESULT lines it prints. When the
# VM asks for it, the power button of the virt board is pressed through the
# QEMU monitor (system_powerdown pulses line 3 of its PL061 GPIO chip; with
# acpi=off and no firmware, QEMU wires it to the PL061, and with no gpio-keys
# driver loaded the line is free for playerd). Kernel and modules are cached
# under $BUILD.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../../../.." && pwd)
build=${BUILD:-$repo/build/cards-vm}
mkdir -p "$build"

bash "$repo/services/playerd/internal/vmtest/kernel/fetch.sh" "$build/kernel" evdev uinput

root="$build/root"
rm -rf "$root" && mkdir -p "$root"/{dev,proc,sys,modules,tmp}
(cd "$repo" && CGO_ENABLED=0 GOOS=linux GOARCH=arm64 "${GO:-go}" build -trimpath -o "$root/init" ./services/playerd/internal/vmtest/cards)
(cd "$repo" && CGO_ENABLED=0 GOOS=linux GOARCH=arm64 "${GO:-go}" build -trimpath -o "$root/playerd" ./services/playerd)
cp "$build/kernel/modules/"*.ko "$root/modules/"
(cd "$root" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$build/initrd.cpio"

log="$build/serial.log"
mon="$build/monitor"
: >"$log"
rm -f "$mon.in" "$mon.out" && mkfifo "$mon.in" "$mon.out"
echo "test-cards-vm: booting $(cut -d' ' -f1 "$build/kernel/kernel-version") under TCG"
t0=$(date +%s)
timeout 900 qemu-system-aarch64 -M virt,acpi=off -cpu cortex-a72 -smp 2 -m 1024 -accel tcg \
	-kernel "$build/kernel/vmlinuz" -initrd "$build/initrd.cpio" \
	-append "console=ttyAMA0 panic=-1 quiet" \
	-nic none -display none -monitor "pipe:$mon" -no-reboot -serial "file:$log" &
qemu=$!
exec 3<>"$mon.in" 4<>"$mon.out" # keep the pipes open; drain the monitor's output
cat <&4 >/dev/null &
drain=$!
pressed=0
while kill -0 "$qemu" 2>/dev/null; do
	if [ "$pressed" = 0 ] && grep -aq '^vmtest: press the power button' "$log"; then
		echo "system_powerdown" >&3
		pressed=1
	fi
	sleep 0.2
done
wait "$qemu" || { rc=$?; echo "test-cards-vm: qemu failed or timed out (exit $rc); console:"; tail -60 "$log"; exit 1; }
kill "$drain" 2>/dev/null || true
echo "test-cards-vm: VM ran $(( $(date +%s) - t0 )) s"

grep -a '^RESULT\|^vmtest' "$log" | tr -d '\r' || true
grep -aq '^RESULT done' "$log" || { echo "test-cards-vm: the VM did not finish; console:"; tail -60 "$log"; exit 1; }
for c in playerd claim unknown teach "assign and play" "repeat within 2 s" keyboard "stop card" replug "gpio button" "clock steps"; do
	grep -aq "^RESULT $c ok" "$log" || { echo "test-cards-vm: case $c did not pass; console:"; tail -60 "$log"; exit 1; }
done
if grep -aq 'RESULT .* FAIL' "$log"; then exit 1; fi
echo "test-cards-vm: passed"
