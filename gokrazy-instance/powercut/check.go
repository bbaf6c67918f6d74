package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// check verifies what the box remembers after a boot.
func check(ctx context.Context, b *box, m *model) error {
	avail, total, err := b.perm(ctx)
	if err != nil {
		return fmt.Errorf("gokrazy's status over TLS: %w", err)
	}
	if avail <= 0 || total < 64<<20 {
		return fmt.Errorf("/perm is not mounted read-write: %d of %d bytes available", avail, total)
	}
	// The library from before the cut is served at once and the scan
	// runs behind it: the uploads are checked against the scan.
	deadline := time.Now().Add(2 * time.Minute)
	var info struct {
		Library struct{ Scanned bool } `json:"library"`
		Storage struct {
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		} `json:"storage"`
	}
	for {
		if err := b.getJSON(ctx, "/api/info", &info); err != nil {
			return fmt.Errorf("GET /api/info: %w", err)
		}
		if info.Library.Scanned {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("the library scan did not finish within 2 minutes")
		}
		if err := sleepCtx(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
	if !info.Storage.OK {
		return fmt.Errorf("the player state cannot be saved: %s", info.Storage.Error)
	}
	errs := m.observe(ctx, b)
	for _, svc := range []string{"/user/playerd", "/user/netd"} {
		lines, err := b.corruptLog(ctx, svc)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s's log: %w", svc, err))
		}
		for _, l := range lines {
			errs = append(errs, fmt.Errorf("%s logs a corrupt file: %s", svc, strings.TrimSpace(l)))
		}
	}
	return errors.Join(errs...)
}

// observe reads what the box remembers and checks it against the model;
// on the first boot it only learns it.
func (m *model) observe(ctx context.Context, b *box) []error {
	var errs []error
	fail := func(err error) { errs = append(errs, err) }

	var st status
	if err := b.getJSON(ctx, "/api/status", &st); err != nil {
		return []error{fmt.Errorf("GET /api/status: %w", err)}
	}
	var set struct {
		Audio struct {
			StartupVolume int `json:"startup_volume"`
		}
		Display struct {
			IdleOffMinutes int `json:"idle_off_minutes"`
		}
	}
	if err := b.getJSON(ctx, "/api/admin/settings", &set); err != nil {
		return []error{fmt.Errorf("GET /api/admin/settings: %w", err)}
	}
	var cs struct {
		Cards map[string]struct {
			Action   string `json:"action"`
			FolderID string `json:"folder_id"`
			Name     string `json:"name"`
		} `json:"cards"`
	}
	if err := b.getJSON(ctx, "/api/admin/cards", &cs); err != nil {
		return []error{fmt.Errorf("GET /api/admin/cards: %w", err)}
	}
	cards := map[string]card{}
	for id, c := range cs.Cards {
		cards[id] = card{Folder: c.FolderID, Name: c.Name}
		if c.Action != "folder" {
			fail(fmt.Errorf("cards: %s has action %q, every card here was mapped to a folder", id, c.Action))
		}
	}
	var lib []struct {
		ID       string `json:"id"`
		Kind     string `json:"kind"`
		Relative string `json:"relative"`
		Tracks   []struct {
			ID       string  `json:"id"`
			Duration float64 `json:"duration"`
		} `json:"tracks"`
	}
	if err := b.getJSON(ctx, "/api/library", &lib); err != nil {
		return []error{fmt.Errorf("GET /api/library: %w", err)}
	}
	byID := map[string]string{}
	for name := range m.uploads.known {
		byID[trackID(name)] = name
	}
	for _, c := range m.uploads.pending {
		byID[trackID(c.key)] = c.key
	}
	uploads := map[string]float64{}
	if !m.firstSeen {
		m.folders = nil
	}
	for _, f := range lib {
		switch {
		case f.Relative == uploadFolder:
			for _, t := range f.Tracks {
				name, ok := byID[t.ID]
				if !ok {
					name = "track " + t.ID
				}
				uploads[name] = t.Duration
			}
		case !m.firstSeen && f.Kind == "local" && len(f.Tracks) > 0:
			m.folders = append(m.folders, folder{ID: f.ID, Duration: f.Tracks[0].Duration})
		}
	}

	if !m.firstSeen {
		id, err := uploadFolderID(ctx, b)
		if err != nil {
			return []error{err}
		}
		m.uploadID = id
		m.firstSeen = true
		m.volume.known, m.queue.known, m.idle.known = st.Volume, st.queue(), set.Display.IdleOffMinutes
		m.cards.known, m.uploads.known = cards, uploads
		m.startup = set.Audio.StartupVolume
		if len(m.folders) == 0 {
			fail(errors.New("the library has no folder with tracks to play"))
		}
		return errs
	}
	if st.queue().Folder != "" && st.State != "paused" {
		fail(fmt.Errorf("after the restart the box is %s, want paused where it was", st.State))
	}
	for _, err := range []error{m.volume.check(st.Volume), m.queue.check(st.queue()), m.idle.check(set.Display.IdleOffMinutes)} {
		if err != nil {
			fail(err)
		}
	}
	errs = append(errs, m.cards.check(cards)...)
	errs = append(errs, m.uploads.check(uploads)...)
	return errs
}

// uploadFolderID finds the uploads' folder, or makes it.
func uploadFolderID(ctx context.Context, b *box) (string, error) {
	var fs struct {
		Folders []struct{ ID, Relative string } `json:"folders"`
	}
	if err := b.getJSON(ctx, "/api/admin/library/folders", &fs); err != nil {
		return "", fmt.Errorf("GET /api/admin/library/folders: %w", err)
	}
	for _, f := range fs.Folders {
		if f.Relative == uploadFolder {
			return f.ID, nil
		}
	}
	var f struct{ ID string }
	body := map[string]any{"name": uploadFolder}
	if err := b.call(ctx, b.http, http.MethodPost, "/api/admin/library/folders", "application/json", jsonBody(body), &f); err != nil {
		return "", fmt.Errorf("making the uploads' folder: %w", err)
	}
	if f.ID == "" {
		return "", errors.New("making the uploads' folder: no id in the answer")
	}
	return f.ID, nil
}

// trackID is the library's id of an upload: SHA-256 of its path below the
// media root, the first 16 bytes in hex.
func trackID(name string) string {
	sum := sha256.Sum256([]byte(uploadFolder + "/" + name))
	return hex.EncodeToString(sum[:16])
}
