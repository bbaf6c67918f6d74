package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/state"
)

// TestDiskFull fills the data partition while playerd runs: the state file
// must stay the last complete one, /api/info must say that and why saving
// fails, and saving must resume by itself once there is room again.
//
// The full disk is real (ENOSPC from the kernel): a small tmpfs mounted in
// a private mount namespace. The test runs itself again under
// `unshare -Urm` (a user namespace maps the caller to root there, so no
// privileges are needed where unprivileged user namespaces are enabled,
// and root needs none either).
func TestDiskFull(t *testing.T) { onSmallDisk(t, "TestDiskFull", diskFull) }

// onSmallDisk runs body with dir on a 256 KiB tmpfs of its own: the test
// named test runs itself again under `unshare -Urm`, which mounts the
// tmpfs in a private mount namespace, and passes only if body ran to its
// end there.
func onSmallDisk(t *testing.T, test string, body func(t *testing.T, dir string)) {
	if dir := os.Getenv("STORYBOX_SMALLDISK_DIR"); dir != "" {
		if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=256k,mode=0755"); err != nil {
			t.Fatalf("mount a small tmpfs: %v", err)
		}
		defer syscall.Unmount(dir, syscall.MNT_DETACH)
		body(t, dir)
		if !t.Failed() {
			if err := os.WriteFile(os.Getenv("STORYBOX_SMALLDISK_MARK"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	if testing.Short() {
		t.Skip("runs itself in a mount namespace")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Fatalf("unshare (util-linux) is needed for a real full disk: %v", err)
	}
	mark := filepath.Join(t.TempDir(), "passed")
	cmd := exec.Command(unshare, "-Urm", os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "STORYBOX_SMALLDISK_DIR="+t.TempDir(), "STORYBOX_SMALLDISK_MARK="+mark)
	out, err := cmd.CombinedOutput()
	t.Logf("in the mount namespace:\n%s", out)
	if err != nil {
		t.Fatalf("%v (unprivileged user namespaces disabled? the test needs `unshare -Urm` to work)", err)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatal("the test did not run to its end in the namespace")
	}
}

func diskFull(t *testing.T, dir string) {
	data := filepath.Join(dir, "playerd")
	base, _ := startBox(t, mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {2, 2}}), data)
	waitScanned(t, base)
	id := getJSON[[]map[string]any](t, base+"/api/library")[0]["id"].(string)
	stateFile := filepath.Join(data, state.FileName)
	saved := func() (state.Saved, error) {
		var s state.Saved
		return s, state.ReadJSON(stateFile, &s)
	}
	storage := func() (map[string]any, string) {
		resp, err := http.Get(base + "/api/info")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var info map[string]any
		if err := json.Unmarshal(body, &info); err != nil {
			t.Fatalf("/api/info: %v %s", err, body)
		}
		s, _ := info["storage"].(map[string]any)
		return s, string(body)
	}

	// Until changes are saved within a second, the player saves every 10 s:
	// the waits allow for three of those.
	const saveWait = 30 * time.Second
	post(t, base, `{"action":"folder","folder_id":"`+id+`"}`)
	post(t, base, `{"action":"volume","value":20}`)
	waitUntil(t, "volume 20 on disk", saveWait, func() bool { s, err := saved(); return err == nil && s.Volume == 20 })
	if s, _ := storage(); s["ok"] != true {
		t.Fatalf("storage before filling: %v", s)
	}

	fill(t, filepath.Join(dir, "filler"))
	post(t, base, `{"action":"volume","value":35}`)
	var st map[string]any
	var body string
	waitUntil(t, "/api/info to report the failed save", saveWait, func() bool { st, body = storage(); return st["ok"] == false })
	if msg, _ := st["error"].(string); !strings.Contains(msg, "storage is full") || st["since"] == nil {
		t.Errorf("storage while full: %v", st)
	}
	if strings.Contains(body, dir) {
		t.Errorf("/api/info shows an internal path: %s", body)
	}
	for _, cmd := range []string{`{"action":"volume","value":36}`, `{"action":"pause"}`, `{"action":"next"}`, `{"action":"volume","value":37}`} {
		post(t, base, cmd)
	}
	if s, err := saved(); err != nil || s.Volume != 20 || s.Queue == nil || s.Queue.FolderID != id {
		t.Errorf("state file while the disk is full: %+v %v, want the last complete save (volume 20)", s, err)
	}
	entries, _ := os.ReadDir(data)
	for _, e := range entries {
		if state.IsTemp(e.Name()) {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}

	if err := os.Remove(filepath.Join(dir, "filler")); err != nil {
		t.Fatal(err)
	}
	post(t, base, `{"action":"volume","value":40}`)
	waitUntil(t, "saving to resume", saveWait, func() bool {
		s, err := saved()
		st, _ := storage()
		return err == nil && s.Volume == 40 && st["ok"] == true && st["error"] == nil
	})
}

// fill writes path until the file system refuses with ENOSPC, down to the
// last byte, so that no new file can get a block.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, size := range []int{64 << 10, 4 << 10, 1} {
		chunk := bytes.Repeat([]byte{0xA5}, size)
		for {
			if _, err = f.Write(chunk); err != nil {
				break
			}
		}
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("filling the disk: %v, want ENOSPC", err)
		}
	}
}
