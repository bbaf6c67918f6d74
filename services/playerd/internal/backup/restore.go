package backup

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// Limits bound what a restore reads. A ZIP declares sizes it need not keep
// (a zip bomb expands a few kilobytes into gigabytes), so entries are
// measured as they are read, never trusted from their headers.
type Limits struct {
	Archive int64 // bytes of the uploaded archive
	Entry   int64 // bytes of one file, decompressed
	Total   int64 // bytes of all files, decompressed
	Entries int   // entries in the archive, media included
}

// DefaultLimits: the configuration of a box is kilobytes; a resume point
// for each of ten thousand folders is about 2 MB.
func DefaultLimits() Limits {
	return Limits{Archive: 16 << 20, Entry: 4 << 20, Total: 16 << 20, Entries: 10000}
}

// Result tells what a restore did.
type Result struct {
	Manifest Manifest `json:"manifest"`
	Restored []string `json:"restored"` // files replaced from the archive
	Removed  []string `json:"removed"`  // files of the list the archive did not have
	// MediaSkipped counts media/ entries, which a restore does not write:
	// media goes back through uploads or onto the SD card.
	MediaSkipped int `json:"media_skipped"`
}

func bad(format string, a ...any) error { return fault.New(fault.Invalid, format, a...) }

// Restore reads an archive from r, checks all of it, and then replaces the
// files of the list in dataDir with the archive's (removing those it does
// not have), atomically, and applies them. Any fault in the archive is
// fault.Invalid naming the entry (fault.TooLarge for an archive over
// Limits.Archive), and changes nothing.
func Restore(dataDir string, r io.Reader, files []File, lim Limits) (Result, error) {
	spool, size, err := spoolArchive(dataDir, r, lim.Archive)
	if err != nil {
		return Result{}, err
	}
	defer func() {
		spool.Close()
		os.Remove(spool.Name())
	}()
	contents, res, err := read(spool, size, files, lim)
	if err != nil {
		return Result{}, err
	}
	if err := replace(dataDir, files, contents); err != nil {
		return Result{}, err
	}
	for _, f := range files {
		if _, ok := contents[f.Name]; ok {
			res.Restored = append(res.Restored, f.Name)
		} else {
			res.Removed = append(res.Removed, f.Name)
		}
	}
	var errs []error
	for _, f := range files {
		if f.Apply != nil {
			if err := f.Apply(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", f.Name, err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return res, fmt.Errorf("backup: restored, but applying it failed: %w", err)
	}
	return res, nil
}

// spoolArchive copies the upload to a hidden file in dataDir: a ZIP is
// read from its end, and the upload must not sit in memory.
func spoolArchive(dataDir string, r io.Reader, limit int64) (*os.File, int64, error) {
	f, err := os.CreateTemp(dataDir, tempPrefix+"upload-*")
	if err != nil {
		return nil, 0, fmt.Errorf("backup: %w", err)
	}
	n, err := io.Copy(f, io.LimitReader(r, limit+1))
	if err == nil && n > limit {
		err = fault.New(fault.TooLarge, "a backup to restore takes at most %d MB", limit>>20)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		if fault.KindOf(err) == fault.Internal {
			err = fault.Wrap(fault.Invalid, err, "upload interrupted")
		}
		return nil, 0, err
	}
	return f, n, nil
}

// read checks every entry and returns the content of the listed files.
func read(ra io.ReaderAt, size int64, files []File, lim Limits) (map[string][]byte, Result, error) {
	var res Result
	if err := checkDirectory(ra, size, lim.Entries); err != nil {
		return nil, res, err
	}
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return nil, res, bad("not a ZIP archive: %v", err)
	}
	byName := map[string]File{}
	for _, f := range files {
		byName[f.Name] = f
	}
	contents := map[string][]byte{}
	seen := map[string]bool{}
	var total int64
	var manifest []byte
	for _, zf := range zr.File {
		name := zf.Name
		if !cleanName(name) {
			return nil, res, bad("entry %q: not a plain relative name", name)
		}
		if seen[name] {
			return nil, res, bad("entry %q: appears twice", name)
		}
		seen[name] = true
		if strings.HasPrefix(name, MediaDir) {
			if !strings.HasSuffix(name, "/") {
				res.MediaSkipped++
			}
			continue
		}
		_, listed := byName[name]
		if !listed && name != ManifestName {
			return nil, res, bad("entry %q: not a file this box restores", name)
		}
		data, err := readEntry(zf, min(lim.Entry, lim.Total-total))
		if err != nil {
			return nil, res, err
		}
		total += int64(len(data))
		if name == ManifestName {
			manifest = data
			continue
		}
		if err := byName[name].Check(data); err != nil {
			return nil, res, bad("entry %q: %s", name, fault.Message(err))
		}
		contents[name] = data
	}
	if manifest == nil {
		return nil, res, bad("entry %q is missing: not a backup of this box", ManifestName)
	}
	if err := checkManifest(manifest, &res.Manifest); err != nil {
		return nil, res, err
	}
	return contents, res, nil
}

// cleanName accepts slash-separated relative names without "." or "..".
func cleanName(name string) bool {
	trimmed := strings.TrimSuffix(name, "/")
	return trimmed != "" && !strings.ContainsAny(name, "\\\x00") && !path.IsAbs(name) &&
		path.Clean(trimmed) == trimmed && !slices.Contains(strings.Split(trimmed, "/"), "..")
}

// readEntry decompresses one entry, at most limit bytes; the CRC is checked
// at its end.
func readEntry(zf *zip.File, limit int64) ([]byte, error) {
	if strings.HasSuffix(zf.Name, "/") {
		return nil, bad("entry %q: a directory where a file belongs", zf.Name)
	}
	rc, err := zf.Open()
	if err != nil {
		return nil, bad("entry %q: %v", zf.Name, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, bad("entry %q is damaged: %v", zf.Name, err)
	}
	if int64(len(data)) > limit {
		return nil, bad("entry %q: larger than this box restores", zf.Name)
	}
	return data, nil
}

func checkManifest(data []byte, m *Manifest) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(m); err != nil {
		return bad("entry %q: %v", ManifestName, err)
	}
	switch {
	case m.Format != Format:
		return bad("entry %q: not a %s archive", ManifestName, Format)
	case m.FormatVersion > FormatVersion:
		return bad("entry %q: format %d is newer than this box reads (%d)", ManifestName, m.FormatVersion, FormatVersion)
	case m.FormatVersion < 1:
		return bad("entry %q: format_version %d", ManifestName, m.FormatVersion)
	}
	return nil
}

// checkDirectory reads the ZIP's end record before the reader allocates
// its directory: archives of more than lim entries, and ZIP64 archives
// (which a configuration never needs, and whose 64-bit counts a forged
// archive can inflate), are refused.
func checkDirectory(ra io.ReaderAt, size int64, lim int) error {
	const endLen, maxComment = 22, 65535
	n := min(size, endLen+maxComment)
	buf := make([]byte, n)
	if _, err := ra.ReadAt(buf, size-n); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("backup: %w", err)
	}
	i := bytes.LastIndex(buf, []byte("PK\x05\x06"))
	if i < 0 || len(buf)-i < endLen {
		return bad("not a ZIP archive")
	}
	end := buf[i:]
	records := binary.LittleEndian.Uint16(end[10:])
	dirSize := binary.LittleEndian.Uint32(end[12:])
	dirOffset := binary.LittleEndian.Uint32(end[16:])
	if records == 0xffff || dirSize == 0xffffffff || dirOffset == 0xffffffff {
		return bad("ZIP64 archives are not restored")
	}
	if int(records) > lim {
		return bad("the archive has %d entries; a backup has at most %d", records, lim)
	}
	return nil
}

// The journal. Files are written to temporaries first; then the journal,
// the list of renames and removals, is written atomically: from that moment
// the restore has happened, and Recover completes it after a crash. Until
// then nothing was replaced, and Recover removes the temporaries.
const (
	journalName = "restore-journal.json"
	tempPrefix  = ".restore-"
)

type journal struct {
	Ops []op `json:"ops"`
}

// op replaces Name by Temp, or removes Name when Temp is empty.
type op struct {
	Name string `json:"name"`
	Temp string `json:"temp,omitempty"`
}

func replace(dataDir string, files []File, contents map[string][]byte) error {
	var j journal
	cleanup := func() {
		for _, o := range j.Ops {
			if o.Temp != "" {
				os.Remove(filepath.Join(dataDir, o.Temp))
			}
		}
	}
	for _, f := range files {
		data, ok := contents[f.Name]
		if !ok {
			j.Ops = append(j.Ops, op{Name: f.Name})
			continue
		}
		tmp, err := writeTemp(dataDir, f.Name, data)
		if err != nil {
			cleanup()
			return err
		}
		j.Ops = append(j.Ops, op{Name: f.Name, Temp: tmp})
	}
	if err := state.WriteJSON(filepath.Join(dataDir, journalName), j); err != nil {
		cleanup()
		return fmt.Errorf("backup: %w", err)
	}
	return finish(dataDir, j)
}

func writeTemp(dataDir, name string, data []byte) (string, error) {
	f, err := os.CreateTemp(dataDir, tempPrefix+name+"-*")
	if err != nil {
		return "", fmt.Errorf("backup: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("backup: write %s: %w", name, err)
	}
	return filepath.Base(f.Name()), nil
}

// finish carries out a written journal. Every step may already have been
// done by an interrupted run: a temporary that is gone was renamed.
func finish(dataDir string, j journal) error {
	for _, o := range j.Ops {
		dst := filepath.Join(dataDir, o.Name)
		if o.Temp == "" {
			if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("backup: %w", err)
			}
			continue
		}
		if err := os.Rename(filepath.Join(dataDir, o.Temp), dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("backup: %w", err)
		}
	}
	if err := syncDir(dataDir); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dataDir, journalName)); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return syncDir(dataDir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("backup: sync: %w", err)
	}
	return nil
}

// Recover completes a restore that a crash interrupted after it was
// committed, and removes the leftovers of one interrupted before. Call it
// before anything reads the data directory; it reports whether a restore
// was completed.
func Recover(dataDir string) (bool, error) {
	var j journal
	err := state.ReadJSON(filepath.Join(dataDir, journalName), &j)
	completed := false
	switch {
	case err == nil:
		if err := finish(dataDir, j); err != nil {
			return false, err
		}
		completed = true
	case errors.Is(err, fs.ErrNotExist):
	case errors.Is(err, state.ErrCorrupt):
		// WriteJSON replaces atomically: a torn journal cannot be; an
		// unreadable one is not carried out.
		os.Remove(filepath.Join(dataDir, journalName))
	default:
		return false, fmt.Errorf("backup: %w", err)
	}
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		return completed, fmt.Errorf("backup: %w", err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			os.Remove(filepath.Join(dataDir, e.Name()))
		}
	}
	return completed, nil
}
