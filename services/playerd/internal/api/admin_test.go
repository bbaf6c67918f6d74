package api

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/backup"
	"github.com/storybox/storybox/services/playerd/internal/library"
)

// slowAdmin takes uploads and writes backups as slowly as a Pi's SD card
// and a phone on Wi-Fi may: longer than the server's whole-request
// timeouts.
type slowAdmin struct {
	LibraryAdmin
	got int64
}

func (s *slowAdmin) Limits() library.Limits { return library.DefaultLimits() }

func (s *slowAdmin) BeginUpload(string, int64) (Upload, error) { return &slowUpload{s}, nil }

type slowUpload struct{ s *slowAdmin }

func (u *slowUpload) Add(name string, r io.Reader) (library.File, error) {
	n, err := io.Copy(io.Discard, r)
	u.s.got += n
	return library.File{Name: name, Size: n}, err
}
func (u *slowUpload) Commit() ([]library.File, error) { return []library.File{}, nil }
func (u *slowUpload) Close()                          {}

type slowBackup struct{}

func (slowBackup) Limits() backup.Limits                    { return backup.DefaultLimits() }
func (slowBackup) Restore(io.Reader) (backup.Result, error) { return backup.Result{}, nil }
func (slowBackup) Backup(w io.Writer, media bool) error {
	zw := zip.NewWriter(w)
	for i := range 8 {
		f, err := zw.Create(fmt.Sprintf("media/%d", i))
		if err != nil {
			return err
		}
		if _, err := f.Write(bytes.Repeat([]byte{'x'}, 64<<10)); err != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond) // a slow disk, as the transfer under test
	}
	return zw.Close()
}

// An upload or a backup may take longer than the server's timeouts for a
// whole request, as long as data keeps moving.
func TestLongTransfersOutlastTheServerTimeouts(t *testing.T) {
	admin := &slowAdmin{}
	b := newBox(t, func(d *Deps) { d.LibraryAdmin, d.Backup = admin, slowBackup{} })
	srv := httptest.NewUnstartedServer(b.srv)
	srv.Config.ReadTimeout, srv.Config.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
	srv.Start()
	defer srv.Close()

	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		part, _ := mw.CreateFormFile("file", "long.mp3")
		for range 10 {
			part.Write(bytes.Repeat([]byte{'a'}, 32<<10))
			time.Sleep(100 * time.Millisecond) // a slow network, as the transfer under test
		}
		mw.Close()
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", srv.URL+"/api/admin/library/folders/"+library.ID("x")+"/files", pr)
	req.Host = "box"
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 || admin.got != 10*32<<10 {
		t.Errorf("slow upload: %d, %d bytes arrived", resp.StatusCode, admin.got)
	}

	req, _ = http.NewRequest("GET", srv.URL+"/api/admin/backup", nil)
	req.Host = "box"
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("slow backup: %d %v", resp.StatusCode, err)
	}
	if zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data))); err != nil || len(zr.File) != 8 {
		t.Errorf("slow backup arrived incomplete: %v", err)
	}
}
