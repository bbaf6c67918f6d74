// Package kmod loads kernel modules the way modprobe would, for a system
// without modprobe (gokrazy): the Pi kernel builds its Wi-Fi driver
// (brcmfmac) as a module, and nothing else loads it.
package kmod

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrUnknown: the kernel has no such module (not in modules.dep).
var ErrUnknown = errors.New("not a module of this kernel")

// Loader loads modules from Dir, normally /lib/modules/$(uname -r).
type Loader struct {
	Dir string
	// load inserts one module file; finit_module unless a test sets it.
	load func(path string) error
}

// Default is the loader for the running kernel.
func Default() (*Loader, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return nil, err
	}
	return &Loader{Dir: filepath.Join("/lib/modules", unix.ByteSliceToString(u.Release[:]))}, nil
}

// Load loads each named module after the modules it depends on
// (modules.dep). A module that is loaded already, or built into the kernel
// (modules.builtin), counts as loaded.
func (l *Loader) Load(names ...string) error {
	deps, err := l.readDep()
	if err != nil {
		return err
	}
	builtin := l.readBuiltin()
	done := map[string]bool{}
	for _, name := range names {
		key := canon(name)
		if builtin[key] {
			continue
		}
		path, ok := deps.path[key]
		if !ok {
			return fmt.Errorf("module %s: %w", name, ErrUnknown)
		}
		// modules.dep lists a module's dependencies deepest last.
		chain := deps.needs[path]
		for i := len(chain) - 1; i >= 0; i-- {
			if err := l.insert(chain[i], done); err != nil {
				return err
			}
		}
		if err := l.insert(path, done); err != nil {
			return err
		}
	}
	return nil
}

func (l *Loader) insert(rel string, done map[string]bool) error {
	if done[rel] {
		return nil
	}
	done[rel] = true
	load := l.load
	if load == nil {
		load = finit
	}
	if err := load(filepath.Join(l.Dir, rel)); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("load %s: %w", filepath.Base(rel), err)
	}
	return nil
}

func finit(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.FinitModule(int(f.Fd()), "", 0)
}

type depTable struct {
	path  map[string]string   // module name -> relative path
	needs map[string][]string // relative path -> dependencies
}

func (l *Loader) readDep() (depTable, error) {
	t := depTable{path: map[string]string{}, needs: map[string][]string{}}
	f, err := os.Open(filepath.Join(l.Dir, "modules.dep"))
	if err != nil {
		return t, fmt.Errorf("kernel modules: %w", err)
	}
	defer f.Close()
	return t, parseDep(f, t)
}

func parseDep(r io.Reader, t depTable) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		mod, deps, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		t.path[canon(moduleName(mod))] = mod
		t.needs[mod] = strings.Fields(deps)
	}
	return sc.Err()
}

func (l *Loader) readBuiltin() map[string]bool {
	m := map[string]bool{}
	b, err := os.ReadFile(filepath.Join(l.Dir, "modules.builtin"))
	if err != nil {
		return m
	}
	for _, line := range strings.Fields(string(b)) {
		m[canon(moduleName(line))] = true
	}
	return m
}

// moduleName is the name of a module file: kernel/x/brcmfmac.ko.xz → brcmfmac.
func moduleName(path string) string {
	base := filepath.Base(path)
	if i := strings.Index(base, ".ko"); i >= 0 {
		base = base[:i]
	}
	return base
}

// canon treats - and _ alike, as the kernel does.
func canon(name string) string { return strings.ReplaceAll(name, "-", "_") }
