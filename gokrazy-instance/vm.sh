# vm.sh: sourced by the tests that boot the amd64 image (storybox-vm) under
# QEMU on their own: update-test.sh and powercut-test.sh. Like
# boot-test.sh: TCG, direct kernel boot with the kernel and command line
# from the image's own boot partition, a user-mode network with
# restrict=on, every forward on 127.0.0.1 only.

vm_taken=
# vm_free_port BASE: the first port from BASE on that nobody listens on and
# no earlier call handed out (other tests run in parallel).
vm_free_port() {
	local p=$1
	while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || [[ " $vm_taken " == *" $p "* ]]; do
		p=$((p + 1))
	done
	vm_taken="$vm_taken $p"
	echo "$p"
}

# vm_command IMAGE WORK DRIVE FORWARD...: sets the array vm_qemu to the QEMU
# command that boots IMAGE's kernel (copied into WORK) from the disk file
# DRIVE with the guest ports forwarded as given ("HOSTPORT-:GUESTPORT"). The
# caller adds -snapshot or not, and where the serial console goes.
# With VM_FIRMWARE=1 the disk boots through the PC firmware (SeaBIOS) and
# gokrazy's own boot loader instead, slower but the way a PC boots: a
# reboot then reads the boot partition again (an A/B switch takes effect),
# where direct kernel boot would start the first kernel and command line.
vm_command() {
	local img=$1 work=$2 drive=$3 bstart fat cmdline net fwd magic
	shift 3
	read -r bstart _ < <(partx -g -n 1 -o START,SECTORS "$img") || { echo "vm: no boot partition in $img" >&2; return 1; }
	fat="$img@@$((bstart * 512))"
	mcopy -n -o -i "$fat" ::vmlinuz "$work/vmlinuz" || { echo "vm: no vmlinuz in $img" >&2; return 1; }
	magic=$(dd if="$work/vmlinuz" bs=1 skip=514 count=4 status=none)
	[ "$magic" = HdrS ] || { echo "vm: the kernel in $img is not an x86 bzImage" >&2; return 1; }
	cmdline=$(mtype -i "$fat" ::cmdline.txt | tr -d '\r\n' | tr -s ' ') || return 1
	# rootwait instead of a fixed rootdelay; the console on the emulated UART.
	cmdline=$(sed -E 's/(^| )console=[^ ]*//g; s/rootdelay=[0-9]+/rootwait/' <<<"$cmdline")
	net="user,id=net0,restrict=on"
	for fwd in "$@"; do net="$net,hostfwd=tcp:127.0.0.1:$fwd"; done
	[[ $net == *restrict=on* ]] || return 1
	vm_qemu=(qemu-system-x86_64 -machine pc -accel tcg -smp 2 -m 1024
		-drive "file=$drive,format=raw,if=virtio"
		-device "e1000,netdev=net0" -netdev "$net" -nic none -monitor none -display none)
	[ "${VM_FIRMWARE:-}" = 1 ] || vm_qemu+=(-kernel "$work/vmlinuz" -append "$cmdline console=ttyS0,115200")
}

# vm_wait_healthy PORT PID TIMEOUT: waits until playerd on 127.0.0.1:PORT
# answers {"status":"ok"}, while the QEMU process PID lives; prints the
# seconds it took.
vm_wait_healthy() {
	local port=$1 pid=$2 timeout=$3 t0 h
	t0=$(date +%s.%N)
	while awk "BEGIN{exit !($(date +%s.%N) - $t0 < $timeout)}"; do
		kill -0 "$pid" 2>/dev/null || { echo "vm: QEMU exited before the API answered" >&2; return 1; }
		if h=$(curl -sf --max-time 3 "http://127.0.0.1:$port/api/health" 2>/dev/null) &&
			[ "$(jq -r .status <<<"$h" 2>/dev/null)" = ok ]; then
			awk "BEGIN{printf \"%.1f\n\", $(date +%s.%N) - $t0}"
			return 0
		fi
		sleep 0.5
	done
	echo "vm: no healthy /api/health on 127.0.0.1:$port within $timeout s" >&2
	return 1
}
