package settings

import "strings"

// DefaultHeadphoneMaxVolume is the headphones' cap unless a parent sets
// another: 20 steps (8 dB) below the speaker's default of 80, since
// headphones put the same signal much closer to the ear.
const DefaultHeadphoneMaxVolume = 60

// maxDeviceName bounds headphone_device: an ALSA card's id is at most 15
// characters and its name 31; room for a device number besides.
const maxDeviceName = 64

// checkHeadphones: Headphones switches the second output on or off;
// HeadphoneDevice is empty (any USB sound card, or the board's jack where
// its detect line is wired) or an ALSA card as -output alsa:DEV names it
// (a number, "1,0", an id or a part of its name).
func (a Audio) checkHeadphones() error {
	if a.HeadphoneMaxVolume < 1 || a.HeadphoneMaxVolume > 100 {
		return invalid("audio.headphone_max_volume must be 1..100, not %d", a.HeadphoneMaxVolume).Coded("settings_headphone_max_volume")
	}
	if !deviceName(a.HeadphoneDevice) {
		return invalid("audio.headphone_device must be empty (any USB sound card) or an ALSA card such as 1, 1,0 or \"USB Audio\" (at most %d letters, digits, spaces and -_.,:), not %q", maxDeviceName, a.HeadphoneDevice).Coded("settings_headphone_device")
	}
	return nil
}

func deviceName(s string) bool {
	if len(s) > maxDeviceName || s != strings.TrimSpace(s) {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(" -_.,:", c)) {
			return false
		}
	}
	return true
}
