# storybox: `make run` starts the box on this machine, `make test` runs what CI runs.
SHELL := /bin/bash
.DEFAULT_GOAL := help

GO          ?= go
BIN         := $(CURDIR)/bin
RUN_DIR     := $(CURDIR)/.run
STATICCHECK_VERSION := v0.7.0
# Debian's name for this machine's architecture (the speech program is built
# per architecture); Go's for amd64 and arm64 is the same.
HOST_ARCH   := $(shell dpkg --print-architecture 2>/dev/null || $(GO) env GOHOSTARCH)

# Debian packages, by what needs them. `make run` needs none: Go builds the
# box, and the voice is built only where its compiler already is. Each area
# names its own list, installs it in its targets (`apt-install`) and appends
# it to APT_PACKAGES, everything `make test` needs, which `make deps`
# installs up front (CI starts from a fresh machine).
APT_PACKAGES := ca-certificates

# The admin page's test drives Debian's chromium headless
# (services/playerd/adminpage_e2e_test.go); a font so its screenshots have
# text. `unit` requires the browser, so a missing one fails instead of
# skipping the test.
ADMINUI_PACKAGES := chromium fonts-dejavu-core
APT_PACKAGES += $(ADMINUI_PACKAGES)

# The AAC decoder's tests make their corpus with Debian's ffmpeg (its
# native AAC encoder) and compare with its decoding; ffmpeg is a test oracle
# and never ships. `unit` requires it, so a missing one fails.
AAC_PACKAGES := ffmpeg
APT_PACKAGES += $(AAC_PACKAGES)

# The loudness meter's corpus test makes MP3, FLAC, AAC and Opus files with
# ffmpeg and compares with its ebur128 filter (STORYBOX_REQUIRE_FFMPEG).
LOUDNESS_PACKAGES := ffmpeg
APT_PACKAGES += $(LOUDNESS_PACKAGES)

# apt-install installs the packages of $(1) that are missing. Only root
# installs (CI); anyone else is told the command to run: no target calls
# sudo.
define apt-install
	@missing=""; for p in $(sort $(1)); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ]; then echo "missing Debian packages; install them with: sudo apt-get install --no-install-recommends$$missing"; exit 1; fi; \
		echo "installing Debian packages:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
endef

.PHONY: help
help:
	@echo "make run    start the box here: API on http://127.0.0.1:8090, demo media, simulated battery board"
	@echo "make test   everything CI runs"
	@echo "make image  flashable Raspberry Pi SD-card image (build/image/storybox.img);"
	@echo "            WIFI_SSID=... WIFI_PSK=... [WIFI_COUNTRY=DE] puts a Wi-Fi network on it (docs/wifi.md)"
	@echo "make vm     the box for amd64 in qemu, API on http://127.0.0.1:8090"
	@echo "make update over-the-air update of a running box (BOX=host-or-ip)"
	@echo "make contract  docs/openapi.yaml linted and tested against playerd (part of make test)"

# ---------------------------------------------------------------- dependencies
# Everything `make test` needs (APT_PACKAGES is complete once the whole
# Makefile is read, which is when recipes run).
.PHONY: deps
deps:
	$(call apt-install,$(APT_PACKAGES))
	@test -x $(BIN)/staticcheck || GOBIN=$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# ---------------------------------------------------------------------- build
.PHONY: build
build:
	CGO_ENABLED=0 $(GO) build -o $(BIN)/ ./services/playerd ./services/hatd ./services/netd ./services/syncd

# ------------------------------------------------------------------------ run
# Needs Go only and installs nothing. -fb none: a development machine's
# /dev/fb0 is its own console (the screenshot endpoint still draws).
.PHONY: run
run: build run-voice
	@mkdir -p $(RUN_DIR)/data $(RUN_DIR)/media
	@test -n "$$(ls -A $(RUN_DIR)/media)" || $(GO) run ./services/playerd/cmd/demomedia $(RUN_DIR)/media
	@# hatd simulates the battery board; both stop on Ctrl-C (a background job
	@# ignores SIGINT, so the trap ends it).
	@$(BIN)/hatd -sim -socket $(RUN_DIR)/hatd.sock & hatd=$$!; \
	trap 'kill $$hatd 2>/dev/null; wait $$hatd 2>/dev/null' EXIT INT TERM; \
	$(BIN)/playerd -listen 127.0.0.1:8090 -media $(RUN_DIR)/media -data $(RUN_DIR)/data -output null -hat $(RUN_DIR)/hatd.sock \
		-fb none -speech-program $(SPEECH_DIR)/$(HOST_ARCH)/storybox-speak -speech-data $(SPEECH_DIR)/$(HOST_ARCH)/data $(MPRIS_FLAG)

# On a desktop with a session bus the box joins its media controls (media
# keys, the sound menu, playerctl): MPRIS, docs/api.md.
MPRIS_FLAG := $(if $(or $(DBUS_SESSION_BUS_ADDRESS),$(wildcard /run/user/$(shell id -u)/bus)),-mpris session)

# ---------------------------------------------------------------------- mpris
# MPRIS against a private dbus-daemon, driven by Debian's playerctl
# (services/playerd/mpris_e2e_test.go, internal/mpris). `unit` runs these
# too and skips them where the programs are missing; here they must run.
MPRIS_PACKAGES := dbus playerctl
APT_PACKAGES   += $(MPRIS_PACKAGES)
.PHONY: test-mpris bench-events
test-mpris:
	$(call apt-install,$(MPRIS_PACKAGES))
	STORYBOX_REQUIRE_DBUS=1 $(GO) test -race -count=1 ./services/playerd/internal/mpris/
	STORYBOX_REQUIRE_DBUS=1 $(GO) test -race -count=1 -run '^TestMPRIS' ./services/playerd/

integration: test-mpris

# The event feed: events per second to 1, 10 and 100 readers; through
# HTTP to 100 event streams; the CPU an idle stream costs per heartbeat.
bench-events:
	$(GO) test -run '^$$' -bench . -benchtime 2s ./services/playerd/internal/events/
	$(GO) test -run '^$$' -bench 'EventStreams|IdleStream' -benchtime 2s ./services/playerd/internal/api/

# ----------------------------------------------------------------------- test
# `integration` collects the slower tests (VMs, image boot, speech programs);
# each area adds its target as a prerequisite with its own `integration: x` line.
.PHONY: test check unit integration
test: deps check unit integration
	@echo "make test: all passed"

check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags soaktest ./services/playerd/
	$(BIN)/staticcheck ./...
	$(BIN)/staticcheck -tags soaktest ./services/playerd/
	$(GO) run ./tools/licences -check

# NOTICE.md: storybox's licence and every third-party component the image
# ships with its licence (tools/licences: the Go modules as gok builds the
# image's programs, the kernel and firmware packages, the speech program).
# `check` fails when it is out of date or a module's licence is unknown or
# not on the allow list; this target writes it anew. playerd embeds it
# (/api/licenses), so the image carries it.
.PHONY: licences
licences:
	$(GO) run ./tools/licences

# The MP3 decoder's accuracy and gapless tests make their files with
# Debian's lame and check them against mpg123 (internal/decode/mp3);
# `unit` requires both.
MP3_PACKAGES := lame mpg123
APT_PACKAGES += $(MP3_PACKAGES)

# The FLAC decoder's bit-exact and seek tests make their corpus with
# Debian's flac (internal/decode/flac); `unit` requires it.
FLAC_PACKAGES := flac
APT_PACKAGES += $(FLAC_PACKAGES)

# The timeout is a hang guard per package: playerd's end-to-end package
# takes 6-7 minutes on two quiet cores under -race, too near go test's
# default of 10 minutes once anything else runs beside it.
unit:
	STORYBOX_REQUIRE_CHROMIUM=1 STORYBOX_REQUIRE_NETNS=1 STORYBOX_REQUIRE_FFMPEG=1 STORYBOX_REQUIRE_MP3TOOLS=1 STORYBOX_REQUIRE_FLAC=1 $(GO) test -race -count=1 -timeout 25m ./...

integration:

# ------------------------------------------------------------------ household
# The household of boxes (docs/household.md): Syncthing built from the
# image's pin, boxes (netd, syncd with Syncthing, playerd) in network
# namespaces on a bridge the tests make and remove, never on this machine's
# own network. Two boxes through links cut and programs killed mid-transfer
# (services/syncd), four through pairing, uploads, cards put on readers, a
# 100 MB transfer cut, a full media disk (a tmpfs), deletions, an unpaired
# and a removed box (services/playerd TestHouseholdOfThree). Needs root,
# iproute2 (ip, tc). A few minutes.
HOUSEHOLD_PACKAGES := iproute2
APT_PACKAGES       += $(HOUSEHOLD_PACKAGES)
.PHONY: test-household
test-household:
	$(call apt-install,$(HOUSEHOLD_PACKAGES))
	STORYBOX_HOUSEHOLD=1 STORYBOX_REQUIRE_NETNS=1 $(GO) test -race -count=1 -timeout 20m ./services/syncd/...
	STORYBOX_HOUSEHOLD=1 STORYBOX_REQUIRE_NETNS=1 $(GO) test -count=1 -timeout 20m -run '^TestHousehold' ./services/playerd/

integration: test-household

# ----------------------------------------------------------------------- soak
# Months on a shelf in minutes: the real playerd (its soak build, -tags
# soaktest, which puts a card reader and a screen reached over a socket in
# place of the machine's; never in the image) with hatd -sim and netd, under
# a seeded mix of everything a household does, SIGKILLs and a radio station
# that drops included (services/playerd/cmd/soak, docs/reliability.md). It
# checks every answer, what survives each kill, the pollers' status p99 and
# the trends of goroutines, open files, heap and RSS. `make test` runs it for
# SOAK (3 minutes, about 3.5 with the builds); `make soak SOAK=2h` runs
# longer and writes its figures and plots into docs/reliability.md.
# SOAK_SEED picks the mix (the same seed, the same choices). Needs root: the
# station and netd live in network namespaces (iproute2). Results, the
# daemons' logs and the state each kill left: build/soak.
SOAK          ?= 3m
SOAK_SEED     ?= 1
SOAK_PACKAGES := iproute2
APT_PACKAGES  += $(SOAK_PACKAGES)
SOAK_DOCS      = $(if $(filter command% environment%,$(origin SOAK)),-docs docs/reliability.md)
.PHONY: soak
soak: speech
	$(call apt-install,$(SOAK_PACKAGES))
	CGO_ENABLED=0 $(GO) build -tags soaktest -o $(BIN)/soak/playerd ./services/playerd
	CGO_ENABLED=0 $(GO) build -o $(BIN)/ ./services/hatd ./services/netd
	$(GO) run ./services/playerd/cmd/soak -seed $(SOAK_SEED) -duration $(SOAK) -out build/soak \
		-playerd $(BIN)/soak/playerd -hatd $(BIN)/hatd -netd $(BIN)/netd -speech $(SPEECH_DIR)/$(HOST_ARCH) $(SOAK_DOCS)

integration: soak

# ---------------------------------------------------------------- flood / load
# A connection flood against playerd on loopback (services/playerd/cmd/flood):
# 10,000 keep-alive connections from 127.0.0.2 while 127.0.0.3-9 ask for the
# status; prints status latency before/while/after and playerd's RSS idle, at
# the peak and for 3 minutes after. About 4 minutes; FLOOD_FLAGS are passed to
# the tool (e.g. -conns 2000 -settle 30s); FLOOD_PLAYERD measures another build
# (an older commit's, for before/after figures). The pass/fail check is
# TestFloodFromOneAddress, part of `unit`.
FLOOD_PORT    ?= 18090
FLOOD_FLAGS   ?=
FLOOD_PLAYERD ?= $(BIN)/playerd
.PHONY: bench-flood
bench-flood: build
	@mkdir -p $(RUN_DIR)/flood/data $(RUN_DIR)/flood/media
	@test -n "$$(ls -A $(RUN_DIR)/flood/media)" || $(GO) run ./services/playerd/cmd/demomedia $(RUN_DIR)/flood/media
	$(GO) build -o $(BIN)/flood ./services/playerd/cmd/flood
	@$(FLOOD_PLAYERD) -listen 127.0.0.1:$(FLOOD_PORT) -media $(RUN_DIR)/flood/media -data $(RUN_DIR)/flood/data \
		-output null -fb none -touch none -speech-program none 2>$(RUN_DIR)/flood/playerd.log & pid=$$!; \
	trap 'kill $$pid 2>/dev/null; wait $$pid 2>/dev/null' EXIT INT TERM; \
	for i in $$(seq 100); do curl -sf http://127.0.0.1:$(FLOOD_PORT)/api/health >/dev/null && break; kill -0 $$pid || exit 1; sleep 0.1; done; \
	$(BIN)/flood -target 127.0.0.1:$(FLOOD_PORT) -pid $$pid $(FLOOD_FLAGS)

# ------------------------------------------------------------------ contract
# docs/openapi.yaml checked by tools written elsewhere (tools/contract/run.sh):
# Redocly's OpenAPI linter, then the contract and fuzz tests Portman generates
# from the document, run by Newman against the real playerd on loopback.
# Node.js and npm come from Debian where the machine has none; the npm
# packages are pinned exactly (package-lock.json) and installed into
# tools/contract/node_modules once, and again only when the lock file
# changes (offline after that). 25-90 s (load), the first install
# about a minute more.
CONTRACT_DIR := tools/contract
APT_PACKAGES += $(if $(shell command -v node 2>/dev/null),,nodejs npm)
.PHONY: contract
contract: build $(CONTRACT_DIR)/node_modules/.installed
	bash $(CONTRACT_DIR)/run.sh $(BIN)/playerd build/contract

$(CONTRACT_DIR)/node_modules/.installed: $(CONTRACT_DIR)/package.json $(CONTRACT_DIR)/package-lock.json
	$(if $(shell command -v node 2>/dev/null),,$(call apt-install,nodejs npm))
	cd $(CONTRACT_DIR) && timeout 600 npm ci --no-audit --no-fund --prefer-offline
	@touch $@

integration: contract

# bench: the decoders alone (the floor under playing; our MP3 decoder's CPU
# per audio second and allocations per frame on lame-made music), then issue 21's
# figures for a real playerd beside Debian's MPD on the same
# files in one run (services/playerd/cmd/perfbench, docs/performance.md): CPU
# per audio second (MP3, FLAC, Vorbis; MPD resampling to 48 kHz and at the
# file's rate), the first scan of a never-scanned BENCH_LIBRARY-track library
# and the time to the first API answer, server CPU per status request, play
# command → first audible sample (FLAC, MP3), idle anonymous RSS, and the MP3
# decoders alone on the same track: ours, go-mp3 (from the module of
# cmd/perfbench/gomp3 only) and mpg123 -t with and without --cpu generic,
# CPU per audio second and allocations per frame. The library is made once
# into build/bench (about 5 GB for 10,000 tracks). BENCH_BASELINE=BIN adds an
# older playerd's column (before/after); BENCH_FLAGS go to perfbench. About
# 15 minutes; `make bench BENCH_LIBRARY=0 BENCH_FLAGS="-seconds=5 -repeat=1"` is quick.
BENCH_PACKAGES := sox lame mpg123 flac vorbis-tools mpd ffmpeg
BENCH_LIBRARY  ?= 10000
BENCH_BASELINE ?=
BENCH_FLAGS    ?=
.PHONY: bench bench-play
bench: build
	$(call apt-install,$(BENCH_PACKAGES))
	$(GO) test -run '^$$' -bench DecodeAlone -benchtime 50x ./services/playerd/internal/decode/
	STORYBOX_REQUIRE_FFMPEG=1 $(GO) test -run '^$$' -bench . -benchtime 20x ./services/playerd/internal/decode/aac/
	STORYBOX_REQUIRE_MP3TOOLS=1 $(GO) test -run '^$$' -bench . -benchtime 20x ./services/playerd/internal/decode/mp3/
	$(GO) run ./services/playerd/cmd/perfbench -playerd $(BIN)/playerd -mpd $$(command -v mpd) \
		-library $(BENCH_LIBRARY) -libdir $(CURDIR)/build/bench/library \
		$(if $(BENCH_BASELINE),-baseline $(BENCH_BASELINE)) $(BENCH_FLAGS)

# bench-play: playerd alone, quickly (no MPD, no big library).
bench-play: build
	$(call apt-install,sox lame flac vorbis-tools)
	$(GO) run ./services/playerd/cmd/perfbench -playerd $(BIN)/playerd $(BENCH_FLAGS)

# --------------------------------------------------------------------- speech
# storybox-speak (SVOX Pico + espeak-ng), static for amd64 and arm64, with its
# voice data: build/speech/<arch>/storybox-speak and build/speech/<arch>/data.
# Debian packages are downloaded once into build/speech/cache.
SPEECH_DIR      := $(CURDIR)/build/speech
SPEECH_NATIVE   := services/playerd/internal/speech/native
SPEECH_PACKAGES := $(shell bash $(SPEECH_NATIVE)/build.sh --packages 2>/dev/null)
APT_PACKAGES   += $(SPEECH_PACKAGES)
.PHONY: speech run-voice test-speech bench-speech
speech:
	$(call apt-install,$(SPEECH_PACKAGES))
	bash $(SPEECH_NATIVE)/build.sh $(SPEECH_DIR)

# `make run`'s voice: this machine's architecture only, built when gcc and
# libc6-dev are here (nothing is installed for it). Otherwise the build says
# why in one line and playerd runs without a voice.
run-voice: $(SPEECH_DIR)/$(HOST_ARCH)/storybox-speak
$(SPEECH_DIR)/$(HOST_ARCH)/storybox-speak: $(SPEECH_NATIVE)/build.sh $(SPEECH_NATIVE)/storybox-speak.c
	@mkdir -p $(SPEECH_DIR)
	@SPEECH_ARCHES=$(HOST_ARCH) bash $(SPEECH_NATIVE)/build.sh $(SPEECH_DIR) >$(SPEECH_DIR)/build.log 2>&1 || \
		echo "$$(tail -1 $(SPEECH_DIR)/build.log) (log: build/speech/build.log)"

# Go tests that need the built program find it through STORYBOX_SPEECH_DIR.
test-speech: speech
	STORYBOX_SPEECH_DIR=$(SPEECH_DIR)/$(HOST_ARCH) $(GO) test -race -count=1 ./services/playerd/internal/speech/

bench-speech: speech
	STORYBOX_SPEECH_DIR=$(SPEECH_DIR)/$(HOST_ARCH) $(GO) test -run '^$$' -bench . -benchtime 20x ./services/playerd/internal/speech/

integration: test-speech

# ---------------------------------------------------------------------- fuzz
# Media files and streams are untrusted: each decoder (wav, mp3, flac, ogg
# vorbis, ogg opus, AAC in ADTS and MP4, and the live stream path) and the
# tag reader is fuzzed behind the boundary in internal/decode, the AAC
# decoder and the MP4 reader also on their own, from real seed files
# (testdata/seed); so are what radio servers and podcast feeds send: the ICY
# demuxer, stream titles, playlists (internal/stream) and feeds
# (internal/podcast). Address space is limited so that an allocation a Pi
# could not take fails here too instead of succeeding lazily on a large
# machine. A failing input is written to testdata/fuzz/<target>/; commit it
# as a regression case.
#
# Each target runs for a number of inputs (about 15 s of a 2-core CI
# machine for that target), not for a duration: Go before 1.27 can fail a
# run limited by -fuzztime=DURATION at its deadline, with "context deadline
# exceeded" and no failing input (golang/go#75804), as CI saw on FuzzVorbis.
# FUZZTIME=5000x or FUZZTIME=1m sets one budget for all.
FUZZTIME    ?=
FUZZ_TARGETS := decode:FuzzWAV:150000 decode:FuzzMP3:100000 decode:FuzzFLAC:150000 decode:FuzzOggFLAC:150000 decode:FuzzVorbis:150000 \
	decode:FuzzOpus:150000 decode:FuzzTags:150000 decode:FuzzDuration:100000 decode:FuzzLive:10000 \
	stream:FuzzICY:150000 stream:FuzzStreamTitle:150000 stream:FuzzPlaylist:100000 podcast:FuzzParse:150000 \
	decode:FuzzADTS:50000 decode:FuzzM4A:50000 decode:FuzzAACInfo:50000 decode:FuzzLiveAAC:20000 \
	decode/aac:FuzzDecoder:100000 decode/mp4:FuzzBoxes:100000
# The MP3 decoder alone, from frames its tests write (intensity stereo,
# mixed blocks, CRC, MPEG-2.5) that no seed file has.
FUZZ_TARGETS += decode/mp3:FuzzDecode:70000
# The live M4A reader alone, without the AAC decoder, from streams
# decode/mp4/mp4test writes (a chapter track between the samples, a cover).
FUZZ_TARGETS += decode:FuzzLiveM4A:20000
# The FLAC decoder alone with its CRC checks off, from streams its tests
# write (variable block sizes, escaped partitions, every stereo mode).
FUZZ_TARGETS += decode/flac:FuzzDecoder:60000
.PHONY: fuzz
fuzz:
	@for ptn in $(FUZZ_TARGETS); do \
		p=$${ptn%%:*}; tn=$${ptn#*:}; t=$${tn%%:*}; budget="$(FUZZTIME)"; \
		[ -n "$$budget" ] || budget=$${tn#*:}x; \
		echo "fuzz $$p $$t for $$budget"; \
		( ulimit -v 4000000; $(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $$budget ./services/playerd/internal/$$p/ ) || exit 1; \
	done

integration: fuzz

# ----------------------------------------------------------------- alsa / VM
# The ALSA sink played into snd-aloop inside a VM: Debian's arm64 kernel
# (downloaded once into build/alsa-vm with a private apt configuration) boots
# under qemu-system-aarch64 (TCG, -nic none) with a Go /init that compares
# what it played with what it captured (snd-aloop), then plays to qemu's
# usb-audio device (snd-usb-audio) recorded to a WAV file, then plays a folder
# on snd-aloop for 36 s while the background loudness measurement works through
# a 1,000-track library on tmpfs (the measure boot, about 65 s: it fails on an
# underrun; 19 of 1,000 tracks measured while playing under TCG,
# docs/loudness.md), and last plugs that device in and out through qemu's
# monitor while the player plays on snd-aloop (the headphones: the switch,
# the cap in the recording's level, the pause on unplug). About 50 s when
# cached, and the measure boot's minute. VM_BOOTS picks boots (unset:
# loopback usb measure headphones); MEASURE=off runs the measure boot
# without measuring, as a control.
VM_PACKAGES   := qemu-system-arm cpio debian-archive-keyring
APT_PACKAGES += $(VM_PACKAGES)
.PHONY: test-vm bench-audio
test-vm:
	$(call apt-install,$(VM_PACKAGES))
	GO=$(GO) bash services/playerd/internal/vmtest/alsa/run.sh

# CPU time per second of audio: decode -> resample -> gain -> S32 -> sink.
bench-audio:
	$(GO) test -run '^$$' -bench Pipeline -benchtime 20x ./services/playerd/internal/output/

integration: test-vm

# -------------------------------------------------------------- display / VM
# The touch screen in a VM: Debian's arm64 kernel (fetched once into
# build/display-vm) with a virtio-gpu framebuffer at 800x480 and a uinput
# touch device. Checks the frame read back from /dev/fb0, the console's
# KD_GRAPHICS/KD_TEXT switch and a tap ending as a player command. About 25 s
# when cached.
.PHONY: test-display-vm bench-display
test-display-vm:
	$(call apt-install,$(VM_PACKAGES))
	GO=$(GO) bash services/playerd/internal/vmtest/display/run.sh

# One full 800x480 frame, and its conversion to RGB565 / XRGB8888.
bench-display:
	$(GO) test -run '^$$' -bench . -benchmem ./services/playerd/internal/display/

integration: test-display-vm

# ---------------------------------------------------------------- cards / VM
# Card readers and buttons in a VM: the real playerd binary with -input auto
# on Debian's arm64 kernel (fetched once into build/cards-vm), a card reader
# and a keyboard made with uinput, and a button on line 3 of the virt
# board's PL061 GPIO chip, pressed through the QEMU monitor. Checks unknown
# card -> teach -> assign -> play, the 2 s repeat rule, a stop card, the
# grab, a replug mid-number, media keys and the GPIO edge; then steps the
# VM's wall clock (clock_settime, as network time does) by an hour and a
# year both ways under a session, a daily limit and the sleep timer. About
# 20 s when cached.
.PHONY: test-cards-vm
test-cards-vm:
	$(call apt-install,$(VM_PACKAGES))
	GO=$(GO) bash services/playerd/internal/vmtest/cards/run.sh

integration: test-cards-vm

# ------------------------------------------------------------- Wi-Fi / VM
# netd against a real kernel's radios: Debian's arm64 kernel with two
# mac80211_hwsim radios, the real netd and gokrazy's dhcp on one, Debian's
# hostapd (an open and a WPA2 network) with a test DHCP server on the other,
# in a network namespace of its own. Scan, join, address, the WPA2 refusal
# (hwsim has no handshake offload), mDNS over the air, the access point gone
# and back. Kernel and .debs are fetched once into build/.
.PHONY: test-netd-vm
test-netd-vm:
	$(call apt-install,$(VM_PACKAGES))
	GO=$(GO) bash services/netd/internal/vmtest/run.sh

integration: test-netd-vm

# ---------------------------------------------------------------------- image
# The appliance image (gokrazy-instance/, board/, docs/image.md). gok is built
# from the pinned tools module (`go install gok@version` fails on the proxy).
# The update password is generated on the first build into the git-ignored
# gokrazy-instance/.secrets and reused after; keep it, `make update` needs it.
# PI_IMAGE_BYTES: size of the SD card; /perm gets all but 1.1 GB of it. The
# default fits every "4 GB" card; use `blockdev --getsize64 /dev/sdX` for more.
IMAGE_PACKAGES := qemu-system-x86 qemu-system-arm mtools e2fsprogs util-linux curl jq openssl debian-archive-keyring
APT_PACKAGES  += $(IMAGE_PACKAGES)
GOK            := $(BIN)/gok
IMAGE_DIR      := $(CURDIR)/build/image
PI_IMAGE_BYTES ?= 3758096384
VM_IMAGE_BYTES ?= 2147483648
IMAGE_ENV      := GOK=$(GOK) GO=$(GO)
.PHONY: gok image vm-image vm update test-boot
$(GOK): gokrazy-instance/tools/go.mod gokrazy-instance/tools/go.sum
	cd gokrazy-instance/tools && CGO_ENABLED=0 $(GO) build -o $(GOK) github.com/gokrazy/tools/cmd/gok
gok: $(GOK)

# The Pi's Wi-Fi firmware (brcmfmac) and the regulatory database, from
# Debian's firmware-brcm80211 and wireless-regdb (fetched once into
# build/debian-arm64, signature-checked by apt), for the image's /lib/firmware
# (board/README.md, Wi-Fi).
WIFI_FIRMWARE_DIR := $(CURDIR)/build/wifi-firmware
.PHONY: wifi-firmware
wifi-firmware:
	$(call apt-install,debian-archive-keyring)
	bash board/wifi-firmware.sh $(WIFI_FIRMWARE_DIR)

# Flashable Raspberry Pi image (arm64, kernel.rpi, firmware, EEPROM), /perm
# formatted with the demo library: build/image/storybox.img
image: $(GOK) speech wifi-firmware
	$(call apt-install,$(IMAGE_PACKAGES))
	$(IMAGE_ENV) gokrazy-instance/build-image.sh storybox $(IMAGE_DIR)/storybox.img $(PI_IMAGE_BYTES)

# The same box for amd64 (kernel.amd64, -output=null, simulated battery board).
vm-image: $(GOK) speech
	$(call apt-install,$(IMAGE_PACKAGES))
	$(IMAGE_ENV) gokrazy-instance/build-image.sh storybox-vm $(IMAGE_DIR)/storybox-vm.img $(VM_IMAGE_BYTES)

# Boots the amd64 image in qemu: API on 127.0.0.1:8090, gokrazy web interface
# on https://127.0.0.1:9443, serial console here (Ctrl-A X quits). The guest has no
# network beyond qemu's restricted user-mode stack.
vm: vm-image
	gokrazy-instance/boot-test.sh run $(IMAGE_DIR)/storybox-vm.img

# Over-the-air update of a running box (A/B root partitions; /perm is kept).
# BOX=host-or-ip when the name "storybox" does not resolve on your network.
update: $(GOK) speech wifi-firmware
	$(call apt-install,$(IMAGE_PACKAGES))
	$(IMAGE_ENV) gokrazy-instance/update.sh storybox $(BOX)

# Builds both images, boots each under qemu (TCG) and checks it through the API.
test-boot: vm-image image
	gokrazy-instance/boot-test.sh vm $(IMAGE_DIR)/storybox-vm.img
	gokrazy-instance/boot-test.sh pi $(IMAGE_DIR)/storybox.img

integration: test-boot

# Updates over TLS only (update-test.sh, part of the boot test): an impostor
# and a wrong pin are refused before the password is sent; a real update of
# the amd64 VM over TLS switches A/B and keeps /perm.
.PHONY: test-update
test-update: vm-image
	$(IMAGE_ENV) gokrazy-instance/update-test.sh $(IMAGE_DIR)/storybox-vm.img
test-boot: test-update

# Power cuts on the real image (powercut-test.sh, gokrazy-instance/powercut):
# the amd64 VM on a copy of its disk is killed at random moments while
# commands, settings, card mappings and uploads stream at it, and booted
# again on the same disk, POWERCUT_CUTS times; every change acknowledged a
# second before a cut must be there, uploads whole or absent, /perm clean.
# 20 cuts everywhere, CI included (docs/image.md has the time it takes);
# POWERCUT_SEED repeats a run's choices.
POWERCUT_CUTS ?= 20
POWERCUT_SEED ?=
.PHONY: test-powercut
test-powercut: vm-image
	CUTS=$(POWERCUT_CUTS) SEED=$(POWERCUT_SEED) GO=$(GO) gokrazy-instance/powercut-test.sh $(IMAGE_DIR)/storybox-vm.img

integration: test-powercut

# ------------------------------------------------------- Pi board model / VM
# The flashable image (make image) on qemu's own model of the Pi 3 B
# (raspi3b: BCM2837, SD host, framebuffer, DWC2 USB) with the Zero 2 W's
# 512 MB, its kernel and device tree taken from the image's boot partition:
# the API over a USB Ethernet adapter, the home screen on the framebuffer
# against the box's own screenshot, a folder played to a USB sound card and
# recorded sample for sample (volume, pause), a USB keyboard typing a card,
# memory with a 10,000-track library playing (services/playerd/internal/
# vmtest/pi; board/README.md says what it proves). Boots a sparse copy of
# the image with files added to /perm; the image stays as built. About 4-5
# minutes (most of it the first scan of the library under TCG).
PI_VM_PACKAGES := qemu-system-arm mtools e2fsprogs util-linux
APT_PACKAGES   += $(PI_VM_PACKAGES)
.PHONY: test-pi
test-pi: image
	$(call apt-install,$(PI_VM_PACKAGES))
	$(GO) run ./services/playerd/internal/vmtest/pi -image $(IMAGE_DIR)/storybox.img -work $(CURDIR)/build/pi-vm

integration: test-pi

# Syncthing's memory and CPU on the Pi board model (docs/household.md,
# Figures): the board of test-pi with its 10,000-track library and a second
# box (syncd and Syncthing built for this machine) in a network namespace
# made here, whose only interface is loopback, so Syncthing never runs on
# this machine's own network; the second box reaches the board through a
# qemu forward on that loopback. A parent's request and accept pair them
# through the board's API; a probe (the test program built for arm64, run
# on the board as a gokrazy diversion) reads Syncthing's RSS and CPU from
# /proc there. Alone, hashing the library, sending it, idle. Not part of
# make test: under TCG the board's first scan alone took 11 minutes at a
# load of 15-21; allow 30-60 minutes.
PI_HH_DIR := $(CURDIR)/build/pi-household
.PHONY: figures-household-pi
figures-household-pi: image
	$(call apt-install,$(PI_VM_PACKAGES) $(HOUSEHOLD_PACKAGES))
	mkdir -p $(PI_HH_DIR)
	$(GO) build -o $(PI_HH_DIR)/pi ./services/playerd/internal/vmtest/pi
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -o $(PI_HH_DIR)/probe ./services/playerd/internal/vmtest/pi
	$(GO) build -o $(PI_HH_DIR)/syncd ./services/syncd
	cd gokrazy-instance/storybox/builddir/github.com/syncthing/syncthing && \
		GOWORK=off GOFLAGS=-buildvcs=false CGO_ENABLED=0 $(GO) build -tags=noassets \
		-ldflags='-X github.com/syncthing/syncthing/lib/build.Version=v1.30.0' \
		-o $(PI_HH_DIR)/syncthing github.com/syncthing/syncthing/cmd/syncthing
	unshare --net sh -c 'ip link set lo up && exec $(PI_HH_DIR)/pi -household -timeout 45m \
		-image $(IMAGE_DIR)/storybox.img -work $(PI_HH_DIR)/vm -probe-binary $(PI_HH_DIR)/probe \
		-peer-syncd $(PI_HH_DIR)/syncd -peer-syncthing $(PI_HH_DIR)/syncthing'
