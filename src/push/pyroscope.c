// SPDX-License-Identifier: GPL-2.0-only
/*
 * The Pyroscope ingest request with libcurl. Labels are checked here, before
 * anything is queued, because a series the server cannot parse would be
 * refused for good after it had waited in the spool.
 */
#include <ctype.h>
/* The calls go through the table below: no type-checking macros in their way. */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/pprof.h"
#include "push/pyroscope.h"

/*
 * libcurl, opened when the first request starts: linked in, it and the 25
 * libraries it needs (TLS, HTTP/2, IDN, LDAP, ...) cost every run of offcpu
 * 7 ms of CPU and 12 of wall time in the dynamic loader, and most runs never
 * push. The names below call through this table.
 */
static struct {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *c);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *c);
	const char *(*easy_strerror)(CURLcode rc);
	char *(*easy_escape)(CURL *c, const char *s, int len);
	void (*free)(void *p);
	curl_mime *(*mime_init)(CURL *c);
	curl_mimepart *(*mime_addpart)(curl_mime *m);
	CURLcode (*mime_name)(curl_mimepart *p, const char *name);
	CURLcode (*mime_filename)(curl_mimepart *p, const char *name);
	CURLcode (*mime_type)(curl_mimepart *p, const char *type);
	CURLcode (*mime_data)(curl_mimepart *p, const char *data, size_t len);
	void (*mime_free)(curl_mime *m);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
} cu;

/* curl.h defines these two as macros of themselves. */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_global_init cu.global_init
#define curl_easy_init cu.easy_init
#define curl_easy_setopt cu.easy_setopt
#define curl_easy_perform cu.easy_perform
#define curl_easy_getinfo cu.easy_getinfo
#define curl_easy_cleanup cu.easy_cleanup
#define curl_easy_strerror cu.easy_strerror
#define curl_easy_escape cu.easy_escape
#define curl_free cu.free
#define curl_mime_init cu.mime_init
#define curl_mime_addpart cu.mime_addpart
#define curl_mime_name cu.mime_name
#define curl_mime_filename cu.mime_filename
#define curl_mime_type cu.mime_type
#define curl_mime_data cu.mime_data
#define curl_mime_free cu.mime_free
#define curl_slist_append cu.slist_append
#define curl_slist_free_all cu.slist_free_all

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static bool curl_ok;

/* dlsym's answer as any function pointer (POSIX makes the conversion valid). */
#define CURL_SYM(field, name) (*(void **)&cu.field = dlsym(lib, name))

static void curl_init_once(void)
{
	void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);

	if (!lib || !CURL_SYM(global_init, "curl_global_init") ||
	    !CURL_SYM(easy_init, "curl_easy_init") || !CURL_SYM(easy_setopt, "curl_easy_setopt") ||
	    !CURL_SYM(easy_perform, "curl_easy_perform") ||
	    !CURL_SYM(easy_getinfo, "curl_easy_getinfo") ||
	    !CURL_SYM(easy_cleanup, "curl_easy_cleanup") ||
	    !CURL_SYM(easy_strerror, "curl_easy_strerror") ||
	    !CURL_SYM(easy_escape, "curl_easy_escape") || !CURL_SYM(free, "curl_free") ||
	    !CURL_SYM(mime_init, "curl_mime_init") ||
	    !CURL_SYM(mime_addpart, "curl_mime_addpart") ||
	    !CURL_SYM(mime_name, "curl_mime_name") ||
	    !CURL_SYM(mime_filename, "curl_mime_filename") ||
	    !CURL_SYM(mime_type, "curl_mime_type") || !CURL_SYM(mime_data, "curl_mime_data") ||
	    !CURL_SYM(mime_free, "curl_mime_free") ||
	    !CURL_SYM(slist_append, "curl_slist_append") ||
	    !CURL_SYM(slist_free_all, "curl_slist_free_all"))
		return;
	curl_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

/* Pyroscope's label names, less the dot it would rewrite and the reserved "__" prefix. */
static bool label_name_ok(const char *k, size_t n)
{
	if (!n || !(isalpha((unsigned char)k[0]) || k[0] == '_'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)k[i]) && k[i] != '_')
			return false;
	return !(n >= 2 && k[0] == '_' && k[1] == '_');
}

int pyroscope__label_check(const char *kv, char *why, size_t whylen)
{
	const char *eq = strchr(kv, '=');
	size_t n;

	if (!eq) {
		snprintf(why, whylen, "label '%s' is not KEY=VALUE", kv);
		return -EINVAL;
	}
	n = (size_t)(eq - kv);
	if (!label_name_ok(kv, n)) {
		snprintf(why, whylen,
			 "label name '%.*s' is not allowed: use letters, digits and _, not "
			 "starting with a digit or __",
			 (int)n, kv);
		return -EINVAL;
	}
	/* The server names the series by the application: it adds this one itself. */
	if (n == strlen("service_name") && !strncmp(kv, "service_name", n)) {
		snprintf(why, whylen, "label service_name is set by the server from --name");
		return -EINVAL;
	}
	if (!eq[1] || isspace((unsigned char)eq[1]) || isspace((unsigned char)eq[strlen(eq) - 1])) {
		snprintf(why, whylen,
			 "label %.*s: the value is empty or starts or ends with a space", (int)n,
			 kv);
		return -EINVAL;
	}
	/* The series syntax app{k=v,...} has no quoting: these would end the value. */
	for (const char *c = eq + 1; *c; c++)
		if (*c == ',' || *c == '{' || *c == '}' || iscntrl((unsigned char)*c)) {
			snprintf(why, whylen,
				 "label %.*s: the value may not hold ',', '{', '}' or control "
				 "characters",
				 (int)n, kv);
			return -EINVAL;
		}
	return 0;
}

int pyroscope__app_check(const char *app, char *why, size_t whylen)
{
	if (!*app) {
		snprintf(why, whylen, "the application name is empty");
		return -EINVAL;
	}
	for (const char *c = app; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("_.-/", *c)) {
			snprintf(why, whylen,
				 "application name '%s': use letters, digits and _ . - / only",
				 app);
			return -EINVAL;
		}
	return 0;
}

static size_t key_len(const char *kv)
{
	const char *eq = strchr(kv, '=');

	return eq ? (size_t)(eq - kv) : strlen(kv);
}

int pyroscope__series(char *out, size_t len, const char *app, const char *host,
		      const char *const *labels, size_t nr_labels, char *why, size_t whylen)
{
	bool user_host = false;
	size_t off;
	int err;

	err = pyroscope__app_check(app, why, whylen);
	if (err)
		return err;
	for (size_t i = 0; i < nr_labels; i++) {
		size_t n = key_len(labels[i]);

		err = pyroscope__label_check(labels[i], why, whylen);
		if (err)
			return err;
		if (n == 4 && !strncmp(labels[i], "host", 4))
			user_host = true;
		for (size_t j = 0; j < i; j++)
			if (key_len(labels[j]) == n && !strncmp(labels[i], labels[j], n)) {
				snprintf(why, whylen, "label %.*s is given twice", (int)n,
					 labels[i]);
				return -EINVAL;
			}
	}
	off = (size_t)snprintf(out, len, "%s{", app);
	if (host && *host && !user_host) {
		char kv[300];

		snprintf(kv, sizeof(kv), "host=%s", host);
		/* A host name that the series cannot carry is left out, not an error. */
		if (!pyroscope__label_check(kv, why, whylen) && off < len)
			off += (size_t)snprintf(out + off, len - off, "%s", kv);
	}
	for (size_t i = 0; i < nr_labels && off < len; i++)
		off += (size_t)snprintf(out + off, len - off, "%s%s",
					out[off - 1] == '{' ? "" : ",", labels[i]);
	if (off < len)
		off += (size_t)snprintf(out + off, len - off, "}");
	if (off >= len) {
		snprintf(why, whylen, "the labels are too long (%zu bytes at most)", len - 1);
		return -ENAMETOOLONG;
	}
	return 0;
}

static void base64(const unsigned char *in, size_t n, char *out)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i, o = 0;

	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		out[o++] = tab[v >> 18];
		out[o++] = tab[(v >> 12) & 63];
		out[o++] = tab[(v >> 6) & 63];
		out[o++] = tab[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);

		out[o++] = tab[v >> 18];
		out[o++] = tab[(v >> 12) & 63];
		out[o++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
		out[o++] = '=';
	}
	out[o] = 0;
}

int pyroscope__auth_read(const char *path, char *out, size_t len, char *why, size_t whylen)
{
	char line[2048], *s, *e;
	struct stat st;
	FILE *f = NULL;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		err = -errno;
		snprintf(why, whylen, "cannot open the auth file %s: %s", path, strerror(errno));
		return err;
	}
	/* fstat of what was opened: a file swapped after a check cannot slip through. */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "the auth file %s is not a regular file", path);
		err = -EINVAL;
		goto cleanup;
	}
	if (st.st_mode & 0044) {
		snprintf(why, whylen,
			 "the auth file %s may be read by group or others (mode %04o); run chmod "
			 "600 %s",
			 path, (unsigned)(st.st_mode & 07777), path);
		err = -EPERM;
		goto cleanup;
	}
	f = fdopen(fd, "r");
	if (!f) {
		err = -errno;
		goto cleanup;
	}
	fd = -1;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	s = line + strspn(line, " \t");
	for (e = s + strlen(s); e > s && isspace((unsigned char)e[-1]);)
		*--e = 0;
	if (!*s) {
		snprintf(why, whylen, "the auth file %s has no credential on its first line", path);
		err = -EINVAL;
	} else if (!strncasecmp(s, "Basic ", 6)) {
		char b64[sizeof(line) * 4 / 3 + 4];

		s += 6;
		s += strspn(s, " ");
		if (!strchr(s, ':')) {
			snprintf(why, whylen, "the auth file %s: Basic wants USER:PASSWORD", path);
			err = -EINVAL;
		} else {
			base64((const unsigned char *)s, strlen(s), b64);
			if ((size_t)snprintf(out, len, "Authorization: Basic %s", b64) >= len)
				err = -ENAMETOOLONG;
		}
	} else {
		if (!strncasecmp(s, "Bearer ", 7))
			s += 7 + strspn(s + 7, " ");
		if ((size_t)snprintf(out, len, "Authorization: Bearer %s", s) >= len)
			err = -ENAMETOOLONG;
	}
	if (err == -ENAMETOOLONG)
		snprintf(why, whylen, "the auth file %s: the credential is too long", path);
	explicit_bzero(line, sizeof(line));
cleanup:
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	return err;
}

int pyroscope__encode(const struct profile *p, uint64_t from_ns, uint64_t until_ns, uint8_t **body,
		      size_t *len)
{
	struct pprof_opts o = {
		.time_nanos = (int64_t)from_ns,
		.duration_nanos = until_ns > from_ns ? (int64_t)(until_ns - from_ns) : 0,
		.comment = "offcpu " OFFCPU_VERSION " push",
		.string_ids = true,
	};
	char *buf = NULL;
	size_t n = 0;
	FILE *f;
	int err;

	*body = NULL;
	*len = 0;
	f = open_memstream(&buf, &n);
	if (!f)
		return -ENOMEM;
	err = pprof__write(f, p, &o);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		free(buf);
		return err;
	}
	*body = (uint8_t *)buf;
	*len = n;
	return 0;
}

/* The first line of the server's answer, kept for the error message. */
struct answer {
	char line[256];
	size_t n;
	bool done;
};

static size_t on_answer(char *data, size_t size, size_t nmemb, void *arg)
{
	struct answer *a = arg;
	size_t n = size * nmemb;

	for (size_t i = 0; i < n && !a->done; i++) {
		if (data[i] == '\n' || data[i] == '\r') {
			a->done = a->n > 0;
			continue;
		}
		if (a->n + 1 < sizeof(a->line))
			a->line[a->n++] = isprint((unsigned char)data[i]) ? data[i] : '?';
	}
	a->line[a->n] = 0;
	return n;
}

static int on_progress(void *arg, curl_off_t dlt, curl_off_t dln, curl_off_t ult, curl_off_t uln)
{
	const volatile int *abort = arg;

	return abort && *abort;
}

static CURL *easy_new(const struct pyroscope_target *t, struct curl_slist **hdrs, struct answer *a)
{
	CURL *c;

	pthread_once(&curl_once, curl_init_once);
	if (!curl_ok)
		return NULL;
	c = curl_easy_init();
	if (!c)
		return NULL;
	*hdrs = NULL;
	if (t->auth)
		*hdrs = curl_slist_append(NULL, t->auth);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, *hdrs);
	/* Threads: no SIGALRM for name resolution timeouts. */
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_USERAGENT, "offcpu/" OFFCPU_VERSION);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)(t->connect_timeout_ms ? t->connect_timeout_ms : 5000));
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(t->timeout_ms ? t->timeout_ms : 30000));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_answer);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, (void *)t->abort);
	return c;
}

static int base_url(const struct pyroscope_target *t, char *out, size_t len, const char *path)
{
	size_t n = strlen(t->url);

	while (n && t->url[n - 1] == '/')
		n--;
	if ((size_t)snprintf(out, len, "%.*s%s", (int)n, t->url, path) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* 0 for a 2xx; the kinds of failure as the header says. */
static int classify(CURLcode rc, long status, const struct answer *a, char *why, size_t whylen)
{
	if (rc == CURLE_ABORTED_BY_CALLBACK) {
		snprintf(why, whylen, "given up: offcpu is stopping");
		return -ECANCELED;
	}
	if (rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL) {
		snprintf(why, whylen, "%s", curl_easy_strerror(rc));
		return -EINVAL;
	}
	if (rc != CURLE_OK) {
		snprintf(why, whylen, "%s", curl_easy_strerror(rc));
		return -EAGAIN;
	}
	if (status >= 200 && status < 300)
		return 0;
	snprintf(why, whylen, "HTTP %ld%s%s", status, a->n ? ": " : "", a->line);
	if (status >= 500 || status == 408 || status == 429)
		return -EAGAIN;
	return -EREMOTEIO;
}

int pyroscope__ingest(const struct pyroscope_target *t, const char *series, uint64_t from_ns,
		      uint64_t until_ns, const void *body, size_t len, char *why, size_t whylen)
{
	static const char config[] =
		"{\"off_cpu\": {\"units\": \"nanoseconds\", \"aggregation\": \"sum\", "
		"\"display-name\": \"" PYROSCOPE_PROFILE_NAME "\", \"sampled\": false}}";
	struct curl_slist *hdrs = NULL;
	struct answer a = {0};
	char url[4096], *name = NULL;
	curl_mime *mime = NULL;
	curl_mimepart *part;
	long status = 0;
	CURLcode rc;
	CURL *c;
	int err;

	c = easy_new(t, &hdrs, &a);
	if (!c) {
		snprintf(why, whylen, "libcurl could not start");
		return -ENOMEM;
	}
	name = curl_easy_escape(c, series, 0);
	/* from rounds down and until up: the period lies inside [from, until]. */
	if (!name || base_url(t, url, sizeof(url), "/ingest") ||
	    (size_t)snprintf(url + strlen(url), sizeof(url) - strlen(url),
			     "?name=%s&from=%llu&until=%llu&spyName=offcpu", name,
			     (unsigned long long)(from_ns / 1000000000),
			     (unsigned long long)((until_ns + 999999999) / 1000000000)) >=
		    sizeof(url) - strlen(url)) {
		snprintf(why, whylen, "the URL is too long");
		err = -ENAMETOOLONG;
		goto cleanup;
	}
	mime = curl_mime_init(c);
	part = curl_mime_addpart(mime);
	curl_mime_name(part, "profile");
	curl_mime_filename(part, "profile.pprof");
	curl_mime_type(part, "application/octet-stream");
	curl_mime_data(part, body, len);
	part = curl_mime_addpart(mime);
	curl_mime_name(part, "sample_type_config");
	curl_mime_filename(part, "sample_type_config.json");
	curl_mime_type(part, "application/json");
	curl_mime_data(part, config, CURL_ZERO_TERMINATED);
	curl_easy_setopt(c, CURLOPT_MIMEPOST, mime);
	curl_easy_setopt(c, CURLOPT_URL, url);
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	err = classify(rc, status, &a, why, whylen);
cleanup:
	curl_free(name);
	curl_mime_free(mime);
	curl_easy_cleanup(c);
	curl_slist_free_all(hdrs);
	return err;
}

int pyroscope__get(const struct pyroscope_target *t, const char *path, long *status, char *answer,
		   size_t answerlen, char *why, size_t whylen)
{
	struct curl_slist *hdrs = NULL;
	struct answer a = {0};
	char url[4096];
	CURLcode rc;
	CURL *c;
	int err = 0;

	*status = 0;
	answer[0] = 0;
	c = easy_new(t, &hdrs, &a);
	if (!c) {
		snprintf(why, whylen, "libcurl could not start");
		return -ENOMEM;
	}
	if (base_url(t, url, sizeof(url), path)) {
		snprintf(why, whylen, "the URL is too long");
		err = -ENAMETOOLONG;
		goto cleanup;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		snprintf(why, whylen, "%s", curl_easy_strerror(rc));
		err = rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL ? -EINVAL
										    : -EHOSTUNREACH;
		goto cleanup;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	snprintf(answer, answerlen, "%s", a.line);
cleanup:
	curl_easy_cleanup(c);
	curl_slist_free_all(hdrs);
	return err;
}
