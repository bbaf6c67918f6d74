package library

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // cover uploads
	_ "image/png"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strings"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/decode"
	"golang.org/x/sys/unix"
)

// Limits bound what uploads may take.
type Limits struct {
	File    int64 // bytes of one audio file
	Request int64 // bytes of all files of one upload
	Cover   int64 // bytes of a cover image
	// MinFree is the space uploads leave free on the media's file system:
	// the box's own state lives there too (on the box, /perm holds both).
	MinFree int64
}

// DefaultLimits: an audio play of many hours as one file, a whole album in
// one request, a cover far larger than a screen needs.
func DefaultLimits() Limits {
	return Limits{File: 2 << 30, Request: 4 << 30, Cover: 8 << 20, MinFree: 64 << 20}
}

// SetLimits replaces the upload limits; call it before the library is
// shared.
func (l *Library) SetLimits(lim Limits) { l.limits = lim }

// Limits returns the upload limits.
func (l *Library) Limits() Limits { return l.limits }

// maxCoverSide bounds a cover's width and height: the screen decodes covers
// into memory (36 MB at this size), and a small file can declare a huge
// image.
const maxCoverSide = 3000

const (
	uploadPrefix = ".upload-"
	uploadSuffix = ".part"
	// freeCheckEvery is how often the free space is checked while a file
	// is written.
	freeCheckEvery = 8 << 20
)

// File is an uploaded audio file as stored.
type File struct {
	Name     string  `json:"name"`
	Relative string  `json:"relative"`
	Format   string  `json:"format"`
	Duration float64 `json:"duration"` // seconds
	Size     int64   `json:"size"`
}

// Upload puts audio files into one folder, all or nothing: each file is
// streamed to a hidden temporary file in that folder, checked by decoding,
// and only Commit gives the files their names. Close removes whatever was
// not committed. Uploads hold the library's change lock until Close.
type Upload struct {
	l       *Library
	root    *os.Root
	dir     string
	files   []pending
	total   int64
	release func()
}

type pending struct {
	tmp  string
	name string
	size int64
	info decode.Probe
}

// acquire takes the change lock (see change).
func (l *Library) acquire() (func(), error) {
	t := time.NewTimer(manageWait)
	defer t.Stop()
	select {
	case l.manage <- struct{}{}:
		return func() { <-l.manage }, nil
	case <-t.C:
		return nil, errBusy
	}
}

// Pending is an upload in progress as those who hand it on see it (Upload,
// or a wrapper that tells others of its commit).
type Pending interface {
	Add(name string, r io.Reader) (File, error)
	Commit() ([]File, error)
	Close()
}

// BeginUpload starts an upload into the folder id of size bytes in all (-1
// when unknown). It fails with fault.TooLarge when that would leave less
// than Limits.MinFree free.
func (l *Library) BeginUpload(id string, size int64) (*Upload, error) {
	if size > l.limits.Request {
		return nil, fault.New(fault.TooLarge, "an upload takes at most %d MB", l.limits.Request>>20)
	}
	release, err := l.acquire()
	if err != nil {
		return nil, err
	}
	u := &Upload{l: l, release: release}
	if u.root, err = os.OpenRoot(l.root); err != nil {
		u.Close()
		return nil, fault.Wrap(fault.Unavailable, err, "media directory unavailable")
	}
	if u.dir, err = resolve(u.root, id); err != nil {
		u.Close()
		return nil, err
	}
	u.removeLeftovers()
	d, err := u.root.Open(dirName(u.dir))
	if err != nil {
		u.Close()
		return nil, fmt.Errorf("library: %w", err)
	}
	free, err := freeSpace(d)
	d.Close()
	if err == nil && size > 0 && free-l.limits.MinFree < size {
		u.Close()
		return nil, fault.New(fault.TooLarge, "not enough free space: %d MB free, the upload needs %d MB", max(0, free-l.limits.MinFree)>>20, size>>20)
	}
	return u, nil
}

// removeLeftovers deletes temporary files of uploads that a power cut or a
// crash interrupted: while this upload holds the lock, no other runs.
func (u *Upload) removeLeftovers() {
	entries, err := fs.ReadDir(u.root.FS(), dirName(u.dir))
	if err != nil {
		return
	}
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, uploadPrefix) && strings.HasSuffix(n, uploadSuffix) && e.Type().IsRegular() {
			_ = u.root.Remove(path.Join(u.dir, n))
		}
	}
}

func dirName(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

func freeSpace(f *os.File) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

func tempName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return uploadPrefix + hex.EncodeToString(b[:]) + uploadSuffix
}

// Add stores one file under the name it came with (made safe with
// FileName). Content that does not decode as audio is refused with
// fault.Unsupported and nothing of it stays on disk; a file over the limits
// or the free space is refused with fault.TooLarge.
func (u *Upload) Add(name string, r io.Reader) (File, error) {
	name = FileName(name)
	tmp := path.Join(u.dir, tempName())
	f, err := u.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return File{}, fmt.Errorf("library: upload: %w", err)
	}
	kept := false
	defer func() {
		if !kept {
			_ = u.root.Remove(tmp)
		}
	}()
	size, err := u.write(f, r, name)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return File{}, err
	}
	rf, err := u.root.Open(tmp)
	if err != nil {
		return File{}, fmt.Errorf("library: upload: %w", err)
	}
	info, err := decode.ProbeFile(rf)
	if err != nil {
		return File{}, fault.Wrap(fault.Unsupported, err, fmt.Sprintf("%s is not audio the box can play", name))
	}
	// The scan goes by extension: a file that plays keeps its name and
	// gains the extension of its format when it has none that is audio.
	if !decode.IsAudio(name) {
		name = truncate(name, MaxName-len(info.Ext)) + info.Ext
	}
	u.files = append(u.files, pending{tmp: tmp, name: name, size: size, info: info})
	u.total += size
	kept = true
	return File{Name: name, Format: info.Format, Duration: info.Duration, Size: size}, nil
}

// write copies r into f within the limits and the free space.
func (u *Upload) write(f *os.File, r io.Reader, name string) (int64, error) {
	lim := u.l.limits
	buf := make([]byte, 256<<10)
	var n, checked int64
	for {
		k, rerr := r.Read(buf)
		if k > 0 {
			n += int64(k)
			if n > lim.File {
				return n, fault.New(fault.TooLarge, "%s is larger than %d MB", name, lim.File>>20)
			}
			if u.total+n > lim.Request {
				return n, fault.New(fault.TooLarge, "an upload takes at most %d MB", lim.Request>>20)
			}
			if n-checked >= freeCheckEvery || checked == 0 {
				checked = n
				if free, err := freeSpace(f); err == nil && free < lim.MinFree {
					return n, fault.New(fault.TooLarge, "the box's storage is full")
				}
			}
			if _, err := f.Write(buf[:k]); err != nil {
				if errors.Is(err, unix.ENOSPC) {
					return n, fault.New(fault.TooLarge, "the box's storage is full")
				}
				return n, fmt.Errorf("library: upload: %w", err)
			}
		}
		if errors.Is(rerr, io.EOF) {
			return n, nil
		}
		if rerr != nil {
			var tooBig *http.MaxBytesError
			if errors.As(rerr, &tooBig) {
				return n, fault.New(fault.TooLarge, "an upload takes at most %d MB", tooBig.Limit>>20)
			}
			return n, fault.Wrap(fault.Invalid, rerr, "upload interrupted")
		}
	}
}

// Commit gives every added file its name, with " (2)", " (3)" … when the
// name is taken, and scans the library.
func (u *Upload) Commit() ([]File, error) {
	out := make([]File, 0, len(u.files))
	for _, p := range u.files {
		name, err := u.freeName(p.name)
		if err != nil {
			return nil, err
		}
		rel := path.Join(u.dir, name)
		if err := u.root.Rename(p.tmp, rel); err != nil {
			return nil, fmt.Errorf("library: upload: %w", err)
		}
		out = append(out, File{Name: name, Relative: rel, Format: p.info.Format, Duration: p.info.Duration, Size: p.size})
	}
	u.files = nil
	if err := syncDir(u.root, u.dir); err != nil {
		return nil, err
	}
	u.Close()
	_, err := u.l.rescan("")
	return out, err
}

func (u *Upload) freeName(name string) (string, error) {
	for k := 1; k <= 1000; k++ {
		cand := name
		if k > 1 {
			cand = withSuffix(name, k)
		}
		if _, err := u.root.Lstat(path.Join(u.dir, cand)); errors.Is(err, fs.ErrNotExist) {
			return cand, nil
		}
	}
	return "", fault.New(fault.Conflict, "%s: too many files of that name", name)
}

// Close removes the files that were not committed and ends the upload. It
// may be called more than once.
func (u *Upload) Close() {
	if u.root != nil {
		for _, p := range u.files {
			_ = u.root.Remove(p.tmp)
		}
		u.files = nil
		u.root.Close()
		u.root = nil
	}
	if u.release != nil {
		u.release()
		u.release = nil
	}
}

// SetCover makes image the cover of the folder id: a JPEG or PNG (sniffed,
// whatever the request says) of at most Limits.Cover bytes and
// maxCoverSide pixels a side, that decodes. It replaces every other cover file of the
// folder, so it is the one the scan finds.
func (l *Library) SetCover(id string, r io.Reader) (Dir, error) {
	data, err := io.ReadAll(io.LimitReader(r, l.limits.Cover+1))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return Dir{}, fault.New(fault.TooLarge, "a cover takes at most %d MB", l.limits.Cover>>20)
		}
		return Dir{}, fault.Wrap(fault.Invalid, err, "upload interrupted")
	}
	if int64(len(data)) > l.limits.Cover {
		return Dir{}, fault.New(fault.TooLarge, "a cover takes at most %d MB", l.limits.Cover>>20)
	}
	var name string
	switch http.DetectContentType(data) {
	case "image/jpeg":
		name = "cover.jpg"
	case "image/png":
		name = "cover.png"
	default:
		return Dir{}, fault.New(fault.Unsupported, "a cover must be a JPEG or PNG image")
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return Dir{}, fault.New(fault.Invalid, "damaged image: %v", err)
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > maxCoverSide || cfg.Height > maxCoverSide {
		return Dir{}, fault.New(fault.Invalid, "a cover must be 1..%d pixels a side, not %dx%d", maxCoverSide, cfg.Width, cfg.Height)
	}
	// Decoded once whole, as the screen will: a damaged image is refused
	// now rather than shown as a blank tile.
	if _, _, err := image.Decode(bytes.NewReader(data)); err != nil {
		return Dir{}, fault.New(fault.Invalid, "damaged image: %v", err)
	}
	var rel string
	err = l.change(func(root *os.Root) error {
		if rel, err = resolve(root, id); err != nil {
			return err
		}
		return writeCover(root, rel, name, data)
	})
	if err != nil {
		return Dir{}, err
	}
	return l.rescan(rel)
}

func writeCover(root *os.Root, dir, name string, data []byte) error {
	tmp := path.Join(dir, tempName())
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("library: cover: %w", err)
	}
	defer root.Remove(tmp) // after the rename: nothing there
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, path.Join(dir, name))
	}
	if err != nil {
		if errors.Is(err, unix.ENOSPC) {
			return fault.New(fault.TooLarge, "the box's storage is full")
		}
		return fmt.Errorf("library: cover: %w", err)
	}
	entries, err := fs.ReadDir(root.FS(), dirName(dir))
	if err != nil {
		return fmt.Errorf("library: cover: %w", err)
	}
	for _, e := range entries {
		if n := e.Name(); n != name && e.Type().IsRegular() && isCoverName(n) {
			if err := root.Remove(path.Join(dir, n)); err != nil {
				return fmt.Errorf("library: cover: %w", err)
			}
		}
	}
	return syncDir(root, dir)
}
