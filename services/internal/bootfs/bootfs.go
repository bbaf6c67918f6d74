// Package bootfs makes the SD card's boot partition readable to playerd
// and netd.
// gokrazy does not mount it (it reads and writes it raw, for updates); a
// parent can write to it from any computer, so it is where a file can prove
// physical access to the box.
package bootfs

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Mount mounts partition 1 of the disk that holds /perm, read-only, at dir.
// Read-only, so it never races gokrazy's raw writes to the partition during
// an update. A mount left by an earlier run of playerd is kept.
func Mount(dir string) (device string, err error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("boot partition: %w", err)
	}
	defer f.Close()
	mounts, err := parseMountinfo(f)
	if err != nil {
		return "", fmt.Errorf("boot partition: %w", err)
	}
	if dev, ok := mounts[dir]; ok {
		return dev, nil
	}
	device, err = bootDevice(mounts["/perm"])
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("boot partition: %w", err)
	}
	if err := unix.Mount(device, dir, "vfat", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return "", fmt.Errorf("boot partition: mount %s on %s: %w", device, dir, err)
	}
	return device, nil
}

// bootDevice derives partition 1 from /perm's device: gokrazy's layout is
// boot, root A, root B, perm.
func bootDevice(perm string) (string, error) {
	base := strings.TrimRight(perm, "0123456789")
	if !strings.HasPrefix(perm, "/dev/") || perm[len(base):] != "4" {
		return "", fmt.Errorf("boot partition: /perm is on %q, not partition 4 of a disk", perm)
	}
	return base + "1", nil
}

// parseMountinfo maps mount points to their sources (proc(5)).
func parseMountinfo(r io.Reader) (map[string]string, error) {
	m := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 2 {
			continue
		}
		m[unescape(f[4])] = unescape(g[1])
	}
	return m, sc.Err()
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) && isOctal(s[i+1:i+4]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return true
}
