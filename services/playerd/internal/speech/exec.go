package speech

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Default locations of the speech program and its data in the image (gokrazy
// extra files) and the flags' defaults.
const (
	DefaultProgram = "/usr/local/bin/storybox-speak"
	DefaultDataDir = "/usr/local/share/storybox-speech"
)

// maxWAV bounds what the program may write: MaxTextRunes of speech is well
// under a minute, about 2 MB at 16 kHz.
const maxWAV = 32 << 20

// exitNoLanguage is storybox-speak's exit status for a language without voice.
const exitNoLanguage = 3

// ExecVoice runs the storybox-speak program (native/storybox-speak.c): text on
// stdin, WAV on stdout. The text never becomes an argument and no shell is
// involved; the arguments are the validated settings only.
type ExecVoice struct {
	Program string        // path of storybox-speak
	DataDir string        // directory with pico/ and espeak-ng-data/
	Timeout time.Duration // per rendering; 0 means 30 s

	once sync.Once
	id   string
	err  error
}

func (v *ExecVoice) probe() {
	v.once.Do(func() {
		f, err := os.Open(v.Program)
		if err != nil {
			v.err = fmt.Errorf("%w: %v", ErrUnavailable, err)
			return
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			v.err = fmt.Errorf("%w: %s is not an executable file", ErrUnavailable, v.Program)
			return
		}
		if st, err := os.Stat(v.DataDir); err != nil || !st.IsDir() {
			v.err = fmt.Errorf("%w: voice data directory %s missing", ErrUnavailable, v.DataDir)
			return
		}
		// The program's own bytes identify the voice version: a rebuilt
		// program (or new Debian libraries) gets fresh cache entries.
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			v.err = fmt.Errorf("%w: read %s: %v", ErrUnavailable, v.Program, err)
			return
		}
		v.id = "storybox-speak/" + hex.EncodeToString(h.Sum(nil))[:16]
	})
}

// ID implements Voice.
func (v *ExecVoice) ID() string { v.probe(); return v.id }

// Available implements Voice. The result is computed once: the program and
// its data are part of the read-only image.
func (v *ExecVoice) Available() error { v.probe(); return v.err }

// Render implements Voice.
func (v *ExecVoice) Render(ctx context.Context, r Request) ([]byte, error) {
	if err := v.Available(); err != nil {
		return nil, err
	}
	s, err := r.Settings.Normalized()
	if err != nil {
		return nil, err
	}
	timeout := v.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := exec.CommandContext(ctx, v.Program, "-d", v.DataDir, "-l", s.Language, "-e", s.Engine,
		"-r", strconv.Itoa(s.Rate), "-p", strconv.Itoa(s.Pitch))
	cmd.Stdin = strings.NewReader(r.Text)
	var out limitedBuffer
	out.max = maxWAV
	var stderr limitedBuffer
	stderr.max = 1024
	cmd.Stdout, cmd.Stderr = &out, &stderr
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	msg := strings.TrimSpace(stderr.String())
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == exitNoLanguage:
		return nil, fmt.Errorf("%w: %s", ErrLanguage, s.Language)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("speech program: %w", ctx.Err())
	case err != nil:
		return nil, fmt.Errorf("speech program: %v: %s", err, msg)
	case out.over:
		return nil, fmt.Errorf("speech program: output larger than %d bytes", maxWAV)
	}
	return out.Bytes(), nil
}

// limitedBuffer keeps at most max bytes and remembers that more came, so a
// misbehaving program cannot exhaust memory.
type limitedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := b.max - b.Len(); len(p) > room {
		p = p[:max(room, 0)]
		b.over = true
	}
	b.Buffer.Write(p)
	return n, nil
}
