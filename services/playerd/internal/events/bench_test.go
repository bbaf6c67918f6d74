package events

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkFanOut: one publisher, N readers that each read every event, as
// N event streams do (without the HTTP part; api's BenchmarkEventStreams
// has that). The publisher sends bursts of 64 and waits until every reader
// has them, so no reader falls behind the kept events; events/s is what
// every one of the N readers received per second.
func BenchmarkFanOut(b *testing.B) {
	for _, readers := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("readers=%d", readers), func(b *testing.B) {
			const burst = 64
			bus := New(Config{FirstID: 1})
			var delivered atomic.Int64
			caughtUp := make(chan struct{}, readers)
			var target atomic.Int64
			var wg sync.WaitGroup
			stop := make(chan struct{})
			for range readers {
				s := bus.Subscribe()
				wg.Go(func() {
					defer s.Close()
					var seen int64
					for {
						ready := s.Ready()
						ev, err := s.Next()
						if err != nil {
							b.Error(err)
							return
						}
						if ev != nil {
							seen++
							delivered.Add(1)
							if seen == target.Load() {
								caughtUp <- struct{}{}
							}
							continue
						}
						select {
						case <-ready:
						case <-stop:
							return
						}
					}
				})
			}
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
				target.Store(int64(sent + n))
				for range n {
					if err := bus.Publish(KindVolume, payload); err != nil {
						b.Fatal(err)
					}
				}
				sent += n
				for range readers {
					<-caughtUp
				}
			}
			elapsed := time.Since(start)
			b.StopTimer()
			close(stop)
			wg.Wait()
			if got := delivered.Load(); got != int64(b.N*readers) {
				b.Fatalf("delivered %d, want %d", got, b.N*readers)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
			b.ReportMetric(float64(b.N*readers)/elapsed.Seconds(), "deliveries/s")
		})
	}
}

// BenchmarkPublish is the publisher's cost with nobody reading.
func BenchmarkPublish(b *testing.B) {
	bus := New(Config{FirstID: 1})
	payload := struct {
		State    string  `json:"state"`
		Position float64 `json:"position"`
	}{"playing", 12.5}
	b.ReportAllocs()
	for b.Loop() {
		if err := bus.Publish(KindState, payload); err != nil {
			b.Fatal(err)
		}
	}
}
