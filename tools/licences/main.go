// Command licences writes NOTICE.md, the licences of storybox and of
// everything its Raspberry Pi image ships: the Go modules compiled into the
// image's programs (found with `go list -deps` as gok builds them, each
// licence named by github.com/google/licenseclassifier), the Go standard
// library, the kernel and firmware packages gokrazy puts on the image, and
// what the image carries beside them (the speech program, the Wi-Fi
// firmware). With -check it writes nothing and fails when the notice is out
// of date or a module's licence is unknown or not allowed (make check).
//
// usage: go run ./tools/licences [-check] [-instance DIR] [-out FILE]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

func main() {
	check := flag.Bool("check", false, "fail if -out differs from what would be written, write nothing")
	inst := flag.String("instance", "gokrazy-instance/storybox", "the gokrazy instance whose image the notice describes")
	out := flag.String("out", "NOTICE.md", "the notice")
	licence := flag.String("licence", "LICENSE", "storybox's own licence")
	flag.Parse()
	if err := run(*inst, *licence, *out, *check); err != nil {
		fmt.Fprintln(os.Stderr, "licences:", err)
		os.Exit(1)
	}
}

func run(instDir, licencePath, out string, check bool) error {
	in, err := readInstance(instDir)
	if err != nil {
		return err
	}
	own, err := os.ReadFile(licencePath)
	if err != nil {
		return err
	}
	lc, err := newClassifier()
	if err != nil {
		return err
	}
	ours, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		return fmt.Errorf("go list -m: %w", err)
	}
	n, err := collect(in, lc, string(own), strings.TrimSpace(string(ours)))
	if err != nil {
		return err
	}
	text, err := n.render()
	if err != nil {
		return err
	}
	if !check {
		return os.WriteFile(out, text, 0o644)
	}
	old, err := os.ReadFile(out)
	if err != nil {
		return fmt.Errorf("%w (make licences writes it)", err)
	}
	if line, ok := firstDifference(old, text); !ok {
		return fmt.Errorf("%s is out of date from line %d on (%q); make licences writes it anew", out, line, lineAt(text, line))
	}
	return nil
}

// firstDifference is the first line (from 1) where a and b differ; ok when
// they are equal.
func firstDifference(a, b []byte) (line int, ok bool) {
	if bytes.Equal(a, b) {
		return 0, true
	}
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return i + 1, false
		}
	}
	return min(len(la), len(lb)) + 1, false
}

func lineAt(b []byte, n int) string {
	lines := strings.Split(string(b), "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	return lines[n-1]
}
