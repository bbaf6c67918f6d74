package mpris

import (
	"math"
	"strings"

	"github.com/godbus/dbus/v5"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// noTrack is MPRIS's track id for "no track".
const noTrack = dbus.ObjectPath("/org/mpris/MediaPlayer2/TrackList/NoTrack")

// rootProps are the org.mpris.MediaPlayer2 properties: the box cannot be
// raised or quit from a desktop, and it has no editable track list.
func rootProps(identity string) map[string]dbus.Variant {
	return map[string]dbus.Variant{
		"CanQuit":             dbus.MakeVariant(false),
		"CanRaise":            dbus.MakeVariant(false),
		"HasTrackList":        dbus.MakeVariant(false),
		"Identity":            dbus.MakeVariant(identity),
		"SupportedUriSchemes": dbus.MakeVariant([]string{}),
		"SupportedMimeTypes":  dbus.MakeVariant([]string{}),
	}
}

// playerProps are the org.mpris.MediaPlayer2.Player properties of a status.
// coverBase is the URL in front of the status's /api/cover/<id> path.
func playerProps(st player.Status, coverBase string) map[string]dbus.Variant {
	loaded := len(st.Queue) > 0
	return map[string]dbus.Variant{
		"PlaybackStatus": dbus.MakeVariant(playbackStatus(st.State)),
		"Rate":           dbus.MakeVariant(1.0),
		"MinimumRate":    dbus.MakeVariant(1.0),
		"MaximumRate":    dbus.MakeVariant(1.0),
		"Metadata":       dbus.MakeVariant(metadata(st, coverBase)),
		"Volume":         dbus.MakeVariant(float64(st.Volume) / 100),
		"Position":       dbus.MakeVariant(micros(st.Position)),
		"CanGoNext":      dbus.MakeVariant(st.CanNext),
		"CanGoPrevious":  dbus.MakeVariant(loaded),
		"CanPlay":        dbus.MakeVariant(loaded),
		"CanPause":       dbus.MakeVariant(loaded),
		"CanSeek":        dbus.MakeVariant(loaded && st.Duration > 0 && st.State != player.Stopped),
		"CanControl":     dbus.MakeVariant(true),
		"Shuffle":        dbus.MakeVariant(st.Shuffle),
		"LoopStatus":     dbus.MakeVariant(loopStatus(st.Repeat)),
	}
}

// MPRIS's LoopStatus for each repeat of the player: the queue is MPRIS's
// playlist.
var loops = map[string]string{
	player.RepeatOff:    "None",
	player.RepeatTrack:  "Track",
	player.RepeatFolder: "Playlist",
}

func loopStatus(repeat string) string {
	if l, ok := loops[repeat]; ok {
		return l
	}
	return "None"
}

// repeatOf is the repeat of a LoopStatus; ok is false for any other word.
func repeatOf(loop string) (string, bool) {
	for r, l := range loops {
		if l == loop {
			return r, true
		}
	}
	return "", false
}

// Properties MPRIS says never to signal: the position moves all the time
// (clients ask, and hear Seeked for jumps).
var unsignalled = map[string]bool{"Position": true}

// playbackStatus maps the player's states; a failed audio device is
// stopped as far as a desktop can tell.
func playbackStatus(s player.State) string {
	switch s {
	case player.Playing:
		return "Playing"
	case player.Paused:
		return "Paused"
	}
	return "Stopped"
}

func metadata(st player.Status, coverBase string) map[string]dbus.Variant {
	if st.Index < 0 || st.Index >= len(st.Queue) {
		return map[string]dbus.Variant{"mpris:trackid": dbus.MakeVariant(noTrack)}
	}
	item := st.Queue[st.Index]
	length := st.Duration
	if length <= 0 {
		length = item.Duration
	}
	m := map[string]dbus.Variant{
		"mpris:trackid":     dbus.MakeVariant(trackID(item.ID)),
		"mpris:length":      dbus.MakeVariant(micros(length)),
		"xesam:title":       dbus.MakeVariant(item.Title),
		"xesam:trackNumber": dbus.MakeVariant(int32(st.Index + 1)),
	}
	album := item.Album
	if album == "" && st.Folder != nil {
		album = *st.Folder
	}
	if album != "" {
		m["xesam:album"] = dbus.MakeVariant(album)
	}
	if item.Artist != "" {
		m["xesam:artist"] = dbus.MakeVariant([]string{item.Artist})
	}
	if st.Cover != nil && coverBase != "" {
		m["mpris:artUrl"] = dbus.MakeVariant(coverBase + *st.Cover)
	}
	return m
}

// trackID makes an object path of a library track id (hex digits; anything
// else becomes '_').
func trackID(id string) dbus.ObjectPath {
	if id == "" {
		return noTrack
	}
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, id)
	return dbus.ObjectPath("/org/storybox/track/t" + clean)
}

func micros(sec float64) int64 {
	if math.IsNaN(sec) || math.IsInf(sec, 0) || sec < 0 {
		return 0
	}
	return int64(math.Round(sec * 1e6))
}
