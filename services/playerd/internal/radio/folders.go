package radio

import (
	"context"
	"net/http"
	"os"
	"path/filepath"

	"github.com/storybox/storybox/services/playerd/internal/fetch"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// rebuild derives the folders from the configuration and the feeds; the
// caller holds s.mu for writing.
func (s *Service) rebuild() {
	var out []library.Folder
	for _, st := range s.cfg.Stations {
		out = append(out, library.Folder{
			ID: st.ID, Kind: library.KindRadio, Name: st.Name, Cover: s.coverRef(st.ID),
			Tracks: []library.Track{{
				ID: st.ID, Title: st.Name, Provider: library.ProviderRadio, ResumePolicy: library.ResumeNone, URL: st.URL,
			}},
		})
	}
	for _, p := range s.cfg.Podcasts {
		f := s.feeds[p.ID]
		if f == nil || f.URL != p.URL || len(f.Feed.Episodes) == 0 {
			continue // nothing to play yet
		}
		name := p.Name
		if name == "" {
			name = f.Feed.Title
		}
		if name == "" {
			name = "Podcast"
		}
		folder := library.Folder{ID: p.ID, Kind: library.KindPodcast, Name: name, Cover: s.coverRef(p.ID)}
		for _, e := range f.Feed.Episodes {
			t := library.Track{
				// The episode's id follows its guid, so resume points stay
				// with it while new episodes arrive.
				ID: library.ID(p.ID + "\x00" + e.GUID), Title: e.Title, Album: name, Duration: e.Duration,
				Provider: library.ProviderPodcast, ResumePolicy: library.ResumePosition, URL: e.URL,
			}
			if !e.Published.IsZero() {
				pub := e.Published
				t.Published = &pub
			}
			folder.Tracks = append(folder.Tracks, t)
		}
		out = append(out, folder)
	}
	s.folders = out
	s.byID = make(map[string]int, len(out))
	for i, f := range out {
		s.byID[f.ID] = i
	}
}

// Folders lists the stations, then the podcasts with episodes. The slice is
// shared: treat it as read-only.
func (s *Service) Folders() []library.Folder {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.folders
}

// Folder looks a station or podcast up by id.
func (s *Service) Folder(id string) (library.Folder, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	i, ok := s.byID[id]
	if !ok {
		return library.Folder{}, false
	}
	return s.folders[i], true
}

// Covers are fetched once and kept as data/radio-covers/<id>: the name is
// the folder's id, never anything a server sent.
const maxCover = 2 << 20

func (s *Service) coverPath(id string) string { return filepath.Join(s.dir, coverDir, id) }

func (s *Service) coverRef(id string) *string {
	if _, err := os.Stat(s.coverPath(id)); err != nil {
		return nil
	}
	ref := "/api/cover/" + id
	return &ref
}

// Cover returns the cover of a station or podcast.
func (s *Service) Cover(id string) ([]byte, string, error) {
	if !validID(id) {
		return nil, "", library.ErrNotFound
	}
	data, err := os.ReadFile(s.coverPath(id))
	if err != nil {
		return nil, "", library.ErrNotFound
	}
	return data, http.DetectContentType(data), nil
}

// fetchCovers gets the covers not fetched yet: a station's cover_url, a
// podcast's feed image.
func (s *Service) fetchCovers(ctx context.Context) {
	s.mu.RLock()
	want := map[string]string{}
	for _, st := range s.cfg.Stations {
		if st.Cover != "" {
			want[st.ID] = st.Cover
		}
	}
	for _, p := range s.cfg.Podcasts {
		if f := s.feeds[p.ID]; f != nil && f.Feed.Image != "" {
			want[p.ID] = f.Feed.Image
		}
	}
	s.mu.RUnlock()
	got := false
	for id, u := range want {
		if _, err := os.Stat(s.coverPath(id)); err == nil || ctx.Err() != nil {
			continue
		}
		if s.fetchCover(ctx, id, u) == nil {
			got = true
		}
	}
	if got {
		s.mu.Lock()
		s.rebuild()
		s.mu.Unlock()
		s.opts.OnChange()
	}
}

func (s *Service) fetchCover(ctx context.Context, id, raw string) error {
	u, err := s.opts.Policy.CheckURL(raw)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.FeedTimeout)
	defer cancel()
	resp, err := fetch.Get(ctx, s.client, u.String(), http.Header{"Accept": {"image/*"}})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errStatus
	}
	data, err := fetch.ReadAll(resp.Body, maxCover)
	if err != nil {
		return err
	}
	switch http.DetectContentType(data) {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
	default:
		return errNotImage
	}
	return state.WriteFile(s.coverPath(id), data)
}

type coverError string

func (e coverError) Error() string { return string(e) }

const (
	errStatus   coverError = "the cover's server did not send it"
	errNotImage coverError = "the cover is not a JPEG, PNG, GIF or WebP image"
)
