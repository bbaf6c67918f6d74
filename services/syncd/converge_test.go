package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/syncapi"
)

// conflictName matches Syncthing's conflict copies (playerd's
// household.ConflictOf, which syncd's tests cannot import).
var conflictName = regexp.MustCompile(`\.sync-conflict-[0-9]{8}-[0-9]{6}-[0-9A-Z]{7}`)

// reconciler stands in for playerd's household.Store.Reconcile on one box:
// it resolves every conflict copy in dir by a rule every box applies
// alike (here: the greater content wins), writes the winner under the
// entry's name byte for byte with an atomic replace (a temporary file that
// the folder's ignore patterns keep local, then a rename), and removes the
// copy. It runs as playerd does, while Syncthing works on the same files.
func reconciler(t *testing.T, dir string, stop <-chan struct{}, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			des, err := os.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, de := range des {
				orig := conflictName.ReplaceAllString(de.Name(), "")
				if orig == de.Name() || !de.Type().IsRegular() {
					continue
				}
				c, err1 := os.ReadFile(filepath.Join(dir, de.Name()))
				m, err2 := os.ReadFile(filepath.Join(dir, orig))
				if err1 != nil {
					continue
				}
				if err2 != nil || bytes.Compare(c, m) > 0 {
					tmp := filepath.Join(dir, "."+orig+".tmp-"+fmt.Sprint(time.Now().UnixNano()))
					if os.WriteFile(tmp, c, 0o644) != nil || os.Rename(tmp, filepath.Join(dir, orig)) != nil {
						t.Errorf("reconciler: rewriting %s failed", orig)
						continue
					}
				}
				_ = os.Remove(filepath.Join(dir, de.Name()))
			}
		}
	}()
}

// localSize is the size Syncthing on box b has indexed for its own copy
// of name in the household folder: -1 until it has scanned one.
func localSize(t *testing.T, b *box, key, name string) int64 {
	t.Helper()
	q := url.Values{"folder": {syncapi.HouseholdFolder}, "file": {name}}
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:8384/rest/db/file?"+q.Encode(), nil)
	req.Header.Set("X-API-Key", key)
	resp, err := restClient(b).Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var v struct {
		Local struct {
			Size int64 `json:"size"`
		} `json:"local"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&v) != nil {
		return -1
	}
	return v.Local.Size
}

// conflictCopies lists the conflict copies in dir.
func conflictCopies(dir string) []string {
	des, _ := os.ReadDir(dir)
	var out []string
	for _, de := range des {
		if conflictName.MatchString(de.Name()) {
			out = append(out, de.Name())
		}
	}
	return out
}

// TestConcurrentEditsConverge: the same card changed on A and on B while
// B is cut off, C following A; B's edit is the later one, so Syncthing
// keeps it under the card's name and A and C both make a conflict copy of
// the same name in the same second, which each box's reconciler (playerd
// on a box) resolves and removes while Syncthing works. Every round
// converges to the rule's value on all three boxes with no conflict copy,
// well within Syncthing's one-minute retry of a pull that failed. The rule
// picks A's value in some rounds (rewritten by A and C) and B's in others
// (Syncthing's own choice).
func TestConcurrentEditsConverge(t *testing.T) {
	net, boxes := household(t, 3)
	a, b, c := boxes[0], boxes[1], boxes[2]
	for _, x := range boxes {
		for _, o := range boxes {
			if o != x {
				x.add(t, o)
			}
		}
	}
	for _, x := range boxes {
		waitFor(t, 90*time.Second, fmt.Sprintf("box %d connected to both", x.i), func() bool {
			st := x.status(t)
			return st.State == syncapi.StateRunning && len(st.Boxes) == 2 && st.Boxes[0].Connected && st.Boxes[1].Connected
		})
	}
	keyB := apiKeyOf(t, b)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, x := range boxes {
		reconciler(t, filepath.Join(x.household, "cards"), stop, &wg)
	}
	defer func() { close(stop); wg.Wait() }()

	const rounds = 12
	// Syncthing retries a failed pull after a minute: a round that needs
	// the retry has failed.
	const limit = 40 * time.Second
	for r := range rounds {
		name := "cards/" + fmt.Sprintf("%010d", 4921380+r) + ".json"
		base := []byte(fmt.Sprintf(`{"round":%d,"base":true}`, r))
		write(t, filepath.Join(a.household, name), base)
		waitFor(t, limit, fmt.Sprintf("round %d: the card on every box", r), func() bool {
			return hasContent(filepath.Join(b.household, name), base) && hasContent(filepath.Join(c.household, name), base)
		})
		if err := net.Link(b.i, false); err != nil {
			t.Fatal(err)
		}
		// The rule (greater content) picks A's value in even rounds and
		// B's in odd ones; the lengths differ, so that B's scan of its
		// own edit can be told.
		va := []byte(fmt.Sprintf(`{"round":%d,"box":"A","w":%d}`, r, 1-r%2))
		vb := []byte(fmt.Sprintf(`{"round":%d,"box":"A","w":%d,"by":"B"}`, r, r%2))
		write(t, filepath.Join(a.household, name), va)
		waitFor(t, limit, fmt.Sprintf("round %d: A's edit on C", r), func() bool { return hasContent(filepath.Join(c.household, name), va) })
		write(t, filepath.Join(b.household, name), vb)
		// B's edit the later by its modification time, which decides
		// Syncthing's choice between concurrent versions.
		later := time.Now().Add(2 * time.Second)
		if err := os.Chtimes(filepath.Join(b.household, name), later, later); err != nil {
			t.Fatal(err)
		}
		waitFor(t, limit, fmt.Sprintf("round %d: B's edit indexed on B", r), func() bool { return localSize(t, b, keyB, name) == int64(len(vb)) })
		if err := net.Link(b.i, true); err != nil {
			t.Fatal(err)
		}
		want := va
		if bytes.Compare(vb, va) > 0 {
			want = vb
		}
		start := time.Now()
		waitFor(t, limit, fmt.Sprintf("round %d: one value, no conflict copy and nothing to pull on every box", r), func() bool {
			for _, x := range boxes {
				dir := filepath.Join(x.household, "cards")
				if !hasContent(filepath.Join(x.household, name), want) || len(conflictCopies(dir)) > 0 {
					return false
				}
				// And Syncthing agrees: nothing left to pull, no file
				// it failed on.
				for _, f := range x.status(t).Folders {
					if f.ID == syncapi.HouseholdFolder && (f.State != "idle" || f.NeedFiles != 0 || f.Error != "") {
						return false
					}
				}
			}
			return true
		})
		t.Logf("round %d (%s wins): converged %.1fs after B's link came back", r, map[bool]string{true: "A", false: "B"}[bytes.Equal(want, va)], time.Since(start).Seconds())
	}
	// What made convergence slow: Syncthing failing on a conflict copy
	// (pulling one another box had removed, deleting one removed here),
	// a failure that changes nothing on the box and so waits a minute for
	// Syncthing's retry. A failure on an entry's own file is recovered at
	// once (the change behind it is scanned, and the scan schedules the
	// next pull), as the rounds' times show.
	for _, x := range boxes {
		for _, l := range strings.Split(x.log.String(), "\n") {
			if strings.Contains(l, "Puller (folder") && strings.Contains(l, ".sync-conflict-") {
				t.Errorf("box %d: Syncthing failed on a conflict copy: %s", x.i, l)
			}
		}
	}
}
