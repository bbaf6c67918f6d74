package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// machine is one qemu raspi3b run and its QMP monitor.
type machine struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // after exited

	mu  sync.Mutex // one QMP command at a time
	qmp net.Conn
	r   *bufio.Reader
}

// vmConfig says how to start the board: the SD card, what to take from the
// boot partition, the extra kernel command line, host ports and files.
type vmConfig struct {
	card, dir    string
	boot         boot
	extraCmdline []string
	apiPort      int
	uiPort       int
	speaker      string // WAV file qemu records usb-audio into
	serial       string
}

// start boots the board. The guest's only network is qemu's user-mode
// stack with restrict=on (no way out), reached through forwards bound to
// 127.0.0.1.
func start(c vmConfig) (*machine, error) {
	qmpPath := filepath.Join(c.dir, "qmp.sock")
	os.Remove(qmpPath)
	cmdline := strings.Join(append([]string{c.boot.cmdline}, c.extraCmdline...), " ")
	netdev := fmt.Sprintf("user,id=net0,restrict=on,hostfwd=tcp:127.0.0.1:%d-:8090,hostfwd=tcp:127.0.0.1:%d-:9443", c.apiPort, c.uiPort)
	args := []string{
		"-M", "raspi3b", // BCM2837, 4 × Cortex-A53, 1 GB (mem= on the command line limits it)
		"-kernel", c.boot.kernel, "-dtb", c.boot.dtb, "-append", cmdline,
		"-drive", "file=" + c.card + ",if=sd,format=raw",
		// A USB Ethernet adapter: a vendor's (globally administered) address,
		// so the kernel names it eth0 as it does a real adapter.
		"-device", "usb-net,netdev=net0,mac=00:0e:c6:5b:0a:01", "-netdev", netdev,
		"-device", "usb-kbd",
		// A USB sound card, recorded as it plays. Without qemu's mixing
		// engine, which would scale every sample by the device's volume
		// setting (240/255 until a guest sets it; the box never touches the
		// mixer) and so no sample could be checked; with a 10 s buffer, as
		// the default one (32 ms) drops the packets a TCG guest sends in
		// bursts after a stall.
		"-device", "usb-audio,audiodev=speaker,buffer=1920000",
		"-audiodev", "wav,id=speaker,path=" + c.speaker + ",out.mixing-engine=off,out.voices=1",
		"-display", "none", "-serial", "null", "-serial", "file:" + c.serial,
		"-qmp", "unix:" + qmpPath + ",server=on,wait=off",
		"-no-reboot", // a reset ends the run instead of a reboot the model cannot do
	}
	m := &machine{exited: make(chan struct{})}
	m.cmd = exec.Command("qemu-system-aarch64", args...)
	m.cmd.Dir = c.dir
	logf, err := os.Create(filepath.Join(c.dir, "qemu.log"))
	if err != nil {
		return nil, err
	}
	m.cmd.Stdout, m.cmd.Stderr = logf, logf
	if err := m.cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() {
		m.err = m.cmd.Wait()
		logf.Close()
		close(m.exited)
	}()
	if err := m.connect(qmpPath); err != nil {
		m.kill()
		return nil, err
	}
	return m, nil
}

func (m *machine) running() bool {
	select {
	case <-m.exited:
		return false
	default:
		return true
	}
}

// connect opens QMP once qemu has made its socket.
func (m *machine) connect(path string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("unix", path)
		if err == nil {
			m.qmp, m.r = c, bufio.NewReader(c)
			break
		}
		if !m.running() || time.Now().After(deadline) {
			return fmt.Errorf("no QMP socket: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	m.qmp.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := m.r.ReadBytes('\n'); err != nil { // the greeting
		return err
	}
	_, err := m.do("qmp_capabilities", nil)
	return err
}

// do runs one QMP command and returns its "return" value.
func (m *machine) do(command string, args any) (json.RawMessage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	req := map[string]any{"execute": command}
	if args != nil {
		req["arguments"] = args
	}
	b, _ := json.Marshal(req)
	m.qmp.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := m.qmp.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	for {
		line, err := m.r.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("qmp %s: %v", command, err)
		}
		var resp struct {
			Return json.RawMessage `json:"return"`
			Error  *struct {
				Desc string `json:"desc"`
			} `json:"error"`
			Event string `json:"event"`
		}
		if err := json.Unmarshal(line, &resp); err != nil {
			return nil, fmt.Errorf("qmp %s: %v", command, err)
		}
		switch {
		case resp.Event != "":
			continue // asynchronous, not our answer
		case resp.Error != nil:
			return nil, fmt.Errorf("qmp %s: %s", command, resp.Error.Desc)
		}
		return resp.Return, nil
	}
}

// screendump writes the framebuffer as qemu shows it to path (PPM).
func (m *machine) screendump(path string) error {
	_, err := m.do("screendump", map[string]string{"filename": path})
	return err
}

// typeKeys presses and releases each key in turn on the USB keyboard, as a
// card reader types an id. qemu queues the keys and plays them out in its
// own time, each held 60 ms and 60 ms apart: well inside the reader's 0.5 s
// between keys, and slow enough for the keyboard's 16-event queue to ride
// out a guest that polls late.
func (m *machine) typeKeys(qcodes ...string) error {
	for _, k := range qcodes {
		_, err := m.do("send-key", map[string]any{"keys": []map[string]string{{"type": "qcode", "data": k}}, "hold-time": 60})
		if err != nil {
			return err
		}
	}
	return nil
}

// quit ends qemu in order, so the audio recording is complete.
func (m *machine) quit() error {
	if m.running() {
		if _, err := m.do("quit", nil); err != nil && m.running() {
			return err
		}
	}
	select {
	case <-m.exited:
		return nil
	case <-time.After(60 * time.Second):
		m.kill()
		return errors.New("qemu did not quit within 60 s")
	}
}

func (m *machine) kill() {
	if m.running() {
		m.cmd.Process.Kill()
		<-m.exited
	}
}

// cpuStates says where each processor is, twice 2 s apart (the program
// counter and exception level from qemu's monitor): a processor that has
// not moved, or sits at EL3 or in an exception handler, says where a hung
// guest hangs. A monitor that does not answer says qemu itself is stuck.
func (m *machine) cpuStates() string {
	var b strings.Builder
	for i := range 2 {
		if i > 0 {
			time.Sleep(2 * time.Second)
		}
		out, err := m.do("human-monitor-command", map[string]string{"command-line": "info registers -a"})
		if err != nil {
			return fmt.Sprintf("qemu's monitor does not answer: %v", err)
		}
		var text string
		if err := json.Unmarshal(out, &text); err != nil {
			return err.Error()
		}
		fmt.Fprintf(&b, "  %s\n", strings.Join(cpuLines(text), "  "))
	}
	return strings.TrimRight(b.String(), "\n")
}

// cpuLines picks each CPU's number, PC and PSTATE out of "info registers
// -a".
func cpuLines(text string) []string {
	var cpus []string
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 1 && strings.HasPrefix(f[0], "CPU#"):
			cpus = append(cpus, f[0])
		case len(cpus) > 0 && len(f) > 0 && strings.HasPrefix(f[0], "PC="):
			cpus[len(cpus)-1] += " " + f[0]
		case len(cpus) > 0 && len(f) > 0 && strings.HasPrefix(f[0], "PSTATE="):
			cpus[len(cpus)-1] += " " + strings.Join(f[:min(3, len(f))], " ")
		}
	}
	return cpus
}
