package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// mpdProc is a running MPD with a FIFO output (see listen for how it is
// read).
type mpdProc struct {
	cmd   *exec.Cmd
	conn  net.Conn
	r     *bufio.Reader
	t0    time.Time
	ready time.Duration

	fifo *os.File
}

// measureMPD takes the same figures from MPD on the same media: first with
// a fresh database (scan), then playing at 48 kHz (as playerd did before it
// played at the file's rate) and at the file's own rate.
func measureMPD(o options, dir, media string) (*figures, error) {
	fig := &figures{cpu: map[string]float64{}, cpuNative: map[string]float64{}}
	for _, native := range []bool{false, true} {
		// The second MPD reads the database the first one made.
		sub := filepath.Join(dir, fmt.Sprintf("mpd-native-%v", native))
		m, err := startMPD(o.mpd, sub, filepath.Join(dir, "mpd.db"), media, native)
		if err != nil {
			return nil, err
		}
		err = m.measure(o, fig, native)
		m.stop()
		if err != nil {
			return nil, err
		}
	}
	return fig, nil
}

func (m *mpdProc) measure(o options, fig *figures, native bool) error {
	// MPD scans a library it has no database of at start.
	if err := m.waitUpdated(); err != nil {
		return err
	}
	if !native {
		fig.ready, fig.scan = m.ready, time.Since(m.t0)
		fmt.Printf("first answer %.0f ms, first scan done %.2f s\n", ms(fig.ready), fig.scan.Seconds())
	}
	cpu := fig.cpu
	label := "48 kHz"
	if native {
		cpu, label = fig.cpuNative, "the file's rate"
	}
	pid := m.cmd.Process.Pid
	settle(pid)
	for _, f := range formats {
		var err error
		cpu[f], err = least(o.repeat, func() (float64, error) {
			for _, c := range []string{"stop", "clear", fmt.Sprintf("add %q", benchFolder(o, f))} {
				if _, err := m.do(c); err != nil {
					return 0, err
				}
			}
			c0 := cpuSeconds(pid)
			if err := m.playToEnd(time.Duration(o.seconds+30) * time.Second); err != nil {
				return 0, err
			}
			return (cpuSeconds(pid) - c0) / float64(o.seconds), nil
		})
		if err != nil {
			return err
		}
		fmt.Printf("CPU per audio second, %s at %s: %.4f s/s\n", f, label, cpu[f])
	}
	if native {
		return nil
	}

	var err error
	fig.statusUS, err = least(o.repeat, func() (float64, error) {
		c0 := cpuSeconds(pid)
		for range o.statusN {
			if _, err := m.status(); err != nil {
				return 0, err
			}
		}
		return (cpuSeconds(pid) - c0) / float64(o.statusN) * 1e6, nil
	})
	if err != nil {
		return err
	}
	fmt.Printf("server CPU per status command: %.1f µs (%d, one connection)\n", fig.statusUS, o.statusN)

	// Sound is listened for on the FIFO output alone.
	if err := m.outputs(1); err != nil {
		return err
	}
	if fig.first, err = firstSamples(o, func() (time.Duration, error) { return m.firstSample(benchFolder(o, "flac")) }); err != nil {
		return err
	}
	fmt.Printf("play command → first audible sample: %s ms\n", joinMS(fig.first))
	if fig.firstMP3, err = firstSamples(o, func() (time.Duration, error) { return m.firstSample(benchFolder(o, "mp3")) }); err != nil {
		return err
	}
	fmt.Printf("same, MP3: %s ms\n", joinMS(fig.firstMP3))
	if _, err := m.do("stop"); err != nil {
		return err
	}
	time.Sleep(idleWait)
	fig.rssMB = anonymousRSS(pid) / 1e6
	fmt.Printf("idle anonymous RSS: %.1f MB\n", fig.rssMB)
	return nil
}

// benchFolder is the playing folder of a format, relative to the media root.
func benchFolder(o options, f string) string {
	if o.library > 0 {
		return "zz-bench-" + f
	}
	return f
}

func startMPD(bin, dir, db, media string, native bool) (*mpdProc, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		return nil, err
	}
	format := ""
	if !native {
		format = `format "48000:16:2"`
	}
	conf := fmt.Sprintf(`music_directory "%s"
db_file "%s"
bind_to_address "127.0.0.1"
port "%d"
log_file "%s"
auto_update "no"
zeroconf_enabled "no"
input {
	plugin "curl"
	enabled "no"
}
audio_output {
	type "null"
	name "paced"
	sync "yes"
	%[6]s
}
audio_output {
	type "fifo"
	name "listened"
	path "%[5]s"
	%[6]s
}
`, media, db, port, filepath.Join(dir, "log"), fifo, format)
	confPath := filepath.Join(dir, "mpd.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	// Read and write, so opening never blocks and a closed writer is no EOF.
	f, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	m := &mpdProc{fifo: f}
	m.cmd = exec.Command(bin, "--no-daemon", confPath)
	m.t0 = time.Now()
	if err := m.cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			m.conn, m.r = c, bufio.NewReader(c)
			if _, err := m.r.ReadString('\n'); err != nil { // "OK MPD 0.23.x"
				m.stop()
				return nil, err
			}
			if _, err := m.status(); err != nil {
				m.stop()
				return nil, err
			}
			m.ready = time.Since(m.t0)
			if err := m.outputs(0); err != nil {
				m.stop()
				return nil, err
			}
			return m, nil
		}
		if time.Since(m.t0) > 30*time.Second {
			m.stop()
			return nil, fmt.Errorf("mpd did not answer within 30 s (see %s)", filepath.Join(dir, "log"))
		}
		time.Sleep(time.Millisecond)
	}
}

// CPU is measured on MPD's null output paced in real time ("sync"), as a
// sound card would take the audio: its FIFO output spins when a reader takes
// everything at once (0.11 CPU s per audio s instead of 0.007 for Vorbis
// here) and its own pacing of an unread FIFO varied by 5× between runs. The
// first audible sample is read off the FIFO output, enabled alone for it.
func (m *mpdProc) outputs(enabled int) error {
	for id := range 2 {
		cmd := "disableoutput"
		if id == enabled {
			cmd = "enableoutput"
		}
		if _, err := m.do(fmt.Sprintf("%s %d", cmd, id)); err != nil {
			return err
		}
	}
	return nil
}

// listen reads the FIFO until the first non-silent frame.
func (m *mpdProc) listen() (time.Time, error) {
	buf := make([]byte, 16<<10)
	for {
		n, err := m.fifo.Read(buf)
		if err != nil {
			return time.Time{}, err
		}
		for i := 0; i+4 <= n; i += 4 {
			if binary.LittleEndian.Uint16(buf[i:]) != 0 || binary.LittleEndian.Uint16(buf[i+2:]) != 0 {
				return time.Now(), nil
			}
		}
	}
}

func (m *mpdProc) firstSample(folder string) (time.Duration, error) {
	for _, c := range []string{"stop", "clear", fmt.Sprintf("add %q", folder)} {
		if _, err := m.do(c); err != nil {
			return 0, err
		}
	}
	// Stopping empties the pipe; what is read from here on is new.
	time.Sleep(500 * time.Millisecond)
	heard := make(chan time.Time, 1)
	go func() {
		t, err := m.listen()
		if err == nil {
			heard <- t
		}
	}()
	t0 := time.Now()
	if _, err := m.do("play"); err != nil {
		return 0, err
	}
	select {
	case t := <-heard:
		return t.Sub(t0), nil
	case <-time.After(5 * time.Second):
		return 0, errors.New("no audible sample within 5 s")
	}
}

// do sends one command and returns its key: value lines.
func (m *mpdProc) do(cmd string) (map[string]string, error) {
	if _, err := fmt.Fprintf(m.conn, "%s\n", cmd); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for {
		line, err := m.r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "OK":
			return out, nil
		case strings.HasPrefix(line, "ACK "):
			return nil, fmt.Errorf("mpd %s: %s", cmd, line)
		}
		if k, v, ok := strings.Cut(line, ": "); ok {
			out[k] = v
		}
	}
}

func (m *mpdProc) status() (map[string]string, error) { return m.do("status") }

// waitUpdated waits until the database holds songs and no update runs (an
// update MPD started at start, or one asked for if it did not).
func (m *mpdProc) waitUpdated() error {
	asked := false
	for {
		st, err := m.status()
		if err != nil {
			return err
		}
		if st["updating_db"] == "" {
			stats, err := m.do("stats")
			if err != nil {
				return err
			}
			if stats["songs"] != "0" && stats["songs"] != "" {
				return nil
			}
			if !asked {
				if _, err := m.do("update"); err != nil {
					return err
				}
				asked = true
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// playToEnd plays the queue and returns when MPD has stopped at its end,
// waiting with the idle command rather than polling (see proc.playToEnd).
// MPD keeps a client's changes between idle commands, so a stop between the
// status and the idle is not missed.
func (m *mpdProc) playToEnd(limit time.Duration) error {
	if err := m.conn.SetDeadline(time.Now().Add(limit)); err != nil {
		return err
	}
	defer m.conn.SetDeadline(time.Time{})
	if _, err := m.do("play"); err != nil {
		return err
	}
	for {
		st, err := m.status()
		if err != nil {
			return fmt.Errorf("mpd did not stop within %v: %w", limit, err)
		}
		if st["state"] == "stop" {
			return nil
		}
		if _, err := m.do("idle player"); err != nil {
			return fmt.Errorf("mpd did not stop within %v: %w", limit, err)
		}
	}
}

func (m *mpdProc) stop() {
	if m.conn != nil {
		m.conn.Close()
	}
	if m.cmd != nil && m.cmd.Process != nil {
		stopProcess(m.cmd)
	}
	m.fifo.Close()
}
