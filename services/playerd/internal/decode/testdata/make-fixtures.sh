#!/usr/bin/env bash
# Regenerates the decoder fixtures (committed; tests do not need the encoders).
# Each is 2 s of a 440 Hz tone in the left and 660 Hz in the right channel, so
# tests can check duration, channel order and pitch after decoding.
set -euo pipefail
cd "$(dirname "$0")"
sox -n -r 44100 -b 16 -c 2 tone44k.wav synth 2 sine 440 sine 660 gain -6
sox -n -r 48000 -b 16 -c 2 tone48k.wav synth 2 sine 440 sine 660 gain -6
flac -s -f -o tone.flac tone44k.wav
lame --silent -b 128 --tt "Ton A" --ta "storybox" --tl "Fixtures" tone44k.wav tone.mp3
oggenc -Q -q 2 -t "Ton A" -a "storybox" -o tone.ogg tone44k.wav
opusenc --quiet --bitrate 64 --title "Ton A" tone48k.wav tone.opus
rm tone44k.wav
