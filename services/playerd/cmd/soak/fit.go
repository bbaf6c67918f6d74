package main

import (
	"math"
	"sort"
	"time"
)

// trend is a resource's growth per hour, fitted to the run's long life
// (the last part of the run, without kills) after its warm-up: every kill
// starts playerd from scratch, and the short lives before it are mostly
// warm-up.
type trend struct {
	name, unit string
	slope, se  float64 // per hour; se allows for neighbouring samples being alike
	n, lives   int
	span       float64 // the longest life measured, in hours
	bound      float64 // per hour
	allowance  float64 // what a life may rise by without being called a trend
}

// lo and hi are the slope's 95% interval.
func (t trend) lo() float64 { return t.slope - 1.96*t.se }
func (t trend) hi() float64 { return t.slope + 1.96*t.se }

// rise is what the fitted slope adds up to over the longest life measured.
func (t trend) rise() float64 { return t.slope * t.span }

// longEnough is the life a slope per hour is judged on; a shorter one
// cannot tell growth from warming up (the heap reaching its working size,
// the garbage of the login's password hash collected), nor from a few
// connections and streams more or less.
const longEnough = 20 * time.Minute

// pass: over a long life the fitted slope must be below the bound; over a
// short one (the few minutes in make test) the rise at that slope must stay
// within the allowance, which catches a gross leak only.
func (t trend) pass() bool {
	if t.n < 3 {
		return true
	}
	if t.span*float64(time.Hour) >= float64(longEnough) {
		return t.slope < t.bound
	}
	return t.rise() <= t.allowance
}

// fitWithin fits y = a + slope·t by least squares over the samples of the
// life measured longest, at least warm into it. (It fits several lives with
// one slope and a level each, if given them.)
func fitWithin(samples []sample, warm time.Duration, y func(sample) float64) (slope, se float64, n, lives int, span float64) {
	byLife := map[int][]sample{}
	for _, s := range samples {
		if s.age >= warm {
			byLife[s.life] = append(byLife[s.life], s)
		}
	}
	longest, most := 0, time.Duration(0)
	for l, ss := range byLife {
		if d := ss[len(ss)-1].t.Sub(ss[0].t); d > most {
			longest, most = l, d
		}
	}
	byLife = map[int][]sample{longest: byLife[longest]}
	type point struct{ dt, dy float64 }
	var groups [][]point
	var sxx, sxy float64
	for _, ss := range byLife {
		if len(ss) < 3 {
			continue
		}
		sort.Slice(ss, func(i, j int) bool { return ss[i].t.Before(ss[j].t) })
		var tm, ym float64
		for _, s := range ss {
			tm += hours(s.t)
			ym += y(s)
		}
		tm /= float64(len(ss))
		ym /= float64(len(ss))
		g := make([]point, len(ss))
		for i, s := range ss {
			g[i] = point{hours(s.t) - tm, y(s) - ym}
			sxx += g[i].dt * g[i].dt
			sxy += g[i].dt * g[i].dy
		}
		groups = append(groups, g)
		n += len(ss)
		span = max(span, ss[len(ss)-1].t.Sub(ss[0].t).Hours())
	}
	lives = len(groups)
	if sxx == 0 || n-lives-1 <= 0 {
		return 0, math.Inf(1), n, lives, span
	}
	slope = sxy / sxx
	// Residuals, and how alike neighbours are (lag-1 autocorrelation):
	// alike neighbours carry less information than their number says.
	var sse, lag, prevSum float64
	for _, g := range groups {
		for i, p := range g {
			e := p.dy - slope*p.dt
			sse += e * e
			if i > 0 {
				prev := g[i-1].dy - slope*g[i-1].dt
				lag += e * prev
				prevSum += prev * prev
			}
		}
	}
	se = math.Sqrt(sse / float64(n-lives-1) / sxx)
	if prevSum > 0 {
		if rho := lag / prevSum; rho > 0 {
			rho = min(rho, 0.99)
			se *= math.Sqrt((1 + rho) / (1 - rho))
		}
	}
	return slope, se, n, lives, span
}

// hours is t in hours since an arbitrary origin (only differences count).
func hours(t time.Time) float64 { return float64(t.UnixNano()) / float64(time.Hour) }

// percentile is the q-quantile (0..1) of ds, nearest rank.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}
