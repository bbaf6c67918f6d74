package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"maps"
	"math/rand/v2"
	"mime/multipart"
	"slices"
	"strings"

	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// uploadFolders is the parent's upload folders as the model last saw them.
func (p *parent) uploadFolders() map[string]any {
	p.s.model.mu.Lock()
	raw := p.s.model.want["uploads"]
	p.s.model.mu.Unlock()
	var v map[string]any
	_ = json.Unmarshal([]byte(raw), &v)
	return v
}

// folderID is an upload folder's id, looked up (and kept) by name.
func (p *parent) folderID(ctx context.Context, name string) (string, bool) {
	if id, ok := p.uploads[name]; ok {
		return id, true
	}
	a, ok := p.s.parent.do(ctx, jsonReq("GET /api/admin/library/folders", "GET", "/api/admin/library/folders", nil, 200))
	if !ok {
		return "", false
	}
	var doc struct {
		Folders []struct {
			ID       string `json:"id"`
			Relative string `json:"relative"`
		} `json:"folders"`
	}
	if a.json(&doc) != nil {
		return "", false
	}
	clear(p.uploads)
	for _, f := range doc.Folders {
		if strings.HasPrefix(f.Relative, "Soak ") {
			p.uploads[f.Relative] = f.ID
		}
	}
	id, ok := p.uploads[name]
	return id, ok
}

// upload sends one to three tones (WAV, or MP3 frames) into an upload
// folder, made first when there are few; now and then a request with a file
// that is not audio, which must leave nothing behind.
func (p *parent) upload(ctx context.Context, rng *rand.Rand) {
	if len(p.uploadFolders()) < 2 || rng.IntN(6) == 0 {
		p.makeFolder(ctx)
	}
	name, id, _, ok := p.pickUpload(ctx, rng)
	if !ok {
		return
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	files := map[string]any{}
	bad := rng.IntN(8) == 0
	for i := range 1 + rng.IntN(3) {
		p.next++
		var fname string
		var data []byte
		if rng.IntN(3) == 0 {
			fname, data = fmt.Sprintf("Teil %d.mp3", p.next), p.s.station.mp3[:min(len(p.s.station.mp3), 4000*(2+rng.IntN(4)))]
		} else {
			fname, data = fmt.Sprintf("Teil %d.wav", p.next), testmedia.Tone(float64(1+rng.IntN(3)), 8000, float64(200+100*i))
		}
		if bad && i == 0 {
			data = []byte("dies ist kein Ton, sondern ein Einkaufszettel")
		}
		w, _ := mw.CreateFormFile("file", fname)
		_, _ = w.Write(data)
		files[fname] = float64(len(data))
	}
	_ = mw.Close()
	want := asJSON(files)
	c := &change{what: fmt.Sprintf("upload %d files to %s", len(files), name), domains: []string{"uploads"}, applied: func(snap map[string]any) bool {
		got, _ := snap["uploads"].(map[string]any)[name].(map[string]any)
		return contains(got, want)
	}}
	r := req{op: "POST /api/admin/library/folders/{id}/files", method: "POST", path: "/api/admin/library/folders/" + id + "/files",
		body: buf.Bytes(), ctype: mw.FormDataContentType(), ok: []int{201, 404, 415}}
	p.change(ctx, c, r, 201)
	if bad {
		p.s.rec.count("uploads with a file that is not audio", 1)
	}
	_ = p.s.library.refresh(ctx)
}

// pickUpload picks one of the upload folders: its name, its id, and how
// many there are.
func (p *parent) pickUpload(ctx context.Context, rng *rand.Rand) (name, id string, folders int, ok bool) {
	names := sortedNames(p.uploadFolders())
	if len(names) == 0 {
		return "", "", 0, false
	}
	name = names[rng.IntN(len(names))]
	id, ok = p.folderID(ctx, name)
	return name, id, len(names), ok
}

func (p *parent) makeFolder(ctx context.Context) {
	p.next++
	name := fmt.Sprintf("Soak %d", p.next)
	c := &change{what: "make folder " + name, domains: []string{"uploads"}, applied: func(snap map[string]any) bool {
		_, ok := snap["uploads"].(map[string]any)[name]
		return ok
	}}
	a, ok := p.change(ctx, c, jsonReq("POST /api/admin/library/folders", "POST", "/api/admin/library/folders", map[string]any{"name": name}, 201), 201)
	if ok {
		var f struct {
			ID string `json:"id"`
		}
		if a.json(&f) == nil {
			p.uploads[name] = f.ID
		}
	}
}

// changeFolders deletes or renames an upload folder, or gives it a cover.
func (p *parent) changeFolders(ctx context.Context, rng *rand.Rand) {
	name, id, folders, ok := p.pickUpload(ctx, rng)
	if !ok {
		return
	}
	switch n := rng.IntN(5); {
	case n < 2 && folders > 2:
		c := &change{what: "delete folder " + name, domains: []string{"uploads"}, applied: func(snap map[string]any) bool {
			_, ok := snap["uploads"].(map[string]any)[name]
			return !ok
		}}
		p.s.views.setPending("parent", &pendingChange{action: "unload"})
		if _, ok := p.change(ctx, c, jsonReq("DELETE /api/admin/library/folders/{id}", "DELETE", "/api/admin/library/folders/"+id, nil, 200, 404), 200); ok {
			delete(p.uploads, name)
		}
		p.s.views.setPending("parent", nil)
	case n < 4:
		p.next++
		to := fmt.Sprintf("Soak %d", p.next)
		files := asJSON(p.uploadFolders()[name])
		c := &change{what: "rename folder " + name + " to " + to, domains: []string{"uploads"}, applied: func(snap map[string]any) bool {
			u := snap["uploads"].(map[string]any)
			_, old := u[name]
			return !old && contains(u[to], files)
		}}
		p.s.views.setPending("parent", &pendingChange{action: "unload"})
		a, ok := p.change(ctx, c, jsonReq("PATCH /api/admin/library/folders/{id}", "PATCH", "/api/admin/library/folders/"+id, map[string]any{"name": to}, 200, 404), 200)
		p.s.views.setPending("parent", nil)
		if ok {
			delete(p.uploads, name)
			var f struct {
				ID string `json:"id"`
			}
			if a.json(&f) == nil {
				p.uploads[to] = f.ID
			}
		}
	default:
		img := coverPNG(color.RGBA{uint8(rng.IntN(256)), uint8(rng.IntN(256)), 0x80, 0xff})
		c := &change{what: "cover for " + name, domains: []string{"uploads"}, applied: func(snap map[string]any) bool {
			got, _ := snap["uploads"].(map[string]any)[name].(map[string]any)
			return got["cover.png"] == float64(len(img))
		}}
		r := req{op: "PUT /api/admin/library/folders/{id}/cover", method: "PUT", path: "/api/admin/library/folders/" + id + "/cover",
			body: img, ctype: "image/png", ok: []int{200, 404}}
		p.change(ctx, c, r, 200)
	}
	_ = p.s.library.refresh(ctx)
}

func (p *parent) rescan(ctx context.Context, _ *rand.Rand) {
	p.s.parent.do(ctx, jsonReq("POST /api/admin/library/rescan", "POST", "/api/admin/library/rescan", map[string]any{}, 200))
}

// backup downloads a backup, sometimes with the media, and checks it is a
// whole archive with its manifest.
func (p *parent) backup(ctx context.Context, rng *rand.Rand) {
	path := "/api/admin/backup"
	if rng.IntN(4) == 0 {
		path += "?include_media=true"
	}
	a, ok := p.s.parent.do(ctx, jsonReq("GET "+path, "GET", path, nil, 200))
	if !ok {
		return
	}
	if why := checkBackup(a.body, strings.Contains(path, "media")); why != "" {
		p.s.rec.violate(a.life, "backup", "%s: %s", path, why)
	}
	p.s.rec.count("backup bytes", len(a.body))
}

func checkBackup(data []byte, media bool) string {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "not a ZIP archive: " + err.Error()
	}
	have := map[string]bool{}
	mediaFiles := 0
	for _, f := range zr.File {
		have[f.Name] = true
		if strings.HasPrefix(f.Name, "media/") {
			mediaFiles++
		}
		rc, err := f.Open()
		if err != nil {
			return f.Name + ": " + err.Error()
		}
		var buf bytes.Buffer
		_, err = buf.ReadFrom(rc)
		rc.Close()
		if err != nil {
			return f.Name + ": " + err.Error()
		}
	}
	for _, want := range []string{"manifest.json", "settings.json", "state.json"} {
		if !have[want] {
			return "no " + want
		}
	}
	if media && mediaFiles == 0 {
		return "include_media=true, but no media in it"
	}
	return ""
}

// restore puts back the backup taken a moment ago: nothing the parent saved
// may change by it.
func (p *parent) restore(ctx context.Context, _ *rand.Rand) {
	a, ok := p.s.parent.do(ctx, jsonReq("GET /api/admin/backup", "GET", "/api/admin/backup", nil, 200))
	if !ok {
		return
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	w, _ := mw.CreateFormFile("backup", "storybox-backup.zip")
	_, _ = w.Write(a.body)
	_ = mw.Close()
	api := []string{"settings", "parental", "cards", "stations", "podcasts", "navigation", "input"}
	p.s.model.mu.Lock()
	before := map[string]string{}
	for _, d := range api {
		before[d] = p.s.model.want[d]
	}
	p.s.model.mu.Unlock()
	c := &change{what: "restore the backup just taken", domains: api, applied: func(snap map[string]any) bool {
		for _, d := range api {
			if canonical(snap[d]) != before[d] {
				return false
			}
		}
		return true
	}}
	r := req{op: "POST /api/admin/restore", method: "POST", path: "/api/admin/restore", body: buf.Bytes(), ctype: mw.FormDataContentType(), ok: []int{200}}
	p.change(ctx, c, r, 200)
}

func sortedNames(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
