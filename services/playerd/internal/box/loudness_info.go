package box

import (
	"math"

	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/settings"
)

// loudnessInfo is what the cap means with normalisation on: the loudest
// integrated loudness at the output (dB relative to digital full scale,
// before the amplifier) of anything played at max_volume. Off, the cap
// bounds only a gain, and max_volume_lufs is null. Headphones play the
// same normalised sound under their own cap, so theirs means a loudness too.
func loudnessInfo(a settings.Audio) map[string]any {
	info := map[string]any{
		"normalize":       a.Normalize,
		"target_lufs":     player.TargetLUFS,
		"ceiling_dbtp":    player.CeilingDBTP,
		"max_volume_lufs": nil,
		// the loudest at the headphones' output under headphone_max_volume
		"headphone_max_volume_lufs": nil,
	}
	if a.Normalize != player.NormalizeOff {
		info["max_volume_lufs"] = math.Round(player.OutputLUFS(a.MaxVolume)*10) / 10
		info["headphone_max_volume_lufs"] = math.Round(player.OutputLUFS(a.HeadphoneMaxVolume)*10) / 10
	}
	return info
}
