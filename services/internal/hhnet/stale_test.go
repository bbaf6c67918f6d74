package hhnet

import (
	"fmt"
	"os"
	"testing"
)

func TestRunOf(t *testing.T) {
	for name, want := range map[string]int{"sbxhh4242br": 4242, "sbxhh4242b3": 4242, "sbxhh7": 7} {
		if got, ok := runOf(name); !ok || got != want {
			t.Errorf("runOf(%q) = %d, %v; want %d", name, got, ok, want)
		}
	}
	for _, name := range []string{"other", "sbxhhbr", ""} {
		if _, ok := runOf(name); ok {
			t.Errorf("runOf(%q) took it for a run's", name)
		}
	}
}

// A run that is alive keeps its namespaces when another run starts.
func TestLiveRunIsNotStale(t *testing.T) {
	run, ok := runOf(fmt.Sprintf("%s%dbr", Prefix, os.Getpid()%100000))
	if !ok || !liveRuns()[run] {
		t.Fatalf("this process's run %d is not counted alive", run)
	}
}
