package display

import (
	"bytes"
	"container/list"
	"image"
	"image/color"
	"image/draw"
	_ "image/gif" // cover formats found in audio files and folders
	_ "image/jpeg"
	_ "image/png"
	"strings"
	"time"

	xdraw "golang.org/x/image/draw"
	_ "golang.org/x/image/webp"

	"github.com/storybox/storybox/services/playerd/internal/display/paint"
)

// coverCache keeps covers decoded and scaled to the size they are drawn at,
// so a redraw never decodes a JPEG again. It is used by the renderer only,
// under its lock.
type coverCache struct {
	src     CoverSource
	max     int
	retry   time.Duration // how long a missing cover stays missing
	now     func() time.Time
	order   *list.List // front = most recently used
	entries map[coverKey]*list.Element
}

type coverKey struct {
	id   string
	size int
}

type coverEntry struct {
	key    coverKey
	img    *image.RGBA // nil: not available
	failed time.Time
}

func newCoverCache(src CoverSource, maxEntries int, now func() time.Time) *coverCache {
	return &coverCache{src: src, max: maxEntries, retry: time.Minute, now: now,
		order: list.New(), entries: map[coverKey]*list.Element{}}
}

// reset forgets every cover.
func (c *coverCache) reset() {
	c.order.Init()
	clear(c.entries)
}

// coverID turns the "/api/cover/<id>" reference of the API models into the
// id a CoverSource understands.
func coverID(ref *string) string {
	if ref == nil {
		return ""
	}
	return strings.TrimPrefix(*ref, "/api/cover/")
}

// get returns the cover scaled to size×size, or nil when there is none.
func (c *coverCache) get(id string, size int) *image.RGBA {
	if c == nil || c.src == nil || id == "" || size <= 0 {
		return nil
	}
	k := coverKey{id, size}
	if el, ok := c.entries[k]; ok {
		e := el.Value.(*coverEntry)
		if e.img != nil || c.now().Sub(e.failed) < c.retry {
			c.order.MoveToFront(el)
			return e.img
		}
		c.order.Remove(el)
		delete(c.entries, k)
	}
	e := &coverEntry{key: k}
	if img, err := c.load(id, size); err == nil {
		e.img = img
	} else {
		e.failed = c.now()
	}
	c.entries[k] = c.order.PushFront(e)
	for c.order.Len() > c.max {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.entries, old.Value.(*coverEntry).key)
	}
	return e.img
}

func (c *coverCache) load(id string, size int) (*image.RGBA, error) {
	b, _, err := c.src.Cover(id)
	if err != nil {
		return nil, err
	}
	src, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	img := scaleSquare(src, size)
	// Round the corners once here rather than masking on every frame.
	mask := image.NewAlpha(img.Rect)
	paint.RoundRect(mask, img.Rect, coverRadius, color.Alpha{A: 0xff})
	out := image.NewRGBA(img.Rect)
	draw.DrawMask(out, out.Rect, img, image.Point{}, mask, image.Point{}, draw.Src)
	return out, nil
}

const coverRadius = 14

// scaleSquare crops the centre square of src and scales it to size×size.
func scaleSquare(src image.Image, size int) *image.RGBA {
	b := src.Bounds()
	side := min(b.Dx(), b.Dy())
	crop := image.Rect(0, 0, side, side).Add(b.Min).Add(image.Pt((b.Dx()-side)/2, (b.Dy()-side)/2))
	dst := image.NewRGBA(image.Rect(0, 0, size, size))
	xdraw.BiLinear.Scale(dst, dst.Bounds(), src, crop, xdraw.Src, nil)
	return dst
}
