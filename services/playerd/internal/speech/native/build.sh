#!/usr/bin/env bash
# Builds storybox-speak fully static for amd64 and arm64 from Debian's own
# libraries, plus the voice data the box ships:
#
#   OUT/<arch>/storybox-speak         the program (static, no libc needed)
#   OUT/<arch>/data/pico/             SVOX Pico lingware (PICO_LOCALES)
#   OUT/<arch>/data/espeak-ng-data/   espeak-ng data trimmed to ESPEAK_LANGS
#
# Debian packages come from a private apt configuration (own sources and
# lists under CACHE) because libttspico is in the non-free component and the
# arm64 libraries are foreign-architecture packages; the system's apt setup is
# left alone. Downloaded .deb files stay in CACHE, so a re-run needs no network.
#
# usage: build.sh OUT [CACHE]
set -euo pipefail

OUT=${1:?usage: build.sh OUT [CACHE]}
CACHE=${2:-$OUT/cache}
HERE=$(cd "$(dirname "$0")" && pwd)
ARCHES=${SPEECH_ARCHES:-"amd64 arm64"}
PICO_LOCALES=${PICO_LOCALES:-"de-DE en-GB en-US"}
ESPEAK_LANGS=${ESPEAK_LANGS:-"de en fr es it nl ru sv da no fi pl cs pt uk tr"}
mkdir -p "$OUT" "$CACHE"
OUT=$(cd "$OUT" && pwd)
CACHE=$(cd "$CACHE" && pwd)

log() { echo "speech: $*" >&2; }

# ------------------------------------------------------------ host toolchain
need=()
for p in gcc libc6-dev dpkg gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static ca-certificates; do
	dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if ((${#need[@]})); then
	log "installing ${need[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# ------------------------------------------------------------ Debian packages
DEBS=$CACHE/debs
mkdir -p "$DEBS"
wanted=(libttspico-data:all espeak-ng-data:amd64)
for a in $ARCHES; do
	wanted+=(libttspico-dev:$a libespeak-ng-dev:$a libsonic-dev:$a)
done
missing=()
for w in "${wanted[@]}"; do
	name=${w%%:*} arch=${w##*:}
	compgen -G "$DEBS/${name}_*_${arch}.deb" >/dev/null || missing+=("$w")
done

if ((${#missing[@]})); then
	APT=$CACHE/apt
	mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/parts" "$APT/prefs"
	: >"$APT/status"
	# Mirror and keyring come from the system's own sources; only the
	# component list and architectures differ.
	{
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -e "$f" ] || continue
			awk '
				function flush() {
					if (types ~ /(^| )deb( |$)/ && uris != "" && suites != "")
						for (i = 1; i <= split(uris, u, " "); i++)
							for (j = 1; j <= split(suites, s, " "); j++)
								printf "deb [arch=amd64,arm64%s] %s %s main non-free\n", (key != "" ? " signed-by=" key : ""), u[i], s[j]
					types = uris = suites = key = ""
				}
				/^[[:space:]]*$/ { flush(); next }
				/^Types:/ { sub(/^Types:[[:space:]]*/, ""); types = $0 }
				/^URIs:/ { sub(/^URIs:[[:space:]]*/, ""); uris = $0 }
				/^Suites:/ { sub(/^Suites:[[:space:]]*/, ""); suites = $0 }
				/^Signed-By:/ { sub(/^Signed-By:[[:space:]]*/, ""); key = $0 }
				END { flush() }
			' "$f"
		done
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
			[ -e "$f" ] || continue
			awk '$1 == "deb" && $2 !~ /^\[/ && $2 ~ /debian/ { printf "deb [arch=amd64,arm64] %s %s main non-free\n", $2, $3 }' "$f"
		done
	} | grep -E '/debian(-security)?/? ' | sort -u >"$APT/sources.list"
	if ! [ -s "$APT/sources.list" ]; then
		log "found no Debian archive in /etc/apt sources"
		exit 1
	fi
	cat >"$APT/apt.conf" <<-EOF
		Dir::Etc::SourceList "$APT/sources.list";
		Dir::Etc::SourceParts "$APT/parts";
		Dir::Etc::PreferencesParts "$APT/prefs";
		Dir::State::Lists "$APT/lists";
		Dir::State::status "$APT/status";
		Dir::Cache "$APT/cache";
		APT::Architecture "amd64";
		APT::Architectures { "amd64"; "arm64"; };
		APT::Sandbox::User "root";
	EOF
	export APT_CONFIG=$APT/apt.conf
	log "downloading ${missing[*]}"
	apt-get update -qq
	(cd "$DEBS" && apt-get download -qq "${missing[@]}")
fi

# -------------------------------------------------------------------- extract
ROOT=$CACHE/root
rm -rf "$ROOT"
mkdir -p "$ROOT"
for w in "${wanted[@]}"; do
	name=${w%%:*} arch=${w##*:}
	dest=$ROOT/$arch
	[ "$name" = espeak-ng-data ] && dest=$ROOT/data
	mkdir -p "$dest"
	deb=$(compgen -G "$DEBS/${name}_*_${arch}.deb" | sort -V | tail -1)
	dpkg-deb -x "$deb" "$dest"
done

# ---------------------------------------------------------------------- build
declare -A CC=([amd64]=gcc [arm64]=aarch64-linux-gnu-gcc)
declare -A TRIPLET=([amd64]=x86_64-linux-gnu [arm64]=aarch64-linux-gnu)
for a in $ARCHES; do
	d=$OUT/$a
	rm -rf "$d"
	mkdir -p "$d/data/pico" "$d/data/espeak-ng-data"
	lib=$ROOT/$a/usr/lib/${TRIPLET[$a]}
	"${CC[$a]}" -static -O2 -Wall -Wextra -Werror -Wno-unused-parameter \
		-I"$ROOT/$a/usr/include" -o "$d/storybox-speak" "$HERE/storybox-speak.c" \
		"$lib/libttspico.a" "$lib/libespeak-ng.a" "$lib/libsonic.a" -lm -lpthread
	"${CC[$a]%gcc}strip" "$d/storybox-speak" 2>/dev/null || strip "$d/storybox-speak" 2>/dev/null || true

	for loc in $PICO_LOCALES; do
		cp "$ROOT/all/usr/share/pico/lang/${loc}"_*.bin "$d/data/pico/"
	done
	# espeak-ng-data is the same for every little-endian architecture.
	src=$(echo "$ROOT"/data/usr/lib/*/espeak-ng-data)
	cp -r "$src"/{phondata,phonindex,phontab,intonations,lang} "$d/data/espeak-ng-data/"
	mkdir -p "$d/data/espeak-ng-data/voices"
	cp -r "$src/voices/!v" "$d/data/espeak-ng-data/voices/"
	for l in $ESPEAK_LANGS; do
		cp "$src/${l}_dict" "$d/data/espeak-ng-data/"
	done
done

# ---------------------------------------------------------------- smoke test
# Every built program must speak German (Pico) and Russian (espeak-ng); the
# arm64 program runs under qemu-user and must produce the same bytes.
ref=
for a in $ARCHES; do
	run=()
	[ "$a" = arm64 ] && [ "$(uname -m)" != aarch64 ] && run=(qemu-aarch64-static)
	for lang in de ru; do
		wav=$OUT/$a/smoke-$lang.wav
		echo "Hallo, hier spricht die Geschichtenbox. Привет." |
			"${run[@]}" "$OUT/$a/storybox-speak" -d "$OUT/$a/data" -l $lang >"$wav"
		size=$(stat -c %s "$wav")
		if [ "$size" -lt 20000 ] || [ "$(head -c 4 "$wav")" != RIFF ]; then
			log "$a $lang: bad output ($size bytes)"
			exit 1
		fi
		sum=$(sha256sum <"$wav")
		if [ "$lang" = de ]; then
			if [ -n "$ref" ] && [ "$sum" != "$ref" ]; then
				log "$a: output differs from the first architecture's"
				exit 1
			fi
			ref=$sum
		fi
		rm -f "$wav"
	done
	log "built $OUT/$a/storybox-speak ($(stat -c %s "$OUT/$a/storybox-speak") bytes, data $(du -sh "$OUT/$a/data" | cut -f1))"
done
