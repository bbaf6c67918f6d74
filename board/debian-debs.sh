#!/usr/bin/env bash
# debian-debs.sh CACHE [--deps] PACKAGE...
#
# Downloads Debian's arm64 (or architecture "all") .deb files of PACKAGE...
# from trixie (components main and non-free-firmware) into CACHE/debs and
# prints their paths, one a line. With --deps it takes their dependencies
# too (recursively, Depends and Pre-Depends only); the resolved list is kept
# in CACHE so a later run needs no network.
#
# Nothing is installed, and the machine's own apt setup stays untouched: a
# private APT configuration under CACHE/apt points at the archive with
# signed-by the debian-archive-keyring, so apt-get only accepts index files
# whose Release signature verifies, and .debs whose SHA-256 matches those
# indexes. A .deb already in CACHE/debs is used as it is (delete CACHE to
# take Debian's newest).
set -euo pipefail
cache=${1:?usage: debian-debs.sh CACHE [--deps] PACKAGE...}
shift
deps=0
if [ "${1:-}" = --deps ]; then
	deps=1
	shift
fi
[ $# -gt 0 ] || { echo "debian-debs: no packages named" >&2; exit 2; }
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
mkdir -p "$cache/debs"
cache=$(cd "$cache" && pwd)
apt=$cache/apt

ready=0
setup() {
	[ "$ready" = 0 ] || return 0
	[ -s "$keyring" ] || { echo "debian-debs: $keyring missing (Debian: debian-archive-keyring)" >&2; exit 1; }
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/etc/preferences.d" "$apt/etc/apt.conf.d" "$apt/etc/sources.list.d"
	: >"$apt/status"
	echo "deb [arch=arm64 signed-by=$keyring] http://deb.debian.org/debian trixie main non-free-firmware" >"$apt/etc/sources.list"
	cat >"$apt/apt.conf" <<CONF
Dir::Etc::SourceList "$apt/etc/sources.list";
Dir::Etc::SourceParts "$apt/etc/sources.list.d";
Dir::Etc::Preferences "$apt/etc/preferences";
Dir::Etc::PreferencesParts "$apt/etc/preferences.d";
Dir::Etc::Parts "$apt/etc/apt.conf.d";
Dir::State::Lists "$apt/lists";
Dir::State::status "$apt/status";
Dir::Cache "$apt/cache";
APT::Architecture "arm64";
APT::Architectures { "arm64"; };
APT::Sandbox::User "root";
CONF
	export APT_CONFIG=$apt/apt.conf
	apt-get update -qq
	ready=1
}

cached() {
	compgen -G "$cache/debs/${1}_*_arm64.deb" || compgen -G "$cache/debs/${1}_*_all.deb" || true
}

want=("$@")
if [ "$deps" = 1 ]; then
	list=$cache/deps-$(printf '%s+' "$@" | sed 's/+$//').txt
	if [ ! -s "$list" ]; then
		setup
		# Column 0 holds the packages; virtual ones come as <name>.
		apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
			--no-replaces --no-enhances "$@" | grep -E '^[a-z0-9]' | LC_ALL=C sort -u >"$list.tmp"
		mv "$list.tmp" "$list"
	fi
	mapfile -t want <"$list"
fi

for p in "${want[@]}"; do
	if [ -z "$(cached "$p")" ]; then
		setup
		(cd "$cache/debs" && apt-get download -qq "$p")
	fi
	f=$(cached "$p" | head -1)
	[ -n "$f" ] || { echo "debian-debs: $p did not download" >&2; exit 1; }
	echo "$f"
done
