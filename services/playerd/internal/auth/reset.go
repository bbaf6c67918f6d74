package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/state"
)

// resetDoneFile remembers the last reset file acted on, for a reset file
// that cannot be deleted (a read-only boot partition): it resets once, not
// at every start.
const resetDoneFile = "admin-reset-done"

// CheckReset is the forgotten-password reset. The file at path lives where
// only someone holding the box can put it (the SD card's boot partition).
// When a file not acted on before is there, the password and every session
// go, and the file is deleted, or, if it cannot be, remembered so it
// resets only once. It reports whether it reset.
func (m *Manager) CheckReset(path string) (bool, error) {
	fp, err := fingerprint(path)
	if err != nil || fp == "" {
		return false, err
	}
	done := filepath.Join(m.dir, resetDoneFile)
	if prev, err := os.ReadFile(done); err == nil && strings.TrimSpace(string(prev)) == fp {
		return false, nil
	}
	if err := m.Reset(); err != nil {
		return false, err
	}
	if err := state.WriteFile(done, []byte(fp+"\n")); err != nil {
		return true, err
	}
	_ = os.Remove(path) // a read-only boot partition keeps it; the mark above covers that
	return true, nil
}

// WatchReset calls CheckReset every period until ctx ends and hands each
// reset or error to report.
func (m *Manager) WatchReset(ctx context.Context, path string, every time.Duration, report func(reset bool, err error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if reset, err := m.CheckReset(path); reset || err != nil {
				report(reset, err)
			}
		}
	}
}

// fingerprint identifies one placing of the reset file: a new copy has a
// new modification time even with the same content. "" means no file.
func fingerprint(path string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reset file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("reset file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("reset file %s is not a regular file", path)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d %d\n", fi.Size(), fi.ModTime().UnixNano())
	if _, err := io.Copy(h, io.LimitReader(f, 4096)); err != nil {
		return "", fmt.Errorf("reset file: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// CheckResetFile refuses a reset file anywhere the API can write (writable:
// the media library takes uploads, the data directory restores backups):
// network access alone must never reset the password.
func CheckResetFile(file string, writable ...string) error {
	for _, dir := range writable {
		if inside(file, dir) {
			return fmt.Errorf("%s is inside %s, which the API writes to", file, dir)
		}
	}
	return nil
}

func inside(path, dir string) bool {
	p, err1 := filepath.Abs(path)
	d, err2 := filepath.Abs(dir)
	if err1 != nil || err2 != nil {
		return true
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
