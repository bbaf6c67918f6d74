package api

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/backup"
	"github.com/storybox/storybox/services/playerd/internal/library"
)

// heldCovers is a library whose covers take until release closes.
type heldCovers struct {
	Library
	in      atomic.Int32
	entered chan struct{}
	release chan struct{}
}

func (h *heldCovers) Cover(id string) ([]byte, string, error) {
	h.in.Add(1)
	h.entered <- struct{}{}
	<-h.release
	return []byte("\x89PNG"), "image/png", nil
}

// heldAdmin holds uploads until release closes; heldBackup backups.
type heldAdmin struct {
	LibraryAdmin
	entered, release chan struct{}
}

func (h *heldAdmin) hold()                  { h.entered <- struct{}{}; <-h.release }
func (h *heldAdmin) Limits() library.Limits { return library.DefaultLimits() }
func (h *heldAdmin) BeginUpload(string, int64) (Upload, error) {
	h.hold()
	return &slowUpload{&slowAdmin{}}, nil
}

type heldBackup struct{ *heldAdmin }

func (h heldBackup) Limits() backup.Limits                    { return backup.DefaultLimits() }
func (h heldBackup) Backup(w io.Writer, media bool) error     { h.hold(); return nil }
func (h heldBackup) Restore(io.Reader) (backup.Result, error) { return backup.Result{}, nil }

func busy(t *testing.T, what string, code int, body map[string]any, hdr http.Header, retry, msg string) {
	t.Helper()
	if code != http.StatusTooManyRequests || hdr.Get("Retry-After") != retry || body["error"] != msg {
		t.Errorf("%s: %d %v Retry-After %q; want 429 %q with Retry-After %s", what, code, body, hdr.Get("Retry-After"), msg, retry)
	}
}

// One backup at once, two uploads at once (files, a cover, a restore):
// beyond, 429 with Retry-After at once, before the body is read.
func TestBackupsAndUploadsBounded(t *testing.T) {
	admin := &heldAdmin{entered: make(chan struct{}, 8), release: make(chan struct{})}
	b := newBox(t, func(d *Deps) { d.LibraryAdmin, d.Backup = admin, heldBackup{admin} })
	var wg sync.WaitGroup
	results := make(chan int, 3)
	run := func(method, path, ctype, body string) {
		wg.Go(func() {
			req := httptest.NewRequest(method, path, strings.NewReader(body))
			req.Host = "box:8090"
			req.Header.Set("Content-Type", ctype)
			rec := httptest.NewRecorder()
			b.srv.ServeHTTP(rec, req)
			results <- rec.Code
		})
	}
	run("GET", "/api/admin/backup", "", "")
	<-admin.entered
	code, body, hdr := b.call("GET", "/api/admin/backup", "")
	busy(t, "a second backup", code, body, hdr, "5", "too many backups at once; try again later")

	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	part, _ := mw.CreateFormFile("file", "a.mp3")
	part.Write([]byte("ID3"))
	mw.Close()
	folder := "/api/admin/library/folders/" + library.ID("Musik")
	for range 2 {
		run("POST", folder+"/files", mw.FormDataContentType(), form.String())
		<-admin.entered
	}
	for _, tc := range []struct{ method, path, ctype string }{
		{"POST", folder + "/files", mw.FormDataContentType()},
		{"PUT", folder + "/cover", "image/png"},
		{"POST", "/api/admin/restore", mw.FormDataContentType()},
	} {
		code, body, hdr := b.call(tc.method, tc.path, "", "Content-Type", tc.ctype)
		busy(t, tc.method+" "+tc.path+" beside two uploads", code, body, hdr, "5", "too many uploads at once; try again later")
	}
	close(admin.release)
	wg.Wait()
	close(results)
	for code := range results {
		if code != http.StatusOK && code != http.StatusCreated {
			t.Errorf("a held request ended %d", code)
		}
	}
}

// Four covers are read at once and sixteen more wait their turn; the next
// is answered 429 with Retry-After at once. Those waiting get their
// turns as the four finish.
func TestCoversBounded(t *testing.T) {
	held := &heldCovers{entered: make(chan struct{}, 64), release: make(chan struct{})}
	b := newBox(t, func(d *Deps) { held.Library, d.Library = d.Library, held })
	id := b.folderID("Folge A")
	codes := make(chan int, 21)
	var wg sync.WaitGroup
	get := func() {
		wg.Go(func() {
			code, _, hdr := b.call("GET", "/api/cover/"+id, "")
			if code == http.StatusTooManyRequests && hdr.Get("Retry-After") != "1" {
				t.Errorf("429 with Retry-After %q", hdr.Get("Retry-After"))
			}
			codes <- code
		})
	}
	for range 4 {
		get()
		<-held.entered
	}
	for range 17 {
		get()
	}
	// Seventeen for sixteen places: one at least is refused before any
	// cover is done. More than four inside means no bound at all.
	select {
	case code := <-codes:
		if code != http.StatusTooManyRequests {
			t.Errorf("a cover beyond the bound: %d, want 429", code)
		}
	case <-held.entered:
		t.Errorf("a fifth cover read at once")
	}
	close(held.release)
	wg.Wait()
	close(codes)
	for code := range codes {
		if code != http.StatusOK && code != http.StatusTooManyRequests {
			t.Errorf("a cover request ended %d", code)
		}
	}
	if n := held.in.Load(); n > 20 {
		t.Errorf("%d covers read, at most 20 (4 + 16 waiting) may", n)
	}
}
