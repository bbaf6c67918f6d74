package household

import (
	"cmp"
	"fmt"
	"sync"
	"time"
)

// Stamp is a hybrid logical clock reading: the wall clock in milliseconds,
// and a counter that orders writes within one millisecond or while the
// wall clock is behind a stamp the box has seen. A box that saw a stamp
// never writes a lower one, so an edit made after seeing another box's
// edit wins over it even when the two clocks disagree.
type Stamp struct {
	Wall    int64  `json:"wall_ms"`
	Logical uint32 `json:"logical"`
}

// Compare orders stamps: -1, 0 or +1.
func (a Stamp) Compare(b Stamp) int {
	if c := cmp.Compare(a.Wall, b.Wall); c != 0 {
		return c
	}
	return cmp.Compare(a.Logical, b.Logical)
}

func (a Stamp) String() string { return fmt.Sprintf("%d.%d", a.Wall, a.Logical) }

// MaxAhead bounds how far a stamp read from the folder may move this box's
// clock past its own wall clock. A box whose clock runs ahead writes stamps
// that win every concurrent edit until real time catches up with them; if
// the other boxes took those stamps on, their own edits would carry the
// same lead, and a single wrong clock (a year ahead, say) would decide
// every concurrent edit of the household for that year, even after it was
// put right. HLC implementations bound the offset they accept from a peer
// for this reason. The bound is also how far behind a box's clock may be
// while its edit made after seeing another box's still carries the higher
// stamp; five minutes is far beyond the drift of clocks kept by NTP.
const MaxAhead = 5 * time.Minute

// clock is the box's hybrid logical clock. Its state need not be saved:
// every stamp it gave is in a file of the shared folder, which Open and
// Reconcile observe.
type clock struct {
	now func() time.Time

	mu   sync.Mutex
	last Stamp
}

// next is a stamp above every stamp given or observed.
func (c *clock) next() Stamp {
	c.mu.Lock()
	defer c.mu.Unlock()
	wall := c.now().UnixMilli()
	if wall > c.last.Wall {
		c.last = Stamp{Wall: wall}
	} else {
		c.last.Logical++
	}
	return c.last
}

// observe moves the clock past s, a stamp read from the folder, unless s
// is more than MaxAhead ahead of this box's wall clock: then the clock
// stays where it is, and observe says by how much s is ahead. The entry
// keeps its stamp, so the merge rule, which every box must apply alike,
// is unchanged.
func (c *clock) observe(s Stamp) (ahead time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := time.Duration(s.Wall-c.now().UnixMilli()) * time.Millisecond; d > MaxAhead {
		return d
	}
	if s.Compare(c.last) > 0 {
		c.last = s
	}
	return 0
}
