// SPDX-License-Identifier: GPL-3.0-or-later
//
// storybox-speak: offline text to speech for the storybox player.
//
// Reads UTF-8 text on stdin and writes a 16-bit mono WAV file to stdout. The
// text never appears on the command line, so nothing a user typed reaches a
// shell or an argument parser. SVOX Pico speaks the languages whose lingware
// is present in DATADIR/pico; espeak-ng (DATADIR/espeak-ng-data) speaks
// everything else. Built fully static from Debian's libttspico.a and
// libespeak-ng.a, so it runs on gokrazy, which has no libc.
//
// The binary links espeak-ng (GPL-3.0-or-later) and is therefore distributed
// under that licence; playerd only executes it as a separate program.
//
// usage: storybox-speak -d DATADIR -l LANG [-e auto|pico|espeak]
//                       [-r RATE] [-p PITCH]
//   LANG   language tag such as de, de-DE, en-GB, fr
//   RATE   speaking rate in percent of normal, 50..200 (default 100)
//   PITCH  voice pitch in percent of normal, 50..200 (default 100)
// exit status: 0 ok, 1 synthesis failed, 2 usage, 3 language not available.

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <picoapi.h>
#include <picodefs.h>

#include <espeak-ng/espeak_ng.h>

#define MAX_TEXT (64 * 1024)
#define EXIT_SYNTH 1
#define EXIT_USAGE 2
#define EXIT_NOLANG 3

// Collected 16-bit samples; the WAV header needs the total length, and stdout
// is a pipe that cannot be rewound.
static int16_t *pcm;
static size_t pcm_len, pcm_cap;

static int append(const int16_t *s, size_t n) {
	if (pcm_len + n > pcm_cap) {
		size_t cap = pcm_cap ? pcm_cap : 1 << 16;
		while (cap < pcm_len + n)
			cap *= 2;
		int16_t *p = realloc(pcm, cap * sizeof *p);
		if (!p)
			return -1;
		pcm = p;
		pcm_cap = cap;
	}
	memcpy(pcm + pcm_len, s, n * sizeof *s);
	pcm_len += n;
	return 0;
}

static void put_le(unsigned char *b, uint32_t v, int n) {
	for (int i = 0; i < n; i++)
		b[i] = (unsigned char)(v >> (8 * i));
}

static int write_all(const void *buf, size_t n) {
	const unsigned char *p = buf;
	while (n > 0) {
		ssize_t w = write(STDOUT_FILENO, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int write_wav(uint32_t rate) {
	unsigned char h[44];
	uint32_t data = (uint32_t)(pcm_len * 2);
	memcpy(h, "RIFF", 4);
	put_le(h + 4, 36 + data, 4);
	memcpy(h + 8, "WAVEfmt ", 8);
	put_le(h + 16, 16, 4);       // fmt chunk size
	put_le(h + 20, 1, 2);        // PCM
	put_le(h + 22, 1, 2);        // mono
	put_le(h + 24, rate, 4);
	put_le(h + 28, rate * 2, 4); // bytes per second
	put_le(h + 32, 2, 2);        // block align
	put_le(h + 34, 16, 2);       // bits per sample
	memcpy(h + 36, "data", 4);
	put_le(h + 40, data, 4);
	// WAV is little endian, as are both targets (amd64, arm64).
	if (write_all(h, sizeof h) < 0 || write_all(pcm, data) < 0) {
		perror("storybox-speak: write");
		return -1;
	}
	return 0;
}

// ------------------------------------------------------------------ SVOX Pico

#define PICO_MEM (2500 * 1024)

// pico_locale maps a language tag to a Pico locale; Pico has one voice per
// locale and no bare-language voices.
static const char *pico_locale(const char *lang) {
	static const char *const map[][2] = {
	    {"de", "de-DE"}, {"de-de", "de-DE"}, {"de-at", "de-DE"}, {"de-ch", "de-DE"},
	    {"en", "en-GB"}, {"en-gb", "en-GB"}, {"en-us", "en-US"},
	    {"fr", "fr-FR"}, {"fr-fr", "fr-FR"}, {"es", "es-ES"}, {"es-es", "es-ES"},
	    {"it", "it-IT"}, {"it-it", "it-IT"},
	};
	char low[16];
	size_t i;
	for (i = 0; lang[i] && i < sizeof low - 1; i++)
		low[i] = (char)tolower((unsigned char)(lang[i] == '_' ? '-' : lang[i]));
	low[i] = 0;
	for (i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strcmp(low, map[i][0]) == 0)
			return map[i][1];
	return NULL;
}

// pico_files finds "<locale>_ta.bin" (text analysis) and "<locale>_*_sg.bin"
// (signal generation) in dir. Returns 0 when both exist.
static int pico_files(const char *dir, const char *loc, char *ta, char *sg, size_t n) {
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	size_t ll = strlen(loc);
	ta[0] = sg[0] = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		const char *name = e->d_name;
		size_t nl = strlen(name);
		if (nl <= ll + 1 || strncmp(name, loc, ll) != 0 || name[ll] != '_')
			continue;
		if (strcmp(name + ll, "_ta.bin") == 0)
			snprintf(ta, n, "%s/%s", dir, name);
		else if (nl > 7 && strcmp(name + nl - 7, "_sg.bin") == 0)
			snprintf(sg, n, "%s/%s", dir, name);
	}
	closedir(d);
	return ta[0] && sg[0] ? 0 : -1;
}

static int pico_fail(pico_System sys, pico_Status st, const char *what) {
	pico_Retstring msg;
	msg[0] = 0;
	if (sys)
		pico_getSystemStatusMessage(sys, st, msg);
	fprintf(stderr, "storybox-speak: pico %s: %d %s\n", what, (int)st, msg);
	return EXIT_SYNTH;
}

static int speak_pico(const char *ta, const char *sg, char *text, int rate, int pitch) {
	void *mem = malloc(PICO_MEM);
	pico_System sys = NULL;
	pico_Resource rta = NULL, rsg = NULL;
	pico_Engine eng = NULL;
	pico_Retstring nta, nsg;
	const pico_Char *voice = (const pico_Char *)"storybox";
	pico_Status st;

	if (!mem)
		return EXIT_SYNTH;
	if ((st = pico_initialize(mem, PICO_MEM, &sys)) != PICO_OK)
		return pico_fail(NULL, st, "initialize");
	if ((st = pico_loadResource(sys, (const pico_Char *)ta, &rta)) != PICO_OK)
		return pico_fail(sys, st, "load text analysis");
	if ((st = pico_loadResource(sys, (const pico_Char *)sg, &rsg)) != PICO_OK)
		return pico_fail(sys, st, "load signal generation");
	if ((st = pico_getResourceName(sys, rta, nta)) != PICO_OK ||
	    (st = pico_getResourceName(sys, rsg, nsg)) != PICO_OK)
		return pico_fail(sys, st, "resource name");
	if ((st = pico_createVoiceDefinition(sys, voice)) != PICO_OK ||
	    (st = pico_addResourceToVoiceDefinition(sys, voice, (pico_Char *)nta)) != PICO_OK ||
	    (st = pico_addResourceToVoiceDefinition(sys, voice, (pico_Char *)nsg)) != PICO_OK)
		return pico_fail(sys, st, "voice");
	if ((st = pico_newEngine(sys, voice, &eng)) != PICO_OK)
		return pico_fail(sys, st, "engine");

	// Pico reads markup in its input; the text is the user's, so angle
	// brackets are blanked and the only markup is ours.
	for (char *p = text; *p; p++)
		if (*p == '<' || *p == '>')
			*p = ' ';
	size_t tl = strlen(text);
	size_t cap = tl + 128;
	char *doc = malloc(cap);
	if (!doc)
		return EXIT_SYNTH;
	// The terminating NUL is part of the input: it makes Pico flush the
	// last sentence.
	int dl = snprintf(doc, cap, "<speed level=\"%d\"><pitch level=\"%d\">%s</pitch></speed>", rate,
	                  pitch, text) + 1;

	int16_t buf[1024];
	for (int off = 0; off < dl;) {
		pico_Int16 chunk = (pico_Int16)(dl - off > 32767 ? 32767 : dl - off), put = 0;
		if ((st = pico_putTextUtf8(eng, (pico_Char *)doc + off, chunk, &put)) != PICO_OK)
			return pico_fail(sys, st, "put text");
		off += put;
		do {
			pico_Int16 got = 0, type = 0;
			st = pico_getData(eng, buf, (pico_Int16)sizeof buf, &got, &type);
			if (st != PICO_STEP_BUSY && st != PICO_STEP_IDLE)
				return pico_fail(sys, st, "synthesis");
			if (got > 0 && append(buf, (size_t)got / 2) < 0)
				return EXIT_SYNTH;
		} while (st == PICO_STEP_BUSY);
	}
	pico_disposeEngine(sys, &eng);
	pico_terminate(&sys);
	free(doc);
	free(mem);
	return write_wav(16000) < 0 ? EXIT_SYNTH : 0;
}

// ------------------------------------------------------------------- espeak-ng

// libespeak-ng.a refers to pcaudio for live playback; this program only ever
// uses synchronous output into a callback, so the device layer is stubbed.
struct audio_object;
struct audio_object *create_audio_device_object(const char *d, const char *a, const char *b) {
	(void)d, (void)a, (void)b;
	return NULL;
}
int audio_object_open(struct audio_object *o, int f, uint32_t r, uint8_t c) {
	(void)o, (void)f, (void)r, (void)c;
	return -1;
}
void audio_object_close(struct audio_object *o) { (void)o; }
void audio_object_destroy(struct audio_object *o) { (void)o; }
int audio_object_write(struct audio_object *o, const void *d, size_t n) {
	(void)o, (void)d, (void)n;
	return -1;
}
int audio_object_drain(struct audio_object *o) {
	(void)o;
	return 0;
}
int audio_object_flush(struct audio_object *o) {
	(void)o;
	return 0;
}
const char *audio_object_strerror(struct audio_object *o, int e) {
	(void)o, (void)e;
	return "no audio device";
}

static int synth_failed;

static int on_samples(short *wav, int n, espeak_EVENT *ev) {
	(void)ev;
	if (wav && n > 0 && append(wav, (size_t)n) < 0) {
		synth_failed = 1;
		return 1; // abort synthesis
	}
	return 0;
}

static int espeak_fail(espeak_ng_STATUS st, espeak_ng_ERROR_CONTEXT ctx, const char *what) {
	char msg[512];
	espeak_ng_GetStatusCodeMessage(st, msg, sizeof msg);
	fprintf(stderr, "storybox-speak: espeak-ng %s: %s\n", what, msg);
	if (ctx)
		espeak_ng_ClearErrorContext(&ctx);
	return EXIT_SYNTH;
}

static int speak_espeak(const char *dir, const char *lang, const char *text, int rate, int pitch) {
	espeak_ng_ERROR_CONTEXT ctx = NULL;
	espeak_ng_STATUS st;
	char voice[32];
	size_t i;

	espeak_ng_InitializePath(dir);
	if ((st = espeak_ng_Initialize(&ctx)) != ENS_OK)
		return espeak_fail(st, ctx, "initialize");
	if ((st = espeak_ng_InitializeOutput(ENOUTPUT_MODE_SYNCHRONOUS, 0, NULL)) != ENS_OK)
		return espeak_fail(st, NULL, "output");
	espeak_SetSynthCallback(on_samples);
	for (i = 0; lang[i] && i < sizeof voice - 1; i++)
		voice[i] = (char)tolower((unsigned char)(lang[i] == '_' ? '-' : lang[i]));
	voice[i] = 0;
	// The box ships dictionaries for a few languages only; espeak-ng would
	// speak a language without its dictionary as letter noise and exit 0.
	char dict[3200];
	size_t base = strcspn(voice, "-");
	const char *dname = (base == 2 && strncmp(voice, "nb", 2) == 0) ? "no" : voice;
	int dl = snprintf(dict, sizeof dict, "%s/%.*s_dict", dir, (int)(dname == voice ? base : 2), dname);
	if (dl < 0 || (size_t)dl >= sizeof dict || access(dict, R_OK) != 0) {
		fprintf(stderr, "storybox-speak: no dictionary for language %s\n", lang);
		return EXIT_NOLANG;
	}
	if (espeak_ng_SetVoiceByName(voice) != ENS_OK) {
		// "de-at" has no voice of its own; the bare language does.
		char *dash = strchr(voice, '-');
		if (dash)
			*dash = 0;
		if (!dash || espeak_ng_SetVoiceByName(voice) != ENS_OK) {
			fprintf(stderr, "storybox-speak: no voice for language %s\n", lang);
			return EXIT_NOLANG;
		}
	}
	// espeak's defaults: 175 words per minute, pitch 50 on a 0..100 scale.
	espeak_ng_SetParameter(espeakRATE, 175 * rate / 100, 0);
	espeak_ng_SetParameter(espeakPITCH, 50 * pitch / 100 > 100 ? 100 : 50 * pitch / 100, 0);
	st = espeak_ng_Synthesize(text, strlen(text) + 1, 0, POS_CHARACTER, 0, espeakCHARS_UTF8, NULL,
	                          NULL);
	if (st != ENS_OK)
		return espeak_fail(st, NULL, "synthesize");
	if ((st = espeak_ng_Synchronize()) != ENS_OK)
		return espeak_fail(st, NULL, "synchronize");
	if (synth_failed)
		return EXIT_SYNTH;
	int sr = espeak_ng_GetSampleRate();
	espeak_ng_Terminate();
	return write_wav((uint32_t)sr) < 0 ? EXIT_SYNTH : 0;
}

// ------------------------------------------------------------------------ main

static int usage(void) {
	fprintf(stderr, "usage: storybox-speak -d DATADIR -l LANG [-e auto|pico|espeak] [-r RATE] "
	                "[-p PITCH] <text >wav\n");
	return EXIT_USAGE;
}

static int percent(const char *s, int *out) {
	char *end;
	long v = strtol(s, &end, 10);
	if (*s == 0 || *end != 0 || v < 50 || v > 200)
		return -1;
	*out = (int)v;
	return 0;
}

int main(int argc, char **argv) {
	const char *dir = NULL, *lang = NULL, *engine = "auto";
	int rate = 100, pitch = 100, c;

	while ((c = getopt(argc, argv, "d:l:e:r:p:")) != -1) {
		switch (c) {
		case 'd': dir = optarg; break;
		case 'l': lang = optarg; break;
		case 'e': engine = optarg; break;
		case 'r':
			if (percent(optarg, &rate) < 0)
				return usage();
			break;
		case 'p':
			if (percent(optarg, &pitch) < 0)
				return usage();
			break;
		default: return usage();
		}
	}
	if (!dir || !lang || optind != argc || strlen(dir) > 3000)
		return usage();
	if (strcmp(engine, "auto") && strcmp(engine, "pico") && strcmp(engine, "espeak"))
		return usage();

	char *text = malloc(MAX_TEXT + 1);
	size_t n = 0;
	if (!text)
		return EXIT_SYNTH;
	for (;;) {
		ssize_t r = read(STDIN_FILENO, text + n, MAX_TEXT + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			perror("storybox-speak: read");
			return EXIT_SYNTH;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > MAX_TEXT) {
			fprintf(stderr, "storybox-speak: text longer than %d bytes\n", MAX_TEXT);
			return EXIT_USAGE;
		}
	}
	text[n] = 0;
	// A NUL inside the text would silently cut it short.
	for (size_t i = 0; i < n; i++)
		if (text[i] == 0)
			text[i] = ' ';

	char path[4096], ta[4200], sg[4200];
	if (strcmp(engine, "espeak") != 0) {
		const char *loc = pico_locale(lang);
		snprintf(path, sizeof path, "%s/pico", dir);
		if (loc && pico_files(path, loc, ta, sg, sizeof ta) == 0)
			return speak_pico(ta, sg, text, rate, pitch);
		if (strcmp(engine, "pico") == 0) {
			fprintf(stderr, "storybox-speak: no pico voice for language %s\n", lang);
			return EXIT_NOLANG;
		}
	}
	snprintf(path, sizeof path, "%s/espeak-ng-data", dir);
	return speak_espeak(path, lang, text, rate, pitch);
}
