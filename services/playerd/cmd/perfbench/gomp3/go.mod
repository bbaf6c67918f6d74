module github.com/storybox/storybox/services/playerd/cmd/perfbench/gomp3

go 1.26.0

require github.com/hajimehoshi/go-mp3 v0.3.4
