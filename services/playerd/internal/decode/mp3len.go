package decode

import (
	"github.com/storybox/storybox/services/playerd/internal/decode/mp3"
)

// An MP3 has no length field. Encoders write the frame count into the
// first frame (Xing/Info by LAME and most others, VBRI by Fraunhofer's),
// and a constant bitrate's frame count follows from the size: the decoder
// reads its length the same way (mp3.Inspect), so the library shows what
// the player plays, encoder delay and padding trimmed. A variable bitrate
// without a header needs every frame header read: ok is false, and the
// file is opened.
func mp3Duration(src *source) (float64, bool, error) {
	info, err := mp3.Inspect(src, src.size)
	if err != nil || info.Samples < 0 {
		return 0, false, nil // opening says what is wrong, or walks the frames
	}
	return float64(info.Samples) / float64(info.SampleRate), true, nil
}
