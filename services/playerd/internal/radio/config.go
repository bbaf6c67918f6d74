// Package radio is the parent's list of radio stations and podcasts: kept in
// radio.json in the data directory, changed through the admin API, and shown
// to the rest of the box as folders beside the media library's (kind radio,
// one track that is the live stream; kind podcast, the episodes, newest
// first), so that {"action":"folder"} plays them like any folder. Feeds are
// refreshed on a schedule; covers are fetched once into the data directory.
package radio

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/fetch"
)

// FileName is the parent's configuration in the data directory: part of
// backups.
const FileName = "radio.json"

// Version of the file format.
const Version = 1

// Limits of the configuration.
const (
	MaxStations = 100
	MaxPodcasts = 50
	maxName     = 100
)

// Config is radio.json.
type Config struct {
	Version  int       `json:"version"`
	Stations []Station `json:"stations"`
	Podcasts []Podcast `json:"podcasts"`
}

// Station is a radio station: a stream, or a playlist naming one.
type Station struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	URL   string `json:"url"`
	Cover string `json:"cover_url,omitempty"` // an image, fetched once
}

// Podcast is a feed the parent subscribed to.
type Podcast struct {
	ID   string `json:"id"`
	URL  string `json:"url"`
	Name string `json:"name,omitempty"` // shown instead of the feed's title when set
}

// Validate checks every entry against the fetch policy for saved URLs
// (fetch.Policy.Saved) and the limits. A new or changed entry is checked
// against the whole policy besides (Station.check, Podcast.check).
func (c *Config) Validate(p fetch.Policy) error {
	p = p.Saved()
	if c.Version != Version {
		return fault.New(fault.Invalid, "radio: version %d is not %d", c.Version, Version)
	}
	if len(c.Stations) > MaxStations {
		return fault.New(fault.Invalid, "at most %d stations", MaxStations)
	}
	if len(c.Podcasts) > MaxPodcasts {
		return fault.New(fault.Invalid, "at most %d podcasts", MaxPodcasts)
	}
	ids := map[string]bool{}
	for _, s := range c.Stations {
		if err := s.check(p); err != nil {
			return err
		}
		if ids[s.ID] {
			return fault.New(fault.Invalid, "id %s is used twice", s.ID)
		}
		ids[s.ID] = true
	}
	for _, pc := range c.Podcasts {
		if err := pc.check(p); err != nil {
			return err
		}
		if ids[pc.ID] {
			return fault.New(fault.Invalid, "id %s is used twice", pc.ID)
		}
		ids[pc.ID] = true
	}
	return nil
}

func (s Station) check(p fetch.Policy) error {
	if !validID(s.ID) {
		return fault.New(fault.Invalid, "station id must be 32 hex digits")
	}
	if err := checkName(s.Name, true); err != nil {
		return err
	}
	if _, err := p.CheckURL(s.URL); err != nil {
		return fault.Wrap(fault.Invalid, err, "url")
	}
	if s.Cover != "" {
		if _, err := p.CheckURL(s.Cover); err != nil {
			return fault.Wrap(fault.Invalid, err, "cover_url")
		}
	}
	return nil
}

func (pc Podcast) check(p fetch.Policy) error {
	if !validID(pc.ID) {
		return fault.New(fault.Invalid, "podcast id must be 32 hex digits")
	}
	if err := checkName(pc.Name, false); err != nil {
		return err
	}
	if _, err := p.CheckURL(pc.URL); err != nil {
		return fault.Wrap(fault.Invalid, err, "url")
	}
	return nil
}

func checkName(n string, required bool) error {
	switch {
	case required && strings.TrimSpace(n) == "":
		return fault.New(fault.Invalid, "name is required")
	case !utf8.ValidString(n) || utf8.RuneCountInString(n) > maxName:
		return fault.New(fault.Invalid, "name must be at most %d characters", maxName)
	case strings.IndexFunc(n, unicode.IsControl) >= 0:
		return fault.New(fault.Invalid, "name must not contain control characters")
	case n != strings.TrimSpace(n):
		return fault.New(fault.Invalid, "name must not begin or end with spaces")
	}
	return nil
}

func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// Parse decodes radio.json strictly and validates it.
func Parse(data []byte, p fetch.Policy) (Config, error) {
	var c Config
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&c); err != nil {
		return Config{}, fault.New(fault.Invalid, "radio: not a radio configuration: %v", err)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return Config{}, fault.New(fault.Invalid, "radio: data after the object")
	}
	if c.Stations == nil {
		c.Stations = []Station{}
	}
	if c.Podcasts == nil {
		c.Podcasts = []Podcast{}
	}
	if err := c.Validate(p); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Check is the check of radio.json for a restored backup: the box's own
// policy, which never allows loopback targets.
func Check(data []byte) error {
	_, err := Parse(data, fetch.Policy{})
	return err
}
