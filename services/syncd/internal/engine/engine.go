// Package engine runs Syncthing for syncd: it makes the box's keys once
// (`syncthing generate`, which touches no network), writes Syncthing's
// configuration anew before every start (package stconf), starts it only
// while the household has another box, at low CPU and I/O priority and
// under a memory limit, and starts it again after a crash (with a pause
// that doubles) or after a change of the household (at once: a removed
// box must lose its access now, not at the next restart).
package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/syncapi"
	"github.com/storybox/storybox/services/syncd/internal/members"
	"github.com/storybox/storybox/services/syncd/internal/stconf"
)

// Config is where Syncthing and what it shares live.
type Config struct {
	// Program is the syncthing binary.
	Program string
	// State is syncd's directory on /perm: the API key, the household
	// and Syncthing's home (keys, configuration, index).
	State string
	// Household and Media are the folders shared.
	Household, Media string
	// GUI is the loopback HOST:PORT of Syncthing's REST API.
	GUI string
	// Port is where Syncthing listens for the other boxes.
	Port int
	// Name is this box's name as the other boxes show it.
	Name string
	// MemoryLimit bounds Syncthing's memory: its Go heap (GOMEMLIMIT)
	// and, with Cgroup, the whole process (memory.max).
	MemoryLimit int64
	// Cgroup is the cgroup v2 directory to run Syncthing in; empty:
	// none (GOMEMLIMIT alone).
	Cgroup string
	// Output receives Syncthing's log; nil discards it.
	Output io.Writer
	Log    *slog.Logger
}

// householdIgnore are the ignore lines of both folders: the temporary
// files of playerd's atomic writes (internal/state) never leave the box,
// and neither do Syncthing's conflict copies. A conflict copy is made by
// each box that pulls the winning version over a concurrent one of its
// own, and is named after the winner's device, so two boxes make the same
// name at the same second. Shared, each box's copy was a concurrent
// version of the other's, which Syncthing pulled over a file that playerd
// was removing on that box at the same time ("file modified but not
// rescanned", a retry a minute later, and again). Kept local, each box
// resolves its own copy: the one holding the version the merge rule keeps
// writes it under the entry's name, a plain newer version that reaches
// every box. The patterns are playerd's household.IgnorePatterns, which
// syncd cannot import.
var householdIgnore = []string{"(?d).*.tmp-*", "(?d)*.sync-conflict-*"}

// Engine is Syncthing on this box. Its methods are safe for concurrent
// use.
type Engine struct {
	cfg     Config
	members *members.Store
	self    string
	apiKey  string
	Client  *Client

	wake chan struct{}

	mu        sync.Mutex
	state     string
	lastError string
	started   int // starts of the process, for tests and the log
}

// Open makes the keys and the API key on first use and reads the device
// id; nothing runs yet.
func Open(ctx context.Context, cfg Config, m *members.Store) (*Engine, error) {
	home := filepath.Join(cfg.State, "syncthing")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fault.Wrap(fault.Internal, err, "syncthing home")
	}
	key, err := apiKey(filepath.Join(cfg.State, "apikey"))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(home, "cert.pem")); errors.Is(err, fs.ErrNotExist) {
		if _, err := program(ctx, cfg.Program, "generate", "--home="+home, "--no-default-folder", "--skip-port-probing"); err != nil {
			return nil, fault.Wrap(fault.Unavailable, err, "generating this box's keys")
		}
	}
	id, err := deviceID(ctx, cfg.Program, home, filepath.Join(cfg.State, "device-id"))
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, members: m, self: id, apiKey: key, state: syncapi.StateAlone, wake: make(chan struct{}, 1)}
	e.Client = newClient(cfg.GUI, key)
	return e, nil
}

// program runs syncthing for a one-off command and returns its stdout.
// program runs Syncthing for one answer (its keys, its device id) at the
// priority of Syncthing itself (startLow): at a box's start it would
// otherwise take a core from playerd's start and first scan.
func program(ctx context.Context, bin string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	// Never the monitor process, never a browser, never an upgrade.
	cmd.Env = append(os.Environ(), "STNORESTART=1", "STNOUPGRADE=1", "STNODEFAULTFOLDER=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done, err := startLow(cmd)
	if err == nil {
		err = <-done
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", filepath.Base(bin), args[0], err, bytes.TrimSpace(lastLine(stderr.Bytes())))
	}
	return stdout.Bytes(), nil
}

// deviceID is this box's Syncthing device id. Syncthing derives it from
// its certificate, which never changes once made; asking it means starting
// its 30 MB program at every boot of a box that may never have another, so
// the id is kept in cache beside the SHA-256 of the certificate it belongs
// to, and asked again only when the certificate is another.
func deviceID(ctx context.Context, bin, home, cache string) (string, error) {
	cert, err := os.ReadFile(filepath.Join(home, "cert.pem"))
	if err != nil {
		return "", fault.Wrap(fault.Unavailable, err, "this box's certificate")
	}
	sum := sha256.Sum256(cert)
	of := hex.EncodeToString(sum[:])
	if b, err := os.ReadFile(cache); err == nil {
		if got, id, ok := strings.Cut(strings.TrimSpace(string(b)), " "); ok && got == of && stconf.CheckDeviceID(id) == nil {
			return id, nil
		}
	}
	out, err := program(ctx, bin, "--home="+home, "--device-id")
	if err != nil {
		return "", fault.Wrap(fault.Unavailable, err, "this box's device id")
	}
	id := strings.TrimSpace(string(out))
	if err := stconf.CheckDeviceID(id); err != nil {
		return "", fault.Wrap(fault.Internal, err, "syncthing --device-id")
	}
	// A cache that cannot be written costs the next start one more run.
	_ = members.WriteFile(cache, []byte(of+" "+id+"\n"), 0o600)
	return id, nil
}

func lastLine(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}

// apiKey reads the REST API key, making it on first use: 32 random bytes,
// mode 0600 on /perm. It is handed to Syncthing in its configuration and
// never logged or answered.
func apiKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil && len(bytes.TrimSpace(b)) >= 32 {
		return string(bytes.TrimSpace(b)), nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fault.Wrap(fault.Internal, err, "API key")
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fault.Wrap(fault.Internal, err, "API key")
	}
	key := hex.EncodeToString(raw)
	if err := members.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		return "", fault.Wrap(fault.Internal, err, "saving the API key")
	}
	return key, nil
}

// DeviceID is this box's Syncthing identity.
func (e *Engine) DeviceID() string { return e.self }

// Port is where Syncthing listens for the other boxes.
func (e *Engine) Port() int { return e.cfg.Port }

// State is syncapi.StateAlone, StateStarting or StateRunning, and why the
// last run ended when it failed.
func (e *Engine) State() (state, lastError string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state, e.lastError
}

// Starts is how often Syncthing was started.
func (e *Engine) Starts() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.started
}

// Changed tells Run that the household changed: it writes the
// configuration anew and starts Syncthing again (or stops it, or starts
// it for the first time).
func (e *Engine) Changed() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func (e *Engine) set(state, lastError string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.state = state
	if lastError != "" || state == syncapi.StateAlone {
		e.lastError = lastError
	}
}

// Run supervises Syncthing until ctx ends, then stops it.
func (e *Engine) Run(ctx context.Context) error {
	log := e.cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var backoff daemon.Backoff
	backoff.Max = time.Minute
	for {
		if len(e.members.Boxes()) == 0 {
			e.set(syncapi.StateAlone, "")
			select {
			case <-ctx.Done():
				return nil
			case <-e.wake:
				continue
			}
		}
		e.set(syncapi.StateStarting, "")
		done, stop, err := e.start(ctx, log)
		if err != nil {
			log.Warn("syncthing", "err", err)
			e.set(syncapi.StateStarting, err.Error())
			if !backoff.Wait(ctx) {
				return nil
			}
			continue
		}
		up := time.Now()
		select {
		case <-ctx.Done():
			stop()
			return nil
		case <-e.wake:
			stop()
			backoff.Reset()
		case err := <-done:
			msg := "syncthing ended"
			if err != nil {
				msg = fmt.Sprintf("syncthing ended: %v", err)
			}
			log.Warn(msg)
			e.set(syncapi.StateStarting, msg)
			if time.Since(up) > 5*time.Minute {
				backoff.Reset()
			}
			if !backoff.Wait(ctx) {
				return nil
			}
		}
	}
}

// start writes the configuration and starts Syncthing; stop ends it (TERM,
// then KILL after 10 s) and waits.
func (e *Engine) start(ctx context.Context, log *slog.Logger) (done <-chan error, stop func(), err error) {
	home := filepath.Join(e.cfg.State, "syncthing")
	if err := e.writeConfig(home); err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(e.cfg.Program, "serve", "--home="+home, "--no-browser", "--no-restart", "--no-upgrade", "--logflags=0")
	// STMONITORED: Syncthing itself, without its monitor process, which
	// would start it as a child and restart it; syncd is the supervisor,
	// and the priorities, memory limit and kills then reach the process
	// that does the work (v1.30.0's cmd/syncthing runs syncthingMain
	// directly with it).
	cmd.Env = append(os.Environ(), "STNORESTART=1", "STNOUPGRADE=1", "STNODEFAULTFOLDER=1", "STMONITORED=1",
		"GOMEMLIMIT="+strconv.FormatInt(e.cfg.MemoryLimit, 10))
	// Syncthing's log goes to syncd's stderr, which gokrazy keeps.
	out := e.cfg.Output
	if out == nil {
		out = io.Discard
	}
	cmd.Stdout, cmd.Stderr = out, out
	var cg *os.File
	if e.cfg.Cgroup != "" {
		f, err := memoryCgroup(e.cfg.Cgroup, e.cfg.MemoryLimit)
		if err != nil {
			log.Warn("no memory cgroup for syncthing; GOMEMLIMIT alone bounds it", "err", err)
		} else {
			cg = f
			defer cg.Close() // the child holds its own reference once started
		}
	}
	cmd.SysProcAttr = sysProcAttr(cg)
	exited, err := startLow(cmd)
	if err != nil {
		return nil, nil, fmt.Errorf("starting syncthing: %w", err)
	}
	e.mu.Lock()
	e.started++
	e.mu.Unlock()
	result := make(chan error, 1)
	gone := make(chan struct{})
	go func() {
		err := <-exited
		close(gone)
		result <- err
	}()
	go func() {
		// Running once the REST API answers.
		for {
			if e.Client.Ping(ctx) == nil {
				e.set(syncapi.StateRunning, "")
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-gone:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-gone:
			case <-time.After(10 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-gone
			}
		})
	}
	return result, stop, nil
}

// writeConfig writes config.xml, the folders' markers and ignore files.
func (e *Engine) writeConfig(home string) error {
	folders := []stconf.Folder{{ID: syncapi.HouseholdFolder, Label: "Household", Path: e.cfg.Household}}
	media := e.members.Media()
	if media.All || len(media.Folders) > 0 {
		folders = append(folders, stconf.Folder{ID: syncapi.MediaFolder, Label: "Media", Path: e.cfg.Media})
	}
	c := stconf.Config{GUI: e.cfg.GUI, APIKey: e.apiKey, Listen: e.cfg.Port, Self: e.self, Name: e.cfg.Name}
	for _, b := range e.members.Boxes() {
		c.Devices = append(c.Devices, stconf.Device{ID: b.DeviceID, Name: b.Name, Address: b.Address})
	}
	c.Folders = folders
	xml, err := stconf.Render(c)
	if err != nil {
		return err
	}
	for _, f := range folders {
		// Syncthing refuses a folder without its marker: the guard
		// against syncing an unmounted disk's empty mount point.
		if err := os.MkdirAll(filepath.Join(f.Path, ".stfolder"), 0o755); err != nil {
			return fault.Wrap(fault.Internal, err, "folder marker")
		}
	}
	if err := members.WriteFile(filepath.Join(e.cfg.Household, ".stignore"), ignoreFile(householdIgnore), 0o644); err != nil {
		return err
	}
	if err := members.WriteFile(filepath.Join(e.cfg.Media, ".stignore"), ignoreFile(MediaIgnore(media)), 0o644); err != nil {
		return err
	}
	return members.WriteFile(filepath.Join(home, "config.xml"), xml, 0o600)
}

// MediaIgnore are the media folder's ignore lines: with chosen folders,
// those alone are shared and everything else at the top stays here.
func MediaIgnore(m syncapi.Media) []string {
	lines := append([]string{}, householdIgnore...)
	if m.All {
		return lines
	}
	for _, f := range m.Folders {
		lines = append(lines, "!/"+f)
	}
	// Neither deleted nor sent: what is not chosen stays as it is.
	return append(lines, "/*")
}

func ignoreFile(lines []string) []byte {
	return []byte(strings.Join(lines, "\n") + "\n")
}
