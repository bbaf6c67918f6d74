//go:build linux

package main

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The host tool sends the guest's requests to qemu's monitor, and still
// finds the guest's "RESULT done" when qemu has ended before the tool read
// it (qemu powers off right after printing it).
func TestHotplugFollowsTheConsole(t *testing.T) {
	dir := t.TempDir()
	log, sock := filepath.Join(dir, "console.log"), filepath.Join(dir, "monitor.sock")
	if err := os.WriteFile(log, []byte("vmtest: start\r\nHOTPLUG add\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		c.Write([]byte("QEMU 7.2.22 monitor - type 'help' for more information\r\n(qemu) "))
		cmd, _ := bufio.NewReader(c).ReadString('\n')
		f, _ := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString("RESULT headphones ok\r\nRESULT done\r\n")
		f.Close()
		c.Close() // qemu powers off
		got <- strings.TrimSpace(cmd)
	}()
	if err := hotplug(log, sock); err != nil {
		t.Fatal(err)
	}
	if cmd := <-got; cmd != "device_add usb-audio,id=phones,bus=xhci.0,audiodev=phones" {
		t.Errorf("monitor got %q", cmd)
	}
}
