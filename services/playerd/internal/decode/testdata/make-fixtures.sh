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
# Variable bitrate with a Xing header, for the duration read from it.
lame --silent -V 6 --tt "Ton A" --ta "storybox" --tl "Fixtures" tone44k.wav tone-vbr.mp3
oggenc -Q -q 2 -t "Ton A" -a "storybox" -o tone.ogg tone44k.wav
opusenc --quiet --bitrate 64 --title "Ton A" tone48k.wav tone.opus
rm tone44k.wav

# Fuzzing seeds (seed/): real files of every format, a few KB each, with
# tags and an embedded cover where the format has them, so the fuzzers start
# from inputs that reach deep into each decoder and tag reader.
python3 - <<'PY'
import struct, zlib
def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
raw = b"\x00\xff\x80\x00" * 1
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
open("cover.png", "wb").write(png)
PY
sox -n -r 8000 -b 16 -c 2 seed/tone.wav synth 0.1 sine 440 sine 660 gain -6
sox -n -r 8000 -b 24 -c 3 seed/tone-extensible.wav synth 0.05 sine 440 sine 660 sine 880 gain -6
sox -n -r 8000 -b 16 -c 2 short.wav synth 0.3 sine 440 sine 660 gain -6
lame --silent -b 16 -m m --resample 16 --tt "Ton A" --ta "storybox" --tl "Seeds" --ti cover.png short.wav seed/tone.mp3
lame --silent -b 16 -m m --resample 16 -t --noreplaygain short.wav seed/tone-notag.mp3
flac -s -f --no-padding -b 256 -T "TITLE=Ton A" -T "ARTIST=storybox" --picture=cover.png -o seed/tone.flac seed/tone.wav
flac -s -f --ogg --no-padding -b 256 -T "TITLE=Ton A" -T "ARTIST=storybox" --picture=cover.png -o seed/tone.oga seed/tone.wav
oggenc -Q -q -1 -t "Ton A" -a "storybox" -o seed/tone.ogg short.wav
opusenc --quiet --bitrate 8 --title "Ton A" --picture cover.png short.wav seed/tone.opus
rm short.wav cover.png

# AAC (ffmpeg's native encoder, without noise substitution so that seeking
# tests can compare samples): ADTS, and M4A with tags and a cover; the
# seed M4B has three chapters too (Nero and a QuickTime chapter track).
sox -n -r 44100 -b 16 -c 2 tone44k.wav synth 2 sine 440 sine 660 gain -6
ffmpeg -hide_banner -loglevel error -y -i tone44k.wav -c:a aac -b:a 96k -aac_pns 0 tone.aac
ffmpeg -hide_banner -loglevel error -y -i tone44k.wav -c:a aac -b:a 96k -aac_pns 0 -metadata title="Ton A" -metadata artist=storybox -metadata album=Fixtures tone.m4a
rm tone44k.wav
python3 - <<'PY'
import struct, zlib
def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(b"\x00\xff\x80\x00")) + chunk(b"IEND", b"")
open("cover.png", "wb").write(png)
open("chapters.txt", "w").write(";FFMETADATA1\ntitle=Ton A\nartist=storybox\n" + "".join(
    "[CHAPTER]\nTIMEBASE=1/1000\nSTART=%d\nEND=%d\ntitle=Kapitel %d\n" % (i * 100, i * 100 + 100, i + 1) for i in range(3)))
PY
sox -n -r 8000 -b 16 -c 2 short.wav synth 0.3 sine 440 sine 660 gain -6
ffmpeg -hide_banner -loglevel error -y -i short.wav -c:a aac -b:a 16k seed/tone.aac
ffmpeg -hide_banner -loglevel error -y -i short.wav -i chapters.txt -i cover.png -map 0:a -map 2 -map_metadata 1 -map_chapters 1 \
	-c:a aac -b:a 16k -c:v copy -disposition:v attached_pic -f ipod seed/tone.m4b
rm short.wav cover.png chapters.txt
