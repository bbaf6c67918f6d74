package household

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// FolderID is the Syncthing folder id of Dir on every box.
const FolderID = "storybox-household"

// DirName is the shared folder's name in the data directory.
const DirName = "household"

// Dir is the shared folder of the box whose data directory is dataDir.
func Dir(dataDir string) string { return filepath.Join(dataDir, DirName) }

// Kind is a kind of entry: a directory of the shared folder.
type Kind string

// The kinds a household shares.
const (
	Cards    Kind = "cards"    // card id -> cards.Mapping
	Stations Kind = "stations" // station id -> radio.Station
	Podcasts Kind = "podcasts" // podcast id -> radio.Podcast
)

// Kinds are all kinds, in the order Reconcile reads them.
var Kinds = []Kind{Cards, Stations, Podcasts}

const (
	entryVersion = 1
	ext          = ".json"
	// maxEntry bounds the file read for one entry: a mapping or a station
	// is a few hundred bytes, and a file far larger is not one of ours.
	maxEntry = 64 << 10
)

// Entry is one file of the shared folder: the value of one card, station
// or podcast, or its tombstone.
type Entry struct {
	Version int    `json:"version"`
	Stamp   Stamp  `json:"stamp"`
	Box     string `json:"box"` // the box that wrote this version
	// Created is the stamp of the entry's first write since it was last
	// deleted; lists keep the order of creation by it, on every box alike.
	Created Stamp           `json:"created"`
	Deleted bool            `json:"deleted,omitempty"`
	Value   json.RawMessage `json:"value,omitempty"`
}

// version is an entry as read from one file, with the file's bytes.
type version struct {
	Entry
	data []byte
}

// beats is the merge rule: the higher stamp wins, then the higher box id;
// the bytes decide only between two files no box would write (the same
// stamp from the same box), so the order is total and every box picks the
// same version from the same set.
func (v version) beats(o version) bool {
	if c := v.Stamp.Compare(o.Stamp); c != 0 {
		return c > 0
	}
	if v.Box != o.Box {
		return v.Box > o.Box
	}
	return bytes.Compare(v.data, o.data) > 0
}

// Item is a live entry in a list.
type Item struct {
	ID    string
	Value json.RawMessage
	Entry Entry
}

// Store reads and writes the shared folder. Its methods are safe for
// concurrent use; a box has one Store.
type Store struct {
	dir string
	box string
	clk clock

	mu sync.Mutex // one write or reconcile at a time
}

// Open prepares the shared folder of dataDir for the box boxID and sets
// the clock past every stamp in it. now is the wall clock (nil: the
// machine's).
func Open(dataDir, boxID string, now func() time.Time) (*Store, error) {
	if boxID == "" {
		return nil, errors.New("household: a box id is required")
	}
	if now == nil {
		now = time.Now
	}
	s := &Store{dir: Dir(dataDir), box: boxID, clk: clock{now: now}}
	for _, k := range Kinds {
		if err := state.MkdirAll(filepath.Join(s.dir, string(k)), 0o755); err != nil {
			return nil, fmt.Errorf("household: %w", err)
		}
	}
	for _, k := range Kinds {
		if _, err := s.read(k); err != nil {
			return s, err
		}
	}
	return s, nil
}

// Box is the id this store writes as.
func (s *Store) Box() string { return s.box }

// group is one entry's files: the one under its name and Syncthing's
// conflict files of it.
type group struct {
	main      string
	conflicts []string
}

// scan groups the entry files of kind by entry id.
func (s *Store) scan(k Kind) (map[string]*group, error) {
	des, err := os.ReadDir(filepath.Join(s.dir, string(k)))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("household: %w", err)
	}
	groups := map[string]*group{}
	at := func(id string) *group {
		g := groups[id]
		if g == nil {
			g = &group{}
			groups[id] = g
		}
		return g
	}
	for _, de := range des {
		name := de.Name()
		if !de.Type().IsRegular() || Ignored(name) {
			continue
		}
		orig, conflict := ConflictOf(name)
		if !conflict {
			orig = name
		}
		id, ok := strings.CutSuffix(orig, ext)
		if !ok || !validID(id) {
			continue
		}
		if conflict {
			at(id).conflicts = append(at(id).conflicts, name)
		} else {
			at(id).main = name
		}
	}
	for _, g := range groups {
		slices.Sort(g.conflicts)
	}
	return groups, nil
}

// load reads one file as an entry; a file that is not one is an error.
func (s *Store) load(k Kind, name string) (version, error) {
	f, err := os.Open(filepath.Join(s.dir, string(k), name))
	if err != nil {
		return version{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxEntry+1))
	if err != nil {
		return version{}, err
	}
	if len(data) > maxEntry {
		return version{}, fmt.Errorf("%s: larger than %d bytes", name, maxEntry)
	}
	var e Entry
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return version{}, fmt.Errorf("%s: %w", name, err)
	}
	switch {
	case e.Version != entryVersion:
		return version{}, fmt.Errorf("%s: version %d is not %d", name, e.Version, entryVersion)
	case e.Box == "":
		return version{}, fmt.Errorf("%s: no box", name)
	case !e.Deleted && len(e.Value) == 0:
		return version{}, fmt.Errorf("%s: no value", name)
	}
	return version{Entry: e, data: data}, nil
}

// winner is the version of a group that the rule keeps, the file it came
// from and the files that are not it; ok is false when no file of the
// group is an entry. Unreadable files lose and are reported in errs. Stamps
// too far ahead of the clock are counted in rep, when there is one.
func (s *Store) winner(k Kind, g *group, rep *Report) (best version, from string, ok bool, errs []error) {
	names := g.conflicts
	if g.main != "" {
		names = append([]string{g.main}, names...)
	}
	for _, name := range names {
		v, err := s.load(k, name)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		if d := s.clk.observe(v.Stamp); d > 0 && rep != nil {
			rep.Ahead++
			rep.AheadBy = max(rep.AheadBy, d)
		}
		if !ok || v.beats(best) {
			best, from, ok = v, name, true
		}
	}
	return best, from, ok, errs
}

// read is every entry of kind, tombstones included, each as the rule
// decides between its files (conflict files are read, not resolved).
// Files that are not entries are skipped and reported in the error.
func (s *Store) read(k Kind) (map[string]version, error) {
	groups, err := s.scan(k)
	if err != nil {
		return nil, err
	}
	out := make(map[string]version, len(groups))
	var errs []error
	for id, g := range groups {
		v, _, ok, e := s.winner(k, g, nil)
		errs = append(errs, e...)
		if ok {
			out[id] = v
		}
	}
	if err := errors.Join(errs...); err != nil {
		return out, fmt.Errorf("household: %s: %w", k, err)
	}
	return out, nil
}

// List is the live entries of kind in the order they were created. Entry
// files that cannot be read are left out and reported in the error, beside
// the list of the others.
func (s *Store) List(k Kind) ([]Item, error) {
	all, err := s.read(k)
	items := make([]Item, 0, len(all))
	for id, v := range all {
		if !v.Deleted {
			items = append(items, Item{ID: id, Value: v.Value, Entry: v.Entry})
		}
	}
	slices.SortFunc(items, func(a, b Item) int {
		if c := a.Entry.Created.Compare(b.Entry.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return items, err
}

// Get is the entry id of kind, a tombstone included; ok is false when no
// box ever wrote it.
func (s *Store) Get(k Kind, id string) (Entry, bool, error) {
	if !validID(id) {
		return Entry{}, false, fault.New(fault.Invalid, "household: id %q is not a file name", id)
	}
	groups, err := s.scan(k)
	if err != nil {
		return Entry{}, false, err
	}
	g := groups[id]
	if g == nil {
		return Entry{}, false, nil
	}
	v, _, ok, errs := s.winner(k, g, nil)
	return v.Entry, ok, errors.Join(errs...)
}

// Put writes value as the entry id of kind, stamped by this box. A value
// equal to the live one writes nothing, so that writing the same list
// again (a migration, a restore) does not wake the other boxes. changed
// tells whether a file was written.
func (s *Store) Put(k Kind, id string, value any) (changed bool, err error) {
	raw, err := json.Marshal(value)
	if err != nil {
		return false, fmt.Errorf("household: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok, err := s.Get(k, id)
	if err != nil && !ok {
		return false, err
	}
	if ok && !cur.Deleted && sameJSON(cur.Value, raw) {
		return false, nil
	}
	st := s.clk.next()
	e := Entry{Version: entryVersion, Stamp: st, Box: s.box, Created: st, Value: raw}
	if ok && !cur.Deleted {
		e.Created = cur.Created
	}
	return true, s.write(k, id, e)
}

// Delete writes the tombstone of the entry id of kind. An entry that does
// not exist or is deleted already writes nothing: changed is false.
//
// Tombstones are kept for good. A removed file would let a box that was
// away, and still holds the entry, bring it back; a tombstone wins over
// every version older than the deletion, however late that box returns.
// One is about 200 bytes, and only a parent's deletion makes one.
func (s *Store) Delete(k Kind, id string) (changed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok, err := s.Get(k, id)
	if err != nil && !ok {
		return false, err
	}
	if !ok || cur.Deleted {
		return false, nil
	}
	st := s.clk.next()
	return true, s.write(k, id, Entry{Version: entryVersion, Stamp: st, Box: s.box, Created: cur.Created, Deleted: true})
}

func (s *Store) write(k Kind, id string, e Entry) error {
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return fmt.Errorf("household: %w", err)
	}
	if err := writeFile(filepath.Join(s.dir, string(k), id+ext), append(data, '\n')); err != nil {
		return fault.Wrap(fault.Internal, err, "the household's "+string(k)+" could not be saved")
	}
	return nil
}

// writeFile is the atomic write; a test replaces it to crash mid-write.
var writeFile = state.WriteFile

// sameJSON compares two encodings of a value; a file holds it indented.
func sameJSON(a, b []byte) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

// Report tells what a Reconcile did.
type Report struct {
	// Resolved counts the conflict files removed, Rewritten the entries
	// whose file was replaced by the version of a conflict file.
	Resolved, Rewritten int
	// Ahead counts the files stamped more than MaxAhead ahead of this
	// box's clock, AheadBy the furthest: the clock of the box that wrote
	// them, or this box's own, is wrong. They merge by their stamps all
	// the same, but this box's clock did not follow them.
	Ahead   int
	AheadBy time.Duration
}

// Reconcile resolves every conflict file Syncthing left: the version the
// rule keeps is written under the entry's name (byte for byte, so every
// box writes the same file and Syncthing sees no new conflict), and the
// conflict files are removed. It moves the clock past every stamp in the
// folder. Files that are not entries are reported in the error; a conflict
// file that is not one is removed all the same once a version is kept, as
// it can never win.
func (s *Store) Reconcile() (Report, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var rep Report
	var errs []error
	for _, k := range Kinds {
		groups, err := s.scan(k)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ids := make([]string, 0, len(groups))
		for id := range groups {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			g := groups[id]
			best, from, ok, e := s.winner(k, g, &rep)
			errs = append(errs, e...)
			if len(g.conflicts) == 0 || !ok {
				continue
			}
			dir := filepath.Join(s.dir, string(k))
			if from != g.main {
				if err := writeFile(filepath.Join(dir, id+ext), best.data); err != nil {
					errs = append(errs, err)
					continue // the conflict files stay until the winner is written
				}
				rep.Rewritten++
			}
			for _, c := range g.conflicts {
				if err := state.Remove(filepath.Join(dir, c)); err != nil {
					errs = append(errs, err)
					continue
				}
				rep.Resolved++
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return rep, fmt.Errorf("household: reconcile: %w", err)
	}
	return rep, nil
}
