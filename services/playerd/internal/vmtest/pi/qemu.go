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
	"slices"
	"strconv"
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
	syncPort     int    // forwarded to Syncthing's 22000 when not 0 (household figures)
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
	if c.syncPort != 0 {
		netdev += fmt.Sprintf(",hostfwd=tcp:127.0.0.1:%d-:22000", c.syncPort)
	}
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
		// Threads named by their part ("CPU 0/TCG"), for cpuStates.
		"-name", "storybox-pi,debug-threads=on",
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

// cpuStates says what a hung guest's processors do, from two looks 2 s
// apart: where each one is (program counter and exception level from qemu's
// monitor; one that has not moved, or sits in an exception handler, says
// where the guest hangs), and how much host CPU each of qemu's threads used
// in between (a vCPU thread busy all the time spins; all of them asleep and
// a monitor that does not answer say qemu itself is stuck).
func (m *machine) cpuStates() string {
	var b strings.Builder
	before, t0 := qemuThreads(m.cmd.Process.Pid), time.Now()
	for i := range 2 {
		if i > 0 {
			time.Sleep(2 * time.Second)
		}
		out, err := m.do("human-monitor-command", map[string]string{"command-line": "info registers -a"})
		var text string
		if err == nil {
			err = json.Unmarshal(out, &text)
		}
		if err != nil {
			fmt.Fprintf(&b, "  qemu's monitor does not answer: %v\n", err)
			continue
		}
		fmt.Fprintf(&b, "  %s\n", strings.Join(cpuLines(text), "  "))
	}
	after, span := qemuThreads(m.cmd.Process.Pid), time.Since(t0)
	var threads []string
	for _, t := range after {
		used := t.cpu
		for _, o := range before {
			if o.id == t.id {
				used -= o.cpu
			}
		}
		threads = append(threads, fmt.Sprintf("%s %s %.2f s", t.name, t.state, used.Seconds()))
	}
	fmt.Fprintf(&b, "  qemu's threads (state, host CPU used in %.1f s): %s", span.Seconds(), strings.Join(threads, ", "))
	return b.String()
}

// thread is one of a process's threads as /proc shows it.
type thread struct {
	id, name, state string
	cpu             time.Duration // user and system time so far
}

// qemuThreads reads the threads of process pid from /proc (nil when it
// cannot).
func qemuThreads(pid int) []thread {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ids, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var ts []thread
	for _, id := range ids {
		stat, err := os.ReadFile(filepath.Join(dir, id.Name(), "stat"))
		if err != nil {
			continue
		}
		if t, ok := parseThreadStat(id.Name(), string(stat)); ok {
			ts = append(ts, t)
		}
	}
	return ts
}

// parseThreadStat reads a thread's name, state and CPU time from its
// /proc/…/stat line: the name is in parentheses and may hold spaces ("CPU
// 0/TCG"), then come the state and, as fields 14 and 15, user and system
// time in clock ticks (USER_HZ, 100 on Linux).
func parseThreadStat(id, stat string) (thread, bool) {
	lp, rp := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if lp < 0 || rp < lp {
		return thread{}, false
	}
	f := strings.Fields(stat[rp+1:])
	if len(f) < 13 {
		return thread{}, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return thread{}, false
	}
	return thread{id: id, name: stat[lp+1 : rp], state: f[0], cpu: time.Duration(utime+stime) * 10 * time.Millisecond}, true
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
			// PSTATE, its flags, the security state and exception level,
			// up to the floating-point registers.
			end := slices.IndexFunc(f, func(w string) bool { return strings.HasPrefix(w, "FPCR=") })
			if end < 0 {
				end = len(f)
			}
			cpus[len(cpus)-1] += " " + strings.Join(f[:end], " ")
		}
	}
	return cpus
}
