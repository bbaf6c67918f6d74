//go:build linux

package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/output"
)

// hotplug runs on the host beside the headphones VM: it follows the VM's
// console (log) and, when the guest asks, plugs qemu's usb-audio device in
// or pulls it out through qemu's human monitor (monitor, a Unix socket).
// It ends at the guest's "RESULT done", or when qemu is gone.
func hotplug(log, monitor string) error {
	var conn net.Conn
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		c, err := net.Dial("unix", monitor)
		if err == nil {
			conn = c
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("qemu's monitor: %w", err)
		}
	}
	defer conn.Close()
	// The monitor echoes each command with terminal codes; its complaints
	// go to the host's log. When it closes, qemu has ended.
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		sc := bufio.NewScanner(conn)
		for sc.Scan() {
			if line := sc.Text(); strings.Contains(line, "rror") {
				fmt.Println("hotplug: qemu:", strings.TrimSpace(line))
			}
		}
	}()
	f, err := os.Open(log)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var line string
	ended := false // qemu has ended: what the console holds is all there is
	for {
		part, err := r.ReadString('\n')
		line += part
		if err != nil { // the console has no more yet
			if ended {
				return fmt.Errorf("qemu ended before the guest was done")
			}
			select {
			case <-gone:
				ended = true
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		cmd := ""
		switch strings.TrimSpace(line) {
		case "HOTPLUG add":
			cmd = "device_add usb-audio,id=phones,bus=xhci.0,audiodev=phones"
		case "HOTPLUG del":
			cmd = "device_del phones"
		case "RESULT done":
			return nil
		}
		line = ""
		if cmd == "" {
			continue
		}
		fmt.Println("hotplug:", cmd)
		if _, err := fmt.Fprintln(conn, cmd); err != nil {
			return fmt.Errorf("qemu's monitor: %w", err)
		}
	}
}

// checkHeadphones judges qemu's recording of the headphones: the tone,
// continuous, at their cap's level (volume phonesCap), for about as long as
// the guest played them (seconds).
func checkHeadphones(path string, seconds float64) (string, error) {
	got, err := readRecording(path)
	if err != nil {
		return "", err
	}
	sound := 0
	for _, fr := range got {
		if fr != [2]int32{} {
			sound++
		}
	}
	if s := float64(sound) / output.DefaultRate; s < seconds-0.5 {
		return "", fmt.Errorf("the headphones sounded %.2fs; the guest played them %.2fs", s, seconds)
	}
	first := 0
	for got[first] == [2]int32{} {
		first++
	}
	last := len(got)
	for got[last-1] == [2]int32{} {
		last--
	}
	// Leave out the fade-in and the end the unplug cut off.
	body := got[first+output.DefaultRate/10 : last-output.DefaultRate/10]
	want := toneDBFS - 0.4*(100-phonesCap)
	if level := dbfs(peak(body)); level < want-1 || level > want+1 {
		return "", fmt.Errorf("the headphones played at %.1f dBFS, want %.1f (volume %d; the speaker plays at %.1f)", level, want, phonesCap, toneDBFS)
	}
	// Reported, not required: the headphones run at 48 kHz where the
	// speaker ran the 44.1 kHz tone as it is, and the gapless boundary to
	// the next track, resampled, bends the sine by about 0.3 % of full
	// scale for a sample (the usb boot, which requires the tone continuous,
	// ends before its first boundary). A lost or repeated stretch would
	// move the tone's phase, which the level check above does not see, so
	// the guest's underrun count stands for it as in the usb boot.
	return fmt.Sprintf("sounded %.2fs at %.1f dBFS (cap %d: %.1f dBFS; the speaker %.1f dBFS); bends in the sine at frames %v",
		float64(sound)/output.DefaultRate, dbfs(peak(body)), phonesCap, want, toneDBFS, splices(body)), nil
}
