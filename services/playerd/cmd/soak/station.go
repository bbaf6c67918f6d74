package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

// station is the internet as the box sees it in the soak: a radio station
// with ICY titles, a playlist naming it, a podcast feed with two episodes
// and a cover, served from the radio namespace. It goes away and comes
// back (down), and its link does too (netLab.setLink).
type station struct {
	lab     *netLab
	port    int
	mp3     []byte // frames, looped by the stream
	episode []byte

	mu  sync.Mutex
	srv *http.Server // nil while down

	streams atomic.Int64 // stream connections served
	bytes   atomic.Int64
}

const stationPort = 8000

func newStation(lab *netLab, mp3 []byte) *station {
	frames := testmedia.MP3Frames(mp3)
	return &station{lab: lab, port: stationPort, mp3: frames, episode: bytes.Repeat(frames, 10)}
}

// base is the station's address as the box reaches it.
func (s *station) base() string { return fmt.Sprintf("http://%s:%d", s.lab.radioIP, s.port) }

func (s *station) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/soak.mp3", s.stream)
	mux.HandleFunc("/soak.m3u", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/x-mpegurl")
		fmt.Fprintf(w, "#EXTM3U\n#EXTINF:-1,Soak FM\n%s/soak.mp3\n", s.base())
	})
	mux.HandleFunc("/feed.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>
<title>Soak-Geschichten</title><itunes:image href="%[1]s/cover.png"/>
<item><title>Folge 1</title><guid>soak-1</guid><pubDate>Mon, 06 Jan 2025 18:00:00 +0000</pubDate>
<enclosure url="%[1]s/ep1.mp3" type="audio/mpeg" length="%[2]d"/><itunes:duration>20</itunes:duration></item>
<item><title>Folge 2</title><guid>soak-2</guid><pubDate>Mon, 13 Jan 2025 18:00:00 +0000</pubDate>
<enclosure url="%[1]s/ep2.mp3" type="audio/mpeg" length="%[2]d"/><itunes:duration>20</itunes:duration></item>
</channel></rss>`, s.base(), len(s.episode))
	})
	episode := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/mpeg")
		http.ServeContent(w, r, "episode.mp3", time.Time{}, bytes.NewReader(s.episode))
	}
	mux.HandleFunc("/ep1.mp3", episode)
	mux.HandleFunc("/ep2.mp3", episode)
	cover := coverPNG(color.RGBA{0x30, 0x80, 0xc0, 0xff})
	mux.HandleFunc("/cover.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(cover)
	})
	return mux
}

// stream is the looped tone with a metadata block every 8000 bytes and a
// title that changes every few seconds of audio. The box reads it at the
// pace it plays, so TCP holds the server back.
func (s *station) stream(w http.ResponseWriter, r *http.Request) {
	s.streams.Add(1)
	const metaint = 8000
	w.Header().Set("Content-Type", "audio/mpeg")
	if r.Header.Get("Icy-MetaData") == "1" {
		w.Header().Set("icy-metaint", fmt.Sprint(metaint))
	}
	sent, last := 0, ""
	chunk := make([]byte, metaint)
	for block := 0; ; block++ {
		for i := range chunk {
			chunk[i] = s.mp3[(sent+i)%len(s.mp3)]
		}
		if _, err := w.Write(chunk); err != nil {
			return
		}
		sent += metaint
		s.bytes.Add(metaint)
		if r.Header.Get("Icy-MetaData") != "1" {
			continue
		}
		meta := testmedia.ICYMeta("")
		if t := fmt.Sprintf("Lied %d", block/6); t != last {
			meta, last = testmedia.ICYMeta(t), t
		}
		if _, err := w.Write(meta); err != nil {
			return
		}
	}
}

// up starts serving (again).
func (s *station) up() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return nil
	}
	ln, err := s.lab.listenInRadio(s.port)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 5 * time.Second}
	s.srv = srv
	go func() { _ = srv.Serve(ln) }()
	return nil
}

// down ends the server and every connection at once, as a station's
// server restarting does: streams break, new connections are refused.
func (s *station) down() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		_ = s.srv.Close()
		s.srv = nil
	}
}

func (s *station) close() {
	s.down()
}

// coverPNG is a small single-colour PNG.
func coverPNG(c color.RGBA) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}

// reachable waits until the box's side can connect to the station.
func (s *station) reachable(ctx context.Context) error {
	d := net.Dialer{Timeout: time.Second}
	for {
		c, err := d.DialContext(ctx, "tcp", fmt.Sprintf("%s:%d", s.lab.radioIP, s.port))
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("station not reachable: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
