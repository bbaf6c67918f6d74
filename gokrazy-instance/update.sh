#!/usr/bin/env bash
# update.sh INSTANCE [BOX]
#
# Over-the-air update of a running box with `gok update`: gok builds the
# instance, uploads the new root file system to the inactive root partition
# and the boot partition, switches the A/B root, reboots the box and waits for
# it to come back. /perm (library, settings, positions) is not touched.
#
# BOX is the host name or address of the box; without it gok uses the
# instance's Hostname ("storybox"), which resolves on most home networks
# through the router's DHCP names. The update goes to the gokrazy web
# interface on port 9080 with the password that build-image.sh generated.
#
# Environment: GOK, GO, SECRETS_DIR as in build-image.sh.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
instance=${1:?usage: update.sh INSTANCE [BOX]}
box=${2:-}
GOK=${GOK:-$root/bin/gok}
GO=${GO:-go}
SECRETS_DIR=${SECRETS_DIR:-$here/.secrets}

die() { echo "update: $*" >&2; exit 1; }
[ -f "$here/$instance/config.json" ] || die "no instance $here/$instance"
[ -x "$GOK" ] || die "gok not found at $GOK (run: make gok)"
[ -s "$SECRETS_DIR/gokrazy/http-password.txt" ] ||
	die "no update password in $SECRETS_DIR: the box was flashed from another checkout; copy that checkout's gokrazy-instance/.secrets here"
export GOENV=${GOENV:-$($GO env GOENV)}
export XDG_CONFIG_HOME=$SECRETS_DIR

target=$instance
if [ -n "$box" ]; then
	# gok takes the update target only from config.json, so a git-ignored
	# copy of the instance gets Update.Hostname. It sits next to the real
	# one, so the builddir's relative replace paths still reach the repo.
	command -v jq >/dev/null || die "jq missing (Debian: jq)"
	target=.update-$instance
	rm -rf "${here:?}/$target"
	mkdir "$here/$target"
	trap 'rm -rf "${here:?}/$target"' EXIT
	cp -r "$here/$instance/builddir" "$here/$target/"
	jq --arg box "$box" '.Update.Hostname = $box' "$here/$instance/config.json" >"$here/$target/config.json"
	# Relative ExtraFilePaths resolve from the instance directory, which is
	# at the same depth, so they stay valid.
fi

"$GOK" --parent_dir "$here" -i "$target" update 2>&1 | sed -E 's#(gokrazy:)[^@[:space:]]+@#\1****@#g'
