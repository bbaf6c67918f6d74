#!/bin/bash
# Display integration test: boots Debian's arm64 kernel under
# qemu-system-aarch64 (TCG, no network) with a virtio-gpu framebuffer at
# 800x480 and main.go as /init, and checks the RESULT lines it prints.
# Kernel and modules are cached under $BUILD.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../../../.." && pwd)
build=${BUILD:-$repo/build/display-vm}
mkdir -p "$build"

bash "$repo/services/playerd/internal/vmtest/kernel/fetch.sh" "$build/kernel" virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci drm drm_kms_helper drm_shmem_helper virtio_dma_buf virtio-gpu evdev uinput

root="$build/root"
rm -rf "$root" && mkdir -p "$root"/{dev,proc,sys,modules}
(cd "$repo" && CGO_ENABLED=0 GOOS=linux GOARCH=arm64 "${GO:-go}" build -trimpath -o "$root/init" ./services/playerd/internal/vmtest/display)
cp "$build/kernel/modules/"*.ko "$root/modules/"
(cd "$root" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$build/initrd.cpio"

log="$build/serial.log"
: >"$log"
echo "test-display-vm: booting $(cut -d' ' -f1 "$build/kernel/kernel-version") under TCG"
t0=$(date +%s)
# -nic none: no network at all. panic=-1 + -no-reboot: a kernel panic ends
# qemu instead of hanging until the timeout. The kernel console stays on the
# serial line; fbcon still binds to fb0, which is what KD_GRAPHICS silences.
timeout 600 qemu-system-aarch64 -M virt -cpu cortex-a72 -smp 2 -m 512 -accel tcg \
	-kernel "$build/kernel/vmlinuz" -initrd "$build/initrd.cpio" \
	-append "console=ttyAMA0 panic=-1 quiet" \
	-device virtio-gpu-pci,xres=800,yres=480 \
	-nic none -display none -monitor none -no-reboot -serial "file:$log" || {
	echo "test-display-vm: qemu failed or timed out (exit $?); console:"; tail -40 "$log"; exit 1; }
echo "test-display-vm: VM ran $(( $(date +%s) - t0 )) s"

grep -a '^RESULT\|^vmtest' "$log" | tr -d '\r' || true
grep -aq '^RESULT done' "$log" || { echo "test-display-vm: the VM did not finish; console:"; tail -40 "$log"; exit 1; }
for c in framebuffer progress touch; do
	grep -aq "^RESULT $c ok" "$log" || { echo "test-display-vm: case $c did not pass"; exit 1; }
done
if grep -aq 'RESULT .* FAIL' "$log"; then exit 1; fi
echo "test-display-vm: passed"
