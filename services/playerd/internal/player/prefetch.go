package player

// prefetchLead is how long before the end of a track the next one is
// opened: some files are read whole at open (an MP3 of variable bitrate
// without a header, to count its frames), which on a Pi's SD card can take
// longer than the device buffer lasts.
const prefetchLead = 10.0 // seconds

// prefetched is a track opened in the background for the gapless change.
type prefetched struct {
	gen, index int
	t          *track
	err        error
}

// maybePrefetch opens the next queue entry in a goroutine when the current
// track is about to end. The goroutine only opens a file; the track is
// handed to the player goroutine through prefetchC.
func (p *Player) maybePrefetch() {
	if p.cur == nil || p.prefetching || p.ready != nil {
		return
	}
	if p.cur.duration-p.cur.seconds() > prefetchLead {
		return
	}
	i, ok := p.upcoming()
	if !ok {
		return
	}
	p.prefetching = true
	gen, rate := p.queueGen, p.rate
	lt, item := p.trackAt(i), p.queue[i]
	go func() {
		t, err := p.openTrack(lt, item, rate)
		p.prefetchC <- prefetched{gen: gen, index: i, t: t, err: err}
	}()
}

// takePrefetch returns the prefetched entry i, waiting for an open in
// flight; ok is false when nothing usable was prefetched.
func (p *Player) takePrefetch(i int) (t *track, err error, ok bool) {
	if p.prefetching {
		r := <-p.prefetchC
		p.prefetching = false
		p.ready = &r
	}
	r := p.ready
	p.ready = nil
	if r == nil {
		return nil, nil, false
	}
	if r.gen != p.queueGen || r.index != i {
		if r.t != nil {
			r.t.close()
		}
		return nil, nil, false
	}
	return r.t, r.err, true
}

// dropPrefetch forgets a prefetched track (the queue changed, or shutdown).
func (p *Player) dropPrefetch() {
	p.queueGen++
	p.takePrefetch(-1)
}
