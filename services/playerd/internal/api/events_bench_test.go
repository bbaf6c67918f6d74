package api

import (
	"bufio"
	"context"
	"github.com/storybox/storybox/services/playerd/internal/netlimit"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// stillPlayer is a player that never changes, for the benchmarks.
type stillPlayer struct{}

func (stillPlayer) Status() player.Status {
	return player.Status{State: player.Stopped, Queue: []player.QueueItem{}, Index: -1, Volume: 30, MaxVolume: 80}
}
func (stillPlayer) Do(context.Context, player.Command) (player.Status, error) {
	return stillPlayer{}.Status(), nil
}

// benchStreams serves the API with a feed and opens n streams; each
// client counts the events (not the first status) and heartbeats it reads.
type benchStreams struct {
	bus     *events.Bus
	events  []atomic.Int64
	beats   []atomic.Int64
	changed chan struct{} // a client read something
}

func openBenchStreams(b *testing.B, n int, lim StreamLimits) *benchStreams {
	b.Helper()
	bus := events.New(events.Config{FirstID: 1})
	m, hosts := testAuth(b)
	lim.Total, lim.PerClient = n, n
	h := NewHandler(Deps{Version: "bench", Player: stillPlayer{}, Auth: m, Hosts: hosts, Events: bus, Streams: lim})
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnContext = netlimit.ConnContext
	srv.Start()
	bs := &benchStreams{bus: bus, events: make([]atomic.Int64, n), beats: make([]atomic.Int64, n), changed: make(chan struct{}, 1)}
	var wg sync.WaitGroup
	b.Cleanup(func() {
		bus.Close()
		srv.Close()
		wg.Wait()
	})
	for i := range n {
		resp, err := (&http.Transport{}).RoundTrip(httptest.NewRequest("GET", srv.URL+"/api/events", nil).WithContext(context.Background()))
		if err != nil {
			b.Fatal(err)
		}
		if resp.StatusCode != 200 {
			b.Fatalf("stream %d: %d", i, resp.StatusCode)
		}
		r := bufio.NewReader(resp.Body)
		for { // up to the status
			line, err := r.ReadString('\n')
			if err != nil {
				b.Fatal(err)
			}
			if strings.HasPrefix(line, "event: status") {
				break
			}
		}
		wg.Go(func() {
			defer resp.Body.Close()
			for {
				line, err := r.ReadSlice('\n')
				if err != nil {
					return
				}
				switch {
				case len(line) > 6 && string(line[:6]) == "event:":
					bs.events[i].Add(1)
				case len(line) == 2 && line[0] == ':':
					bs.beats[i].Add(1)
				default:
					continue
				}
				select {
				case bs.changed <- struct{}{}:
				default:
				}
			}
		})
	}
	return bs
}

// waitAll waits until every client's count reaches n.
func (bs *benchStreams) waitAll(b *testing.B, counts []atomic.Int64, n int64) {
	for i := range counts {
		for counts[i].Load() < n {
			select {
			case <-bs.changed:
			case <-time.After(10 * time.Second):
				b.Fatalf("client %d is stuck at %d of %d", i, counts[i].Load(), n)
			}
		}
	}
}

// BenchmarkEventStreams: events through GET /api/events to 100 clients
// over loopback HTTP, in bursts of 64, each burst read by every client
// before the next. The clients' reading runs on the same CPUs, so this is
// a lower bound for the box's side. events/s: what each client received
// per second.
func BenchmarkEventStreams(b *testing.B) {
	const clients, burst = 100, 64
	bs := openBenchStreams(b, clients, StreamLimits{})
	payload := struct {
		Volume    int `json:"volume"`
		MaxVolume int `json:"max_volume"`
	}{40, 80}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	sent := 0
	for sent < b.N {
		n := min(burst, b.N-sent)
		for range n {
			if err := bs.bus.Publish(events.KindVolume, payload); err != nil {
				b.Fatal(err)
			}
		}
		sent += n
		bs.waitAll(b, bs.events, int64(sent))
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if d := bs.bus.Stats().Dropped; d != 0 {
		b.Fatalf("%d streams dropped", d)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(b.N*clients)/elapsed.Seconds(), "deliveries/s")
}

// BenchmarkIdleStream: what an open stream without events costs. Between
// heartbeats a stream is a parked goroutine and costs no CPU; each
// heartbeat is a timer, a write and a flush. One op is one heartbeat on
// each of 100 streams (heartbeat every 5 ms here instead of 15 s);
// cpu-µs/heartbeat is the process's CPU time (user + system, the reading
// clients included) per stream and heartbeat, so an idle stream costs
// 240 times that per hour.
func BenchmarkIdleStream(b *testing.B) {
	const clients = 100
	bs := openBenchStreams(b, clients, StreamLimits{Heartbeat: 5 * time.Millisecond})
	rounds := int64(0)
	bs.waitAll(b, bs.beats, 1)
	for i := range bs.beats {
		rounds = max(rounds, bs.beats[i].Load())
	}
	before := cpuTime(b)
	b.ResetTimer()
	for b.Loop() {
		rounds++
		bs.waitAll(b, bs.beats, rounds)
	}
	b.StopTimer()
	cpu := cpuTime(b) - before
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*clients), "cpu-µs/heartbeat")
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
