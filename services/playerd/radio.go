package main

import (
	"errors"
	"slices"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/fetch"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/radio"
	"github.com/storybox/storybox/services/playerd/internal/stream"
)

// newRadio loads the parent's stations and podcasts and prepares streaming.
// A radio.json that cannot be read is logged; the box plays its library.
func (a *app) newRadio() {
	policy := fetch.Policy{AllowLoopback: a.cfg.StreamAllowLoopback}
	var err error
	if a.radio, err = radio.New(a.cfg.Data, radio.Options{Policy: policy, OnChange: a.radioChanged}); err != nil {
		a.log.Error("radio", "error", err)
	}
	a.streams = stream.Config{Policy: policy, ReadTimeout: a.cfg.StreamReadTimeout, OnRetry: func(url string, err error, wait time.Duration) {
		a.log.Warn("stream dropped, reconnecting", "url", url, "error", err, "wait", wait)
	}}.Defaults()
	a.catalog = catalog{lib: a.lib, radio: a.radio}
}

// openRemote is the player's way to stations and episodes.
func (a *app) openRemote(t library.Track, rate int) (player.Remote, error) {
	return stream.Open(a.streams, stream.Options{URL: t.URL, Live: t.Live(), Duration: t.Duration, Rate: rate}), nil
}

// nowPlaying hears each new station title; it must not block.
func (a *app) nowPlaying(title *string) {
	if title != nil {
		a.log.Debug("now playing", "title", *title)
	}
}

// catalog is the media library and the parent's stations and podcasts as
// one set of folders: the player, the API and the screen see both.
type catalog struct {
	lib   *library.Library
	radio *radio.Service
}

func (c catalog) Folders() []library.Folder {
	return append(slices.Clip(c.lib.Folders()), c.radio.Folders()...)
}

func (c catalog) Folder(id string) (library.Folder, bool) {
	if f, ok := c.lib.Folder(id); ok {
		return f, true
	}
	return c.radio.Folder(id)
}

func (c catalog) Cover(id string) ([]byte, string, error) {
	data, typ, err := c.lib.Cover(id)
	if errors.Is(err, library.ErrNotFound) {
		return c.radio.Cover(id)
	}
	return data, typ, err
}

func (c catalog) Scan() (library.Stats, error) { return c.lib.Scan() }

// radioChanged tells the screen that stations or episodes changed; the
// display is made after the radio, so it may not be there yet.
func (a *app) radioChanged() {
	if a.display != nil {
		a.display.ContentChanged()
	}
}
