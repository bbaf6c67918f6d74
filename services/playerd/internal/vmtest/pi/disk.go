package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// boot is what qemu needs from the image's boot partition: the kernel, the
// board's device tree and the command line the Pi's firmware would pass.
type boot struct {
	kernel, dtb, cmdline string
}

// fromBootPartition copies the kernel and dtb out of img's FAT (mtools) and
// reads cmdline.txt, so what boots is what gok built.
func fromBootPartition(img, dtb, dir string) (boot, error) {
	start, _, err := partition(img, 1)
	if err != nil {
		return boot{}, err
	}
	fat := fmt.Sprintf("%s@@%d", img, start)
	b := boot{kernel: filepath.Join(dir, "vmlinuz"), dtb: filepath.Join(dir, dtb)}
	for _, f := range []struct{ name, to string }{{"vmlinuz", b.kernel}, {dtb, b.dtb}} {
		if out, err := exec.Command("mcopy", "-n", "-o", "-i", fat, "::"+f.name, f.to).CombinedOutput(); err != nil {
			return boot{}, fmt.Errorf("mcopy %s from the boot partition: %v: %s", f.name, err, out)
		}
	}
	out, err := exec.Command("mtype", "-i", fat, "::cmdline.txt").Output()
	if err != nil {
		return boot{}, fmt.Errorf("mtype cmdline.txt: %v", err)
	}
	b.cmdline = strings.Join(strings.Fields(string(out)), " ")
	return b, nil
}

// partition returns partition n's byte offset and size (partx).
func partition(img string, n int) (start, size int64, err error) {
	out, err := exec.Command("partx", "-g", "-n", strconv.Itoa(n), "-o", "START,SECTORS", img).Output()
	if err != nil {
		return 0, 0, fmt.Errorf("partx %s: %v", img, err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("partx %s: no partition %d", img, n)
	}
	s, err1 := strconv.ParseInt(f[0], 10, 64)
	c, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("partx %s: %q", img, out)
	}
	return s * 512, c * 512, nil
}

// sdCard makes the card qemu boots: a sparse copy of img, grown to the next
// power of two (qemu's SD card model takes no other size; the partitions
// stay where they are, as on a larger card), with files added to /perm.
// The image itself is never written.
func sdCard(img, card string, perm permFiles) error {
	if out, err := exec.Command("cp", "--sparse=always", img, card).CombinedOutput(); err != nil {
		return fmt.Errorf("copy %s: %v: %s", img, err, out)
	}
	st, err := os.Stat(card)
	if err != nil {
		return err
	}
	size := int64(1)
	for size < st.Size() {
		size <<= 1
	}
	if err := os.Truncate(card, size); err != nil {
		return err
	}
	start, _, err := partition(card, 4)
	if err != nil {
		return err
	}
	return perm.write(fmt.Sprintf("%s?offset=%d", card, start), filepath.Dir(card))
}

// permFiles are files to add to /perm: path below /perm → the host file
// holding their content (many paths may share one).
type permFiles map[string]string

// write adds the files to the ext4 file system fs with debugfs (e2fsprogs),
// making their directories, in one debugfs run.
func (p permFiles) write(fs, tmp string) error {
	script, err := os.CreateTemp(tmp, "debugfs-*.txt")
	if err != nil {
		return err
	}
	defer os.Remove(script.Name())
	w := bufio.NewWriter(script)
	made := map[string]bool{"/": true, ".": true}
	var mkdir func(string)
	mkdir = func(d string) {
		if made[d] {
			return
		}
		mkdir(filepath.Dir(d))
		made[d] = true
		fmt.Fprintf(w, "mkdir %s\n", quote(d))
	}
	for path, from := range p {
		path = "/" + strings.TrimPrefix(path, "/")
		mkdir(filepath.Dir(path))
		fmt.Fprintf(w, "write %s %s\n", quote(from), quote(path))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	script.Close()
	out, err := exec.Command("debugfs", "-w", "-f", script.Name(), fs).CombinedOutput()
	if err != nil {
		return fmt.Errorf("debugfs: %v: %s", err, lastLines(string(out), 5))
	}
	// debugfs carries on past a failed command and exits 0: read its words.
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "Could not") || strings.Contains(line, "File exists") || strings.Contains(line, "No free space") {
			return fmt.Errorf("debugfs: %s", line)
		}
	}
	return nil
}

// quote puts a debugfs argument in double quotes (names have spaces).
func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// The library the memory check runs with: libraryTracks tracks in albums
// of 20, below /perm/media/Bibliothek. The tracks are a few milliseconds
// long (the index, not the audio, is what costs memory), with names of a
// real audio-play collection's length.
const (
	libraryTracks = 10000
	measuringDir  = "media/Messung/Messton"
	libraryDir    = "media/Bibliothek"
)

// testFiles writes the measuring track and one tiny track into dir and maps
// the /perm paths to them.
func testFiles(dir string) (permFiles, error) {
	p := permFiles{}
	measuring := filepath.Join(dir, "messton.wav")
	if err := os.WriteFile(measuring, testmedia.WAV(signalRate, signal()), 0o644); err != nil {
		return nil, err
	}
	p[measuringDir+"/01 Messton.wav"] = measuring
	tiny := filepath.Join(dir, "tiny.wav")
	if err := os.WriteFile(tiny, testmedia.WAV(8000, make([][2]int16, 80)), 0o644); err != nil {
		return nil, err
	}
	for i := range libraryTracks {
		album, track := i/20+1, i%20+1
		p[fmt.Sprintf("%s/Hörspielreihe %03d - Die Abenteuer im Zauberwald/Folge %02d - Das Geheimnis der verschwundenen Laterne.wav",
			libraryDir, album, track)] = tiny
	}
	return p, nil
}
