// SPDX-License-Identifier: GPL-2.0-only
#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/demangle.h"

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

static cxa_demangle_fn cxa_demangle;
static pthread_once_t cxa_once = PTHREAD_ONCE_INIT;

static void find_demangler(void)
{
	void *h;

	cxa_demangle = (cxa_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (cxa_demangle)
		return;
	/* never unloaded: the function stays in use for the life of the process */
	h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (h)
		cxa_demangle = (cxa_demangle_fn)dlsym(h, "__cxa_demangle");
}

bool sym_demangle_available(void)
{
	pthread_once(&cxa_once, find_demangler);
	return cxa_demangle != NULL;
}

/* Legacy Rust: "a::b::h0123456789abcdef", 16 hex digits of hash. */
static bool strip_rust_hash(char *s)
{
	size_t n = strlen(s);

	if (n < 19 || memcmp(s + n - 19, "::h", 3))
		return false;
	for (size_t i = n - 16; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	s[n - 19] = '\0';
	return true;
}

/* Undo legacy Rust's escapes in place: $LT$ -> <, $u20$ -> ' ', .. -> ::, ... */
static void unescape_rust(char *s)
{
	static const struct {
		const char *esc;
		char c;
	} tab[] = {{"$SP$", '@'}, {"$BP$", '*'}, {"$RF$", '&'}, {"$LT$", '<'},
		   {"$GT$", '>'}, {"$LP$", '('}, {"$RP$", ')'}, {"$C$", ','}};
	char *w = s;

	for (const char *r = s; *r;) {
		bool done = false;

		/* a component that starts with an escape is written with a leading '_' */
		if (r[0] == '_' && r[1] == '$' &&
		    (w == s || (w - s >= 2 && w[-1] == ':' && w[-2] == ':')))
			r++;
		if (*r == '$') {
			for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
				size_t n = strlen(tab[i].esc);

				if (!strncmp(r, tab[i].esc, n)) {
					*w++ = tab[i].c;
					r += n;
					done = true;
					break;
				}
			}
			if (!done && r[1] == 'u' && isxdigit((unsigned char)r[2]) &&
			    isxdigit((unsigned char)r[3]) && r[4] == '$') {
				*w++ = (char)strtol((char[]){r[2], r[3], 0}, NULL, 16);
				r += 5;
				done = true;
			}
		} else if (r[0] == '.' && r[1] == '.') {
			*w++ = ':';
			*w++ = ':';
			r += 2;
			done = true;
		}
		if (!done)
			*w++ = *r++;
	}
	*w = '\0';
}

bool sym_demangle(const char *name, char *buf, size_t len)
{
	char *out;
	int status = -1;

	snprintf(buf, len, "%s", name);
	if (strncmp(name, "_Z", 2) || !sym_demangle_available())
		return false;
	out = cxa_demangle(name, NULL, NULL, &status);
	if (!out || status) {
		free(out);
		return false;
	}
	/* ".." cannot occur in a C++ name, so the unescape touches only Rust */
	if (strip_rust_hash(out))
		unescape_rust(out);
	snprintf(buf, len, "%s", out);
	free(out);
	return true;
}
