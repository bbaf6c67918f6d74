//go:build !linux

package alsa

import "errors"

// Open needs Linux's /dev/snd.
func Open(path, name string, cfg Config) (*PCM, error) {
	return nil, errors.New("alsa " + name + ": ALSA needs Linux")
}
