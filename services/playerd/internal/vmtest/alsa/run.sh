#!/bin/bash
# ALSA integration test: boots Debian's arm64 kernel under qemu-system-aarch64
# (TCG, no network) with main.go as /init, and checks the RESULT lines it
# prints. The first boot plays to snd-aloop and captures its other end; the
# second plays to qemu's usb-audio device through snd-usb-audio, and qemu
# records what it played into a WAV file that is judged here; the third
# plays to snd-aloop while a 1,000-track library is measured. Kernel and
# modules are cached under $BUILD.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../../../.." && pwd)
build=${BUILD:-$repo/build/alsa-vm}
mkdir -p "$build"

bash "$repo/services/playerd/internal/vmtest/kernel/fetch.sh" "$build/kernel" soundcore snd snd-timer snd-pcm snd-aloop \
	usb-common usbcore xhci-hcd xhci-pci mc snd-seq-device snd-rawmidi snd-usbmidi-lib snd-hwdep snd-usb-audio

root="$build/root"
rm -rf "$root" && mkdir -p "$root"/{dev,proc,sys,modules}
(cd "$repo" && CGO_ENABLED=0 GOOS=linux GOARCH=arm64 "${GO:-go}" build -trimpath -o "$root/init" ./services/playerd/internal/vmtest/alsa)
cp "$build/kernel/modules/"*.ko "$root/modules/"
cp "$repo/services/playerd/internal/decode/testdata/tone.flac" "$root/tone.flac"
(cd "$root" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$build/initrd.cpio"

# boot NAME APPEND QEMU-ARGS...: one VM run, its console in $build/NAME.log.
# -nic none: the VM has no network at all. panic=-1 + -no-reboot: a kernel
# panic ends qemu instead of hanging until the timeout.
boot() {
	local name=$1 append=$2
	shift 2
	log="$build/$name.log"
	: >"$log"
	echo "test-vm: booting $(cut -d' ' -f1 "$build/kernel/kernel-version") under TCG ($name)"
	local t0
	t0=$(date +%s)
	timeout 600 qemu-system-aarch64 -M virt -cpu cortex-a72 -smp 2 -m 512 -accel tcg \
		-kernel "$build/kernel/vmlinuz" -initrd "$build/initrd.cpio" \
		-append "console=ttyAMA0 panic=-1 quiet $append" \
		-nic none -display none -monitor none -no-reboot -serial "file:$log" "$@" || {
		echo "test-vm: qemu failed or timed out (exit $?); console:"; tail -40 "$log"; exit 1; }
	echo "test-vm: VM ran $(( $(date +%s) - t0 )) s"
	grep -a '^RESULT' "$log" | tr -d '\r' || true
	grep -aq '^RESULT done' "$log" || { echo "test-vm: the VM did not finish; console:"; tail -40 "$log"; exit 1; }
	! grep -aq 'RESULT .* FAIL' "$log"
}

# A TCG guest that a busy host starves underruns, which says nothing about
# the code under test; such a boot runs once more. A failure without an
# underrun, or a second starved boot, fails the test.
starved() {
	! grep -a 'RESULT .* FAIL' "$log" | grep -Evq '[1-9][0-9]* underruns|underruns=[1-9]'
}
boot_again_if_starved() {
	boot "$@" && return 0
	starved || exit 1
	echo "test-vm: every failure above underran (the host starved the VM); booting once more"
	boot "$@" || exit 1
}

# VM_BOOTS picks boots while working on one of them.
boots=" ${VM_BOOTS:-loopback usb measure headphones} "
if [[ $boots == *" loopback "* ]]; then
	boot_again_if_starved loopback "storybox.engine_runs=${ENGINE_RUNS:-1}"
	for c in pcm-s16 pcm-s32 pcm-s24-3 beep-flac underrun busy engine unplug; do
		grep -aq "^RESULT $c ok" "$log" || { echo "test-vm: case $c did not pass"; exit 1; }
	done
fi
if [[ $boots == *" usb "* ]]; then
wav="$build/usb-speaker.wav"
rm -f "$wav"
boot_again_if_starved usb storybox.device=usb -device qemu-xhci -device usb-audio,audiodev=speaker \
	-audiodev "wav,id=speaker,path=$wav,out.frequency=48000,out.channels=2,out.format=s16"
result=$(grep -a '^RESULT usb-engine ok' "$log" || true)
ptv=$(grep -o 'play-to-volume=[0-9.]*' <<<"$result" | cut -d= -f2)
ptp=$(grep -o 'play-to-pause=[0-9.]*' <<<"$result" | cut -d= -f2)
[ -n "$ptv" ] && [ -n "$ptp" ] || { echo "test-vm: case usb-engine did not pass"; exit 1; }
(cd "$repo" && "${GO:-go}" run ./services/playerd/internal/vmtest/alsa check-speaker "$wav" "$ptv" "$ptp")
fi
# The player plays on snd-aloop while the library's loudness is measured in
# the background: an underrun fails it (after the one boot a starved host
# gets).
if [[ $boots == *" measure "* ]]; then
	boot_again_if_starved measure "storybox.case=measure storybox.measure=${MEASURE:-on}"
	grep -aq '^RESULT measure ok' "$log" || { echo "test-vm: case measure did not pass"; exit 1; }
fi
[[ $boots == *" headphones "* ]] || { echo "test-vm: passed"; exit 0; }

# The headphones: snd-aloop is the speaker; qemu's usb-audio device is
# plugged in (device_add) and pulled out (device_del) through qemu's monitor
# when the guest says so on the console, by the host tool beside qemu. qemu
# records what the headphones played.
host="$build/vmtest-host"
(cd "$repo" && "${GO:-go}" build -o "$host" ./services/playerd/internal/vmtest/alsa)
phones="$build/usb-headphones.wav"
mon="$build/monitor.sock"
boot_headphones() {
	rm -f "$phones" "$mon"
	"$host" hotplug "$build/headphones.log" "$mon" &
	local tool=$! rc=0
	boot headphones storybox.device=headphones -device qemu-xhci,id=xhci \
		-audiodev "wav,id=phones,path=$phones,out.frequency=48000,out.channels=2,out.format=s16" \
		-chardev "socket,id=mon,path=$mon,server=on,wait=off" -mon chardev=mon,mode=readline || rc=$?
	wait "$tool" || rc=1
	return $rc
}
if ! boot_headphones; then
	starved || exit 1
	echo "test-vm: every failure above underran (the host starved the VM); booting once more"
	boot_headphones || exit 1
fi
result=$(grep -a '^RESULT headphones ok' "$log" || true)
played=$(grep -o 'phones-played=[0-9.]*' <<<"$result" | cut -d= -f2)
[ -n "$played" ] || { echo "test-vm: case headphones did not pass"; exit 1; }
"$host" check-headphones "$phones" "$played"
echo "test-vm: passed"
