# webui.sh: sourced by build-image.sh, update.sh and the image tests.
#
# gokrazy's web interface and update API (the "web UI") speak TLS only:
# config.json sets Update.UseTLS "self-signed" and Update.HTTPSPort 9443; the
# plain-HTTP port 9080 (Update.HTTPPort) answers every request with a
# redirect to https://<host>:9443/ and reads nothing else.
#
# The certificate is made here, once per instance host name, next to the
# update password in SECRETS_DIR (gok reads both from
# $XDG_CONFIG_HOME/gokrazy, i.e. SECRETS_DIR/gokrazy/hosts/<Hostname>/
# cert.pem and key.pem), and gok puts it into every root file system it
# builds. Every client here pins its public key: a box that shows another
# key is refused during the TLS handshake, before the request, and so before
# the password, is sent. Names and dates are not checked (curl -k): the pin
# is the identity, a box is reached by any name or address, and a box on a
# shelf must stay updatable after any date.
#
# Callers set SECRETS_DIR and here (the gokrazy-instance directory).

# webui_hostname INSTANCE: the instance's Hostname from its config.json.
webui_hostname() {
	jq -er '.Hostname' "$here/$1/config.json"
}

# webui_cert INSTANCE: the path of the instance's web UI certificate.
webui_cert() {
	local host
	host=$(webui_hostname "$1") || return 1
	echo "$SECRETS_DIR/gokrazy/hosts/$host/cert.pem"
}

# webui_ensure_cert INSTANCE: makes the certificate and its key once (ECDSA
# P-256, 100 years, the host name and <name>.local as names); later calls
# keep them, so every image and update of the instance carries the same one.
webui_ensure_cert() {
	local host dir
	host=$(webui_hostname "$1") || return 1
	dir=$SECRETS_DIR/gokrazy/hosts/$host
	[ -s "$dir/cert.pem" ] && [ -s "$dir/key.pem" ] && return 0
	mkdir -p "$dir"
	chmod 700 "$SECRETS_DIR" "$SECRETS_DIR/gokrazy" "$SECRETS_DIR/gokrazy/hosts" "$dir"
	(
		umask 077
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 36500 \
			-subj "/O=storybox/CN=$host" -addext "subjectAltName=DNS:$host,DNS:$host.local" \
			-addext "extendedKeyUsage=serverAuth" \
			-keyout "$dir/key.pem.tmp" -out "$dir/cert.pem.tmp" 2>/dev/null
	) || { rm -f "$dir/key.pem.tmp" "$dir/cert.pem.tmp"; return 1; }
	chmod 644 "$dir/cert.pem.tmp"
	mv "$dir/key.pem.tmp" "$dir/key.pem"
	mv "$dir/cert.pem.tmp" "$dir/cert.pem"
	echo "webui: made the web interface certificate $dir/cert.pem (SHA-256 $(webui_fingerprint "$dir/cert.pem")); keep it with the password"
}

# webui_pin CERT: curl's --pinnedpubkey form of the certificate's public key.
webui_pin() {
	local b64
	b64=$(openssl x509 -in "$1" -pubkey -noout | openssl pkey -pubin -outform DER |
		openssl dgst -sha256 -binary | base64) || return 1
	[ -n "$b64" ] || return 1
	echo "sha256//$b64"
}

# webui_fingerprint CERT: the certificate's SHA-256 fingerprint, as a
# browser shows it.
webui_fingerprint() {
	openssl x509 -in "$1" -noout -fingerprint -sha256 | sed 's/^.*=//'
}

# webui_curl PIN PASSWORD_FILE URL [CURL ARGS...]: one request to the web
# UI. https only (--proto), the key pinned, no redirects followed, and the
# password handed to curl on a pipe, never on its command line (which every
# user of the machine can read).
webui_curl() {
	local pin=$1 pwfile=$2 url=$3
	shift 3
	[[ $url == https://* ]] || { echo "webui: refusing $url: the web interface is only spoken to over https" >&2; return 2; }
	curl -sS --proto =https -k --pinnedpubkey "$pin" \
		-K <(printf 'user = "gokrazy:%s"\n' "$(cat "$pwfile")") "$@" "$url"
}

# webui_check INSTANCE HTTP_PORT TLS_PORT: what a parent's browser meets,
# through forwards of the box's 9080 (HTTP_PORT) and 9443 (TLS_PORT) on
# 127.0.0.1: plain HTTP only redirects to https on 9443 and serves nothing
# else, not even a password prompt; over TLS the box shows the pinned
# certificate, asks for the password (401) and with it serves the status
# page, which this prints. A pin of another key is refused. Returns 1 with
# the reason on stderr.
webui_check() {
	local instance=$1 hport=$2 tport=$3 cert pin out code loc rc=0
	cert=$(webui_cert "$instance") && pin=$(webui_pin "$cert") || { echo "no certificate for $instance" >&2; return 1; }
	out=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' --max-time 10 "http://127.0.0.1:$hport/update/features") || true
	read -r code loc <<<"$out"
	[ "$code" = 302 ] && [ "$loc" = "https://127.0.0.1:9443/update/features" ] ||
		{ echo "plain HTTP on 9080: want a redirect to https://127.0.0.1:9443/update/features, got: $out" >&2; return 1; }
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -k --pinnedpubkey "$pin" "https://127.0.0.1:$tport/") || true
	[ "$code" = 401 ] || { echo "https on 9443 without the password: want 401, got $code" >&2; return 1; }
	webui_curl "sha256//$(head -c 32 /dev/urandom | base64)" "$SECRETS_DIR/gokrazy/http-password.txt" \
		"https://127.0.0.1:$tport/" --max-time 10 -o /dev/null 2>/dev/null || rc=$?
	[ "$rc" = 90 ] || { echo "https on 9443 with another key pinned: want curl's pin refusal (90), got exit $rc" >&2; return 1; }
	webui_curl "$pin" "$SECRETS_DIR/gokrazy/http-password.txt" "https://127.0.0.1:$tport/" --max-time 20 --fail ||
		{ echo "https on 9443 with the pinned certificate and the password did not answer 200" >&2; return 1; }
}
