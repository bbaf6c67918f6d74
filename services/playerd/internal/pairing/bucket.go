package pairing

import (
	"sync"
	"time"
)

// Bucket is a token bucket on the clock's uptime: Burst requests at once,
// then one every Every. The zero Bucket allows nothing; use NewBucket.
type Bucket struct {
	mu     sync.Mutex
	every  time.Duration
	burst  float64
	tokens float64
	last   time.Duration
	used   bool // last is set
}

// NewBucket returns a full bucket.
func NewBucket(every time.Duration, burst int) *Bucket {
	return &Bucket{every: every, burst: float64(burst), tokens: float64(burst)}
}

// Take takes one token at uptime now. When there is none it returns how
// long until there is one, and takes nothing.
func (b *Bucket) Take(now time.Duration) (ok bool, retry time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used && now > b.last {
		b.tokens = min(b.burst, b.tokens+float64(now-b.last)/float64(b.every))
	}
	if !b.used || now > b.last {
		b.last, b.used = now, true
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) * float64(b.every))
}
