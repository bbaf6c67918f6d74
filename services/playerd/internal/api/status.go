package api

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"sync"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// statusCache keeps the encoded player status between changes, so that
// GET /api/status, which apps and the web page poll, does not encode the
// queue again each time. While a track plays only the position moves: it is
// written into the cached encoding at its place.
type statusCache struct {
	mu   sync.Mutex
	key  player.Status // the status encoded, its position aside
	ok   bool
	pre  []byte // the encoding up to the position's value
	post []byte // and after it, without the closing brace
}

// positionKey is where the status's encoding has the position's value; no
// other key of the status or its queue is called "position", and inside a
// JSON string the quotes would be escaped.
var positionKey = []byte(`"position":`)

// appendStatus appends st's JSON encoding without its closing brace: the
// caller adds fields or closes it.
func (c *statusCache) appendStatus(b []byte, st player.Status) ([]byte, error) {
	ok := plainNumber(st.Position)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !ok || !c.ok || !player.SamePlayback(c.key, st) {
		data, err := json.Marshal(st)
		if err != nil {
			return b, err
		}
		i := bytes.Index(data, positionKey)
		if !ok || i < 0 || len(data) < 2 || data[len(data)-1] != '}' {
			c.ok = false // an encoding this cache does not know: no splicing
			return append(b, data[:len(data)-1]...), nil
		}
		i += len(positionKey)
		j := i + bytes.IndexAny(data[i:], ",}")
		c.key, c.ok = st, true
		c.pre = append(c.pre[:0], data[:i]...)
		c.post = append(c.post[:0], data[j:len(data)-1]...)
	}
	b = append(b, c.pre...)
	b = strconv.AppendFloat(b, st.Position, 'f', -1, 64)
	return append(b, c.post...), nil
}

// plainNumber reports whether encoding/json writes f as strconv's 'f'
// format does: the range it writes without an exponent.
func plainNumber(f float64) bool {
	a := math.Abs(f)
	return a == 0 || a >= 1e-6 && a < 1e21
}

// statusBuffers hold a response while it is put together.
var statusBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// status answers GET /api/status: what statusBody encodes, from the cache.
func (h *handler) status(w http.ResponseWriter, r *http.Request) {
	bp := statusBuffers.Get().(*[]byte)
	defer statusBuffers.Put(bp)
	b, err := h.statusCache.appendStatus((*bp)[:0], h.Player.Status())
	if err == nil {
		b, err = h.appendExtras(b)
	}
	if err != nil {
		h.fail(w, r, answer.Failed("status could not be encoded", err))
		return
	}
	b = append(b, '}', '\n')
	*bp = b
	answer.Encoded(w, http.StatusOK, b)
}

// appendExtras adds the fields statusBody adds to the status: the
// restrictions and the scan's progress, each left out without its view.
func (h *handler) appendExtras(b []byte) ([]byte, error) {
	var err error
	if h.Views.Restrictions != nil {
		b, err = appendExtra(b, "restrictions", h.Views.Restrictions())
	}
	if err == nil && h.Views.Scan != nil {
		b, err = appendExtra(b, "library", h.Views.Scan())
	}
	return b, err
}

func appendExtra(b []byte, name string, v any) ([]byte, error) {
	field, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return append(b, field...), nil
}
