package output

import "time"

// pacer makes a sink without a device behave like one: Write returns no
// earlier than a real device with a buffer of lead would accept the frames, so
// positions advance and tracks end in real time.
type pacer struct {
	rate    int
	lead    time.Duration
	start   time.Time
	written int64 // frames since start
	now     func() time.Time
	sleep   func(time.Duration)
}

// leadPeriods models a device buffer of sixteen periods, as the ALSA sink
// asks for.
const leadPeriods = 16

func newPacer(rate int) *pacer {
	p := &pacer{rate: rate, now: time.Now, sleep: time.Sleep}
	p.lead = p.framesDuration(leadPeriods * PeriodFrames)
	return p
}

func (p *pacer) framesDuration(n int64) time.Duration {
	return time.Duration(n) * time.Second / time.Duration(p.rate)
}

// wrote accounts for n frames and blocks while more than lead is buffered.
func (p *pacer) wrote(n int) {
	now := p.now()
	if p.start.IsZero() {
		p.start = now
	}
	// Fell behind by more than the buffer: a device would underrun and
	// restart, so does the clock.
	if played := now.Sub(p.start); p.framesDuration(p.written) < played {
		p.start = now.Add(-p.framesDuration(p.written))
	}
	p.written += int64(n)
	if wait := p.start.Add(p.framesDuration(p.written)).Sub(now) - p.lead; wait > 0 {
		p.sleep(wait)
	}
}

// buffered reports the frames written but not yet "heard".
func (p *pacer) buffered() int {
	if p.start.IsZero() {
		return 0
	}
	ahead := p.start.Add(p.framesDuration(p.written)).Sub(p.now())
	if ahead <= 0 {
		return 0
	}
	return int(int64(ahead) * int64(p.rate) / int64(time.Second))
}

// unwrite takes back up to n frames that are not "heard" yet and reports
// how many.
func (p *pacer) unwrite(n int) int {
	n = max(0, min(n, p.buffered()))
	p.written -= int64(n)
	return n
}

func (p *pacer) drop() { p.start, p.written = time.Time{}, 0 }

func (p *pacer) drain() {
	if !p.start.IsZero() {
		if wait := p.start.Add(p.framesDuration(p.written)).Sub(p.now()); wait > 0 {
			p.sleep(wait)
		}
	}
	p.drop()
}
