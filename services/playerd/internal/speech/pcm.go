package speech

import (
	"bytes"
	"fmt"

	"github.com/gopxl/beep/v2"
	"github.com/gopxl/beep/v2/wav"

	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/resample"
)

// maxClipSeconds bounds a clip handed to the player: a voice that returns a
// huge file must not fill the memory of a 512 MB box.
const maxClipSeconds = 120

// ToPCM decodes a WAV file and resamples it to stereo frames at
// output.ClipRate, the rate the player takes announcements at.
func ToPCM(data []byte) ([][2]float64, error) {
	s, format, err := wav.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("speech audio: %w", err)
	}
	defer s.Close()
	if format.SampleRate <= 0 {
		return nil, fmt.Errorf("speech audio: sample rate %d", format.SampleRate)
	}
	if n := s.Len(); n > maxClipSeconds*int(format.SampleRate) {
		return nil, fmt.Errorf("speech audio: %d s is longer than %d s", n/int(format.SampleRate), maxClipSeconds)
	}
	var src beep.Streamer = s
	if format.SampleRate != output.ClipRate {
		src = resample.New(4, format.SampleRate, output.ClipRate, s)
	}
	want := int(int64(s.Len()) * output.ClipRate / int64(format.SampleRate))
	pcm := make([][2]float64, 0, want+output.PeriodFrames)
	buf := make([][2]float64, output.PeriodFrames)
	for {
		n, ok := src.Stream(buf)
		pcm = append(pcm, buf[:n]...)
		if !ok || n == 0 {
			break
		}
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("speech audio: %w", err)
	}
	if len(pcm) == 0 {
		return nil, fmt.Errorf("speech audio: no samples")
	}
	return pcm, nil
}
