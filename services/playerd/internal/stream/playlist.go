package stream

import (
	"bufio"
	"bytes"
	"mime"
	"net/url"
	"path"
	"strings"

	"github.com/storybox/storybox/services/internal/fault"
)

// Stations often give a playlist (.m3u, .pls) rather than the stream
// itself; the box resolves it to the first entry that plays.

const (
	maxPlaylist      = 64 << 10 // bytes read of a playlist
	maxPlaylistItems = 16       // entries tried
	maxPlaylistDepth = 3        // playlists naming playlists
)

// ErrHLS reports an HTTP Live Streaming playlist: segments of AAC in MPEG-TS
// or MP4, which the box does not play.
var ErrHLS = fault.New(fault.Unsupported, "HLS streams (.m3u8 with segments) cannot be played; ask the station for an MP3 or Ogg stream").Coded("hls")

// playlistKind says whether a response is a playlist: "m3u", "pls" or "".
// The content type decides, else the URL's extension, else the first bytes.
func playlistKind(contentType string, u *url.URL, head []byte) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "audio/x-mpegurl", "audio/mpegurl", "application/x-mpegurl", "application/vnd.apple.mpegurl":
		return "m3u"
	case "audio/x-scpls", "application/pls+xml", "application/pls":
		return "pls"
	}
	if strings.HasPrefix(mt, "audio/") || mt == "application/ogg" {
		return ""
	}
	switch strings.ToLower(path.Ext(u.Path)) {
	case ".m3u", ".m3u8":
		return "m3u"
	case ".pls":
		return "pls"
	}
	h := bytes.ToLower(bytes.TrimLeft(head, "\ufeff \t\r\n"))
	switch {
	case bytes.HasPrefix(h, []byte("#extm3u")):
		return "m3u"
	case bytes.HasPrefix(h, []byte("[playlist]")):
		return "pls"
	}
	return ""
}

// parsePlaylist returns the stream URLs a playlist names, in order, resolved
// against base; at most maxPlaylistItems. It does not check them against the
// fetch policy; the caller does.
func parsePlaylist(kind string, data []byte, base *url.URL) ([]*url.URL, error) {
	var out []*url.URL
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxPlaylist)
	for sc.Scan() && len(out) < maxPlaylistItems {
		line := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		var ref string
		switch kind {
		case "m3u":
			if strings.HasPrefix(line, "#EXT-X-") {
				return nil, ErrHLS
			}
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			ref = line
		case "pls":
			k, v, ok := strings.Cut(line, "=")
			if !ok || !strings.HasPrefix(strings.ToLower(strings.TrimSpace(k)), "file") {
				continue
			}
			ref = strings.TrimSpace(v)
		}
		u, err := base.Parse(ref)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			continue
		}
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, fault.New(fault.Unsupported, "the playlist names no http or https stream")
	}
	return out, nil
}
