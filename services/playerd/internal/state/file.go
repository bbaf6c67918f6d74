package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
)

// WriteJSON replaces path with v as JSON: written to a temporary file in the
// same directory, synced, renamed over the old file, and the directory
// synced, so after a power cut the file is either the old or the new one.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("state: encode %s: %w", filepath.Base(path), err)
	}
	return WriteFile(path, append(data, '\n'))
}

// tempMarker is in the name of every temporary file WriteFile creates.
const tempMarker = ".tmp-"

// IsTemp reports whether name is a temporary file of WriteFile, left behind
// when a crash interrupted the write (it was never renamed into place).
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, tempMarker)
}

// RemoveAllTemps deletes every temporary file of WriteFile under dir, its
// subdirectories included: each was a write a power cut or a crash
// interrupted, never renamed into place, so never anyone's data; a box
// whose plug is pulled often would otherwise collect one per cut. Only a
// process that owns dir may call it, before its first write: a temporary
// file is a write in progress for anyone writing at the same time. It
// reports how many it removed; a file it cannot remove (a read-only disk)
// stays, harmless.
func RemoveAllTemps(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable part is skipped, the rest swept
		}
		if d.Type().IsRegular() && IsTemp(d.Name()) && os.Remove(path) == nil {
			n++
		}
		return nil
	})
	return n
}

// WriteFile is the atomic replace behind WriteJSON, for any content.
func WriteFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+tempMarker+"*")
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("state: write %s: %w", filepath.Base(path), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("state: sync %s: %w", filepath.Base(path), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	return syncDir(dir)
}

// MkdirAll makes dir and its missing parents, each one durable: the parent
// that got a new entry is synced, as a file's directory is after a rename,
// so a power cut cannot take back a directory a file was then saved in.
// Directories that exist cost one stat.
func MkdirAll(dir string, perm os.FileMode) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("state: %s is not a directory", dir)
		}
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := MkdirAll(parent, perm); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, perm); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil // made meanwhile by someone else, who syncs it
		}
		return fmt.Errorf("state: %w", err)
	}
	return syncDir(parent)
}

// Remove deletes path, durably: its directory is synced after, so the file
// does not come back after a power cut. A missing file is no error.
func Remove(path string) error {
	if err := os.Remove(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("state: %w", err)
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("state: sync dir: %w", err)
	}
	return nil
}

// ErrCorrupt reports a file that exists but cannot be decoded.
var ErrCorrupt = errors.New("corrupt file")

// ReadJSON decodes path into v (a non-nil pointer). A missing file returns
// fs.ErrNotExist and a file that does not decode ErrCorrupt; v is untouched
// then, so the caller keeps its defaults.
func ReadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("state: %s: %w", filepath.Base(path), fs.ErrNotExist)
		}
		return fmt.Errorf("state: %w", err)
	}
	// Decode into a scratch copy first, so a corrupt file cannot leave v
	// half filled.
	dst := reflect.ValueOf(v).Elem()
	scratch := reflect.New(dst.Type())
	scratch.Elem().Set(dst)
	if err := json.Unmarshal(data, scratch.Interface()); err != nil {
		return fmt.Errorf("state: %s: %w: %v", filepath.Base(path), ErrCorrupt, err)
	}
	dst.Set(scratch.Elem())
	return nil
}
