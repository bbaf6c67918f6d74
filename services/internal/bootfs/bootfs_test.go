package bootfs

import (
	"strings"
	"testing"
)

// From a gokrazy Pi: /perm is partition 4 of the SD card.
const mountinfo = `19 1 179:2 / / ro,relatime - squashfs /dev/root ro
20 19 0:5 / /dev rw,relatime - devtmpfs devtmpfs rw,size=187528k
27 19 179:4 / /perm rw,relatime - ext4 /dev/mmcblk0p4 rw
28 19 0:25 / /run rw,relatime - tmpfs tmpfs rw
29 28 179:1 / /run/playerd\040boot ro,nosuid,nodev,noexec,relatime - vfat /dev/mmcblk0p1 ro,fmask=0022
`

func TestParseMountinfo(t *testing.T) {
	m, err := parseMountinfo(strings.NewReader(mountinfo))
	if err != nil {
		t.Fatal(err)
	}
	if m["/perm"] != "/dev/mmcblk0p4" || m["/"] != "/dev/root" || m["/run/playerd boot"] != "/dev/mmcblk0p1" {
		t.Errorf("mounts %v", m)
	}
}

func TestBootDevice(t *testing.T) {
	for perm, want := range map[string]string{
		"/dev/mmcblk0p4": "/dev/mmcblk0p1",
		"/dev/sda4":      "/dev/sda1",
		"/dev/nvme0n1p4": "/dev/nvme0n1p1",
		"/dev/sda14":     "",
		"/dev/sda2":      "",
		"":               "",
		"tmpfs":          "",
	} {
		got, err := bootDevice(perm)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("bootDevice(%q) = %q, %v; want %q", perm, got, err, want)
		}
	}
}
