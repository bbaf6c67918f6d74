package settings

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Store is the settings the box runs with. Readers call Get from anywhere;
// Put and Reload change the document (one at a time), and every change is
// handed to the parts that registered with OnChange, so each re-reads what
// concerns it.
type Store struct {
	dir  string
	cur  atomic.Pointer[Settings]
	mu   sync.Mutex // serialises changes and their notifications
	subs []func(old, new Settings)
}

// Open loads the settings of dataDir. It always returns a store; the error
// (a corrupt or invalid file, the defaults are used) is for the log.
func Open(dataDir string) (*Store, error) {
	s, err := Load(dataDir)
	st := &Store{dir: dataDir}
	st.cur.Store(&s)
	return st, err
}

// Get returns the current settings; the copy is the caller's.
func (st *Store) Get() Settings { return st.cur.Load().Clone() }

// OnChange registers f, called after every change with the old and the new
// settings, in registration order, before Put or Reload returns. Register
// before the store is shared.
func (st *Store) OnChange(f func(old, new Settings)) { st.subs = append(st.subs, f) }

// Put validates s, saves it atomically and makes it current. An invalid s
// (fault.Invalid naming the field) or a failed write changes nothing.
func (st *Store) Put(s Settings) error {
	s = s.Clone()
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := Save(st.dir, s); err != nil {
		return err
	}
	st.swap(s)
	return nil
}

// Update changes the current settings with f and saves them as Put does,
// under the store's lock, so a change made meanwhile (a parent's Put) is
// never overwritten with an older copy.
func (st *Store) Update(f func(*Settings)) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.cur.Load().Clone()
	f(&s)
	if err := Save(st.dir, s); err != nil {
		return err
	}
	st.swap(s)
	return nil
}

// Reload makes the file on disk current, for a file replaced underneath
// (a restored backup, checked before it was written).
func (st *Store) Reload() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	s, err := Load(st.dir)
	if err != nil {
		return fmt.Errorf("settings: reload: %w", err)
	}
	st.swap(s)
	return nil
}

func (st *Store) swap(s Settings) {
	old := *st.cur.Load()
	st.cur.Store(&s)
	for _, f := range st.subs {
		f(old.Clone(), s.Clone())
	}
}
