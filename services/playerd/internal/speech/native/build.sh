#!/usr/bin/env bash
# Builds storybox-speak fully static from Debian's own libraries, plus the
# voice data the box ships, for each architecture in SPEECH_ARCHES (default
# amd64 and arm64):
#
#   OUT/<arch>/storybox-speak         the program (static, no libc needed)
#   OUT/<arch>/data/pico/             SVOX Pico lingware (PICO_LOCALES)
#   OUT/<arch>/data/espeak-ng-data/   espeak-ng data trimmed to ESPEAK_LANGS
#
# It installs nothing and needs no root. The machine's own architecture
# needs gcc and libc6-dev; another one its cross compiler and qemu-user-static
# for the smoke test (`build.sh --packages` lists them; the Makefile installs
# them for `make test` and the images). When one is missing it says which in
# one line and exits with status 3, so `make run` can go on without a voice.
#
# The speech libraries come from a private apt configuration (own sources
# and lists under CACHE) because libttspico is in the non-free component and
# another architecture's libraries are foreign packages; the system's apt
# setup is left alone. apt-get only downloads there, as whoever runs this.
# Downloaded .deb files stay in CACHE, so a re-run needs no network.
#
# usage: build.sh OUT [CACHE]
#        build.sh --packages    the Debian packages the build needs here
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ARCHES=${SPEECH_ARCHES:-"amd64 arm64"}
PICO_LOCALES=${PICO_LOCALES:-"de-DE en-GB en-US"}
ESPEAK_LANGS=${ESPEAK_LANGS:-"de en fr es it nl ru sv da no fi pl cs pt uk tr"}
HOST=$(dpkg --print-architecture 2>/dev/null || uname -m)
declare -A TRIPLET=([amd64]=x86_64-linux-gnu [arm64]=aarch64-linux-gnu)
declare -A QEMU=([amd64]=qemu-x86_64-static [arm64]=qemu-aarch64-static)

log() { echo "speech: $*" >&2; }

# packages prints the Debian packages that building ARCHES on this machine
# needs: the compiler for each and, for another architecture, qemu-user to
# run its smoke test.
packages() {
	local a p=(dpkg apt)
	for a in $ARCHES; do
		if [ "$a" = "$HOST" ]; then
			p+=(gcc libc6-dev)
		else
			p+=("gcc-${TRIPLET[$a]//_/-}" "libc6-dev-$a-cross" qemu-user-static)
		fi
	done
	printf '%s\n' "${p[@]}" | sort -u | tr '\n' ' '
}

for a in $ARCHES; do
	if [ -z "${TRIPLET[$a]:-}" ] || [ -z "${TRIPLET[$HOST]:-}" ]; then
		log "cannot build for $a on $HOST (known: ${!TRIPLET[*]})"
		exit 3
	fi
done
if [ "${1:-}" = --packages ]; then
	packages
	echo
	exit 0
fi

OUT=${1:?usage: build.sh OUT [CACHE]}
CACHE=${2:-$OUT/cache}

# ------------------------------------------------------------ host toolchain
need=()
for p in $(packages); do
	dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if ((${#need[@]})); then
	log "not built for ${ARCHES// /, }: missing Debian packages ${need[*]}"
	exit 3
fi
mkdir -p "$OUT" "$CACHE"
OUT=$(cd "$OUT" && pwd)
CACHE=$(cd "$CACHE" && pwd)

# ------------------------------------------------------------ Debian packages
DEBS=$CACHE/debs
mkdir -p "$DEBS"
wanted=(libttspico-data:all "espeak-ng-data:$HOST")
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
	archlist=$(printf '%s\n' "$HOST" $ARCHES | sort -u | paste -sd,)
	# Mirror and keyring come from the system's own sources; only the
	# component list and architectures differ.
	{
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -e "$f" ] || continue
			awk -v archlist="$archlist" '
				function flush() {
					if (types ~ /(^| )deb( |$)/ && uris != "" && suites != "")
						for (i = 1; i <= split(uris, u, " "); i++)
							for (j = 1; j <= split(suites, s, " "); j++)
								printf "deb [arch=%s%s] %s %s main non-free\n", archlist, (key != "" ? " signed-by=" key : ""), u[i], s[j]
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
			awk -v archlist="$archlist" '$1 == "deb" && $2 !~ /^\[/ && $2 ~ /debian/ { printf "deb [arch=%s] %s %s main non-free\n", archlist, $2, $3 }' "$f"
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
		APT::Architecture "$HOST";
		APT::Architectures { $(printf '"%s"; ' ${archlist//,/ })};
		APT::Sandbox::User "$(id -un)";
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
# sources prints what the program for $1 and its data are built from: each
# Debian package with its version and source package, then their copyright
# files. eSpeak NG is GPL-3.0-or-later, so whoever has the program must be
# able to find its corresponding source; the image carries this file beside
# the voice data (NOTICE.md, section 6, says how to fetch the sources).
sources() {
	local a=$1 w name arch deb libc=libc6-dev
	[ "$a" = "$HOST" ] || libc=libc6-dev-$a-cross
	echo "storybox-speak ($a) is storybox-speak.c from storybox's repository,"
	echo "statically linked with these Debian packages' libraries; its data is"
	echo "taken from espeak-ng-data and libttspico-data."
	echo
	echo "package version source-package source-version"
	for w in "libespeak-ng-dev:$a" "libttspico-dev:$a" "libsonic-dev:$a" "espeak-ng-data:$HOST" libttspico-data:all; do
		name=${w%%:*} arch=${w##*:}
		deb=$(compgen -G "$DEBS/${name}_*_${arch}.deb" | sort -V | tail -1)
		dpkg-deb -W --showformat '${Package} ${Version} ${source:Package} ${source:Version}\n' "$deb"
	done
	dpkg-query -W --showformat '${Package} ${Version} ${source:Package} ${source:Version}\n' "$libc"
	echo
	echo "Fetch a source package with: apt-get source SOURCE-PACKAGE=SOURCE-VERSION"
	echo "(Debian $(cat /etc/debian_version 2>/dev/null || echo '?'); every version is also on snapshot.debian.org)."
	local f
	for f in "$ROOT/$a/usr/share/doc"/*/copyright "$ROOT/all/usr/share/doc"/*/copyright "$ROOT/data/usr/share/doc"/*/copyright; do
		[ -f "$f" ] || continue
		echo
		echo "==== $(basename "$(dirname "$f")"): debian/copyright"
		echo
		cat "$f"
	done
}

for a in $ARCHES; do
	cc=gcc
	[ "$a" = "$HOST" ] || cc=${TRIPLET[$a]}-gcc
	d=$OUT/$a
	rm -rf "$d"
	mkdir -p "$d/data/pico" "$d/data/espeak-ng-data"
	lib=$ROOT/$a/usr/lib/${TRIPLET[$a]}
	"$cc" -static -O2 -Wall -Wextra -Werror -Wno-unused-parameter \
		-I"$ROOT/$a/usr/include" -o "$d/storybox-speak" "$HERE/storybox-speak.c" \
		"$lib/libttspico.a" "$lib/libespeak-ng.a" "$lib/libsonic.a" -lm -lpthread
	"${cc%gcc}strip" "$d/storybox-speak" 2>/dev/null || strip "$d/storybox-speak" 2>/dev/null || true

	sources "$a" >"$d/data/SOURCES.txt"

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
# program of another architecture runs under qemu-user and must produce the
# same bytes.
ref=
for a in $ARCHES; do
	run=()
	[ "$a" = "$HOST" ] || run=("${QEMU[$a]}")
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
