// SPDX-License-Identifier: GPL-2.0-only
/*
 * The Pyroscope request's parts (push/pyroscope.h) and the pusher's contract
 * with its caller (push/pusher.h), without a server: labels, the credential
 * file, the string labels in the body, and a sender that never holds up
 * pusher__enqueue nor pusher__stop.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "output/pprof.h"
#include "profile_rows.h"
#include "push/pusher.h"
#include "push/pyroscope.h"
#include "unit.h"

static char *new_dir(void)
{
	char tmpl[PATH_MAX];
	const char *t = getenv("TMPDIR");

	snprintf(tmpl, sizeof(tmpl), "%s/push.XXXXXX", t && *t ? t : "/tmp");
	return strdup(mkdtemp(tmpl) ? tmpl : "");
}

static void rm_rf(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct profile *small_profile(void)
{
	static const char *const stack[] = {"u:main", "k:__schedule", NULL};
	struct profile *p = profile__new();

	if (!p)
		abort();
	add(p, "worker", 4242, OFFCPU_STATE_SLEEP, 5000000, 3, stack);
	return p;
}

TEST(push_labels_follow_pyroscope_rules)
{
	char why[256];

	CHECK_INT(pyroscope__label_check("env=prod", why, sizeof(why)), 0);
	CHECK_INT(pyroscope__label_check("_dc=eu-west/1.a", why, sizeof(why)), 0);
	CHECK_INT(pyroscope__label_check("env", why, sizeof(why)), -EINVAL);
	CHECK_INT(pyroscope__label_check("9env=x", why, sizeof(why)), -EINVAL);
	CHECK_INT(pyroscope__label_check("__name__=x", why, sizeof(why)), -EINVAL);
	CHECK_INT(pyroscope__label_check("my-env=x", why, sizeof(why)), -EINVAL);
	CHECK_INT(pyroscope__label_check("service_name=x", why, sizeof(why)), -EINVAL);
	CHECK_INT(pyroscope__label_check("env=", why, sizeof(why)), -EINVAL);
	CHECK_INT(pyroscope__label_check("env=a,b", why, sizeof(why)), -EINVAL);
	CHECK_INT(pyroscope__label_check("env=a}", why, sizeof(why)), -EINVAL);
	CHECK_INT(pyroscope__label_check("env= a", why, sizeof(why)), -EINVAL);
	CHECK_INT(pyroscope__app_check("my.app-1/x", why, sizeof(why)), 0);
	CHECK_INT(pyroscope__app_check("my app", why, sizeof(why)), -EINVAL);
}

TEST(push_series_has_host_then_the_users_labels)
{
	const char *labels[] = {"env=prod", "service=checkout"};
	const char *with_host[] = {"host=web-1"};
	const char *twice[] = {"env=a", "env=b"};
	char s[256], why[256];

	CHECK_INT(pyroscope__series(s, sizeof(s), "offcpu", "h1", labels, 2, why, sizeof(why)), 0);
	CHECK_STR(s, "offcpu{host=h1,env=prod,service=checkout}");
	CHECK_INT(pyroscope__series(s, sizeof(s), "offcpu", "h1", with_host, 1, why, sizeof(why)),
		  0);
	CHECK_STR(s, "offcpu{host=web-1}");
	CHECK_INT(pyroscope__series(s, sizeof(s), "offcpu", "", NULL, 0, why, sizeof(why)), 0);
	CHECK_STR(s, "offcpu{}");
	CHECK_INT(pyroscope__series(s, sizeof(s), "offcpu", "h1", twice, 2, why, sizeof(why)),
		  -EINVAL);
	CHECK_CONTAINS(why, "env is given twice");
	CHECK_INT(pyroscope__series(s, 12, "offcpu", "h1", labels, 2, why, sizeof(why)),
		  -ENAMETOOLONG);
}

static int write_auth(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	fclose(f);
	return chmod(path, mode);
}

TEST(push_auth_file_forms_and_permissions)
{
	char *dir = new_dir(), path[PATH_MAX], hdr[256], why[512];

	snprintf(path, sizeof(path), "%s/auth", dir);
	CHECK(!write_auth(path, "Bearer abc\n", 0600));
	CHECK_INT(pyroscope__auth_read(path, hdr, sizeof(hdr), why, sizeof(why)), 0);
	CHECK_STR(hdr, "Authorization: Bearer abc");
	CHECK(!write_auth(path, "  tok123  \nsecond line\n", 0400));
	CHECK_INT(pyroscope__auth_read(path, hdr, sizeof(hdr), why, sizeof(why)), 0);
	CHECK_STR(hdr, "Authorization: Bearer tok123");
	/* Grafana Cloud: basic auth, the stack's user id and a token. */
	CHECK(!write_auth(path, "Basic 12345:glc_x\n", 0600));
	CHECK_INT(pyroscope__auth_read(path, hdr, sizeof(hdr), why, sizeof(why)), 0);
	CHECK_STR(hdr, "Authorization: Basic MTIzNDU6Z2xjX3g=");
	CHECK(!write_auth(path, "Basic nocolon\n", 0600));
	CHECK_INT(pyroscope__auth_read(path, hdr, sizeof(hdr), why, sizeof(why)), -EINVAL);
	CHECK(!write_auth(path, "\n", 0600));
	CHECK_INT(pyroscope__auth_read(path, hdr, sizeof(hdr), why, sizeof(why)), -EINVAL);
	CHECK(!write_auth(path, "Bearer abc\n", 0640));
	CHECK_INT(pyroscope__auth_read(path, hdr, sizeof(hdr), why, sizeof(why)), -EPERM);
	CHECK_CONTAINS(why, "chmod 600");
	CHECK(!write_auth(path, "Bearer abc\n", 0604));
	CHECK_INT(pyroscope__auth_read(path, hdr, sizeof(hdr), why, sizeof(why)), -EPERM);
	rm_rf(dir);
	free(dir);
}

/* Whether the bytes of s occur in the gunzipped body. */
static int body_has(const uint8_t *gz, size_t len, const char *s)
{
	static uint8_t out[1 << 20];
	z_stream z = {0};
	size_t n;
	int found = 0;

	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return -1;
	z.next_in = (uint8_t *)gz;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = sizeof(out);
	inflate(&z, Z_FINISH);
	n = sizeof(out) - z.avail_out;
	inflateEnd(&z);
	for (size_t i = 0; i + strlen(s) <= n && !found; i++)
		found = !memcmp(out + i, s, strlen(s));
	return found;
}

TEST(push_body_carries_process_and_thread_as_strings)
{
	struct profile *p = small_profile();
	uint8_t *body = NULL, *plain = NULL;
	size_t len, plen;

	CHECK_INT(pyroscope__encode(p, 1000000000ull, 16000000000ull, &body, &len), 0);
	/* Pyroscope keeps only string labels: pid and tid go again as strings. */
	CHECK_INT(body_has(body, len, "process"), 1);
	CHECK_INT(body_has(body, len, "thread"), 1);
	CHECK_INT(body_has(body, len, "4242"), 1);
	CHECK_INT(body_has(body, len, "offcpu " OFFCPU_VERSION " push"), 1);
	/* The default export is unchanged. */
	CHECK_INT(pprof__encode(p, NULL, &plain, &plen), 0);
	for (size_t i = 0; i + 7 <= plen; i++)
		CHECK(memcmp(plain + i, "process", 7));
	free(plain);
	free(body);
	profile__free(p);
}

/* A socket that listens but never accepts: a request to it hangs. */
static int black_hole(int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)&a, &alen))
		return -1;
	*port = ntohs(a.sin_port);
	return fd;
}

TEST(pusher_never_waits_for_the_network)
{
	char *dir = new_dir(), url[64], why[512];
	struct profile *p = small_profile();
	struct push_stats st;
	struct pusher *ps;
	uint64_t t0, t1, t2;
	int port, fd = black_hole(&port), err;

	CHECK(fd >= 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	ps = pusher__new(&(struct push_opts){.url = url, .spool_dir = dir, .timeout_ms = 20000},
			 why, sizeof(why));
	CHECK(ps);
	CHECK_INT(pusher__enqueue(ps, p, 1000000000ull, 2000000000ull), 0);
	usleep(200 * 1000); /* the sender is now waiting for an answer */
	t0 = now_ms();
	CHECK_INT(pusher__enqueue(ps, p, 2000000000ull, 3000000000ull), 0);
	CHECK_INT(pusher__enqueue(ps, p, 2000000000ull, 3000000000ull), 1);
	t1 = now_ms();
	err = pusher__stop(ps, 300);
	t2 = now_ms();
	pusher__stats(ps, &st);
	pusher__free(ps);
	close(fd);
	CHECK(t1 - t0 < 500);
	/* The request in flight is abandoned at the deadline, not at its own timeout. */
	CHECK(t2 - t1 < 2500);
	CHECK_INT(err, -EAGAIN);
	CHECK_INT(st.queued, 2);
	CHECK_U64(st.sent, 0);
	profile__free(p);
	rm_rf(dir);
	free(dir);
}

TEST(pusher_retries_a_server_that_is_down_and_says_why)
{
	char *dir = new_dir(), url[64], why[512];
	struct profile *p = small_profile();
	struct push_stats st;
	struct pusher *ps;
	int port, fd = black_hole(&port);

	/* A port nobody listens on: connection refused. */
	CHECK(fd >= 0);
	close(fd);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", port);
	ps = pusher__new(
		&(struct push_opts){
			.url = url, .spool_dir = dir, .backoff_min_ms = 50, .backoff_max_ms = 100},
		why, sizeof(why));
	CHECK(ps);
	CHECK_INT(pusher__enqueue(ps, p, 1000000000ull, 2000000000ull), 0);
	usleep(600 * 1000);
	CHECK_INT(pusher__stop(ps, 0), -EAGAIN);
	pusher__stats(ps, &st);
	pusher__free(ps);
	CHECK(st.retries >= 3);
	CHECK_INT(st.queued, 1);
	CHECK_CONTAINS(st.last_error, "00000000001000000000.push: ");
	CHECK_CONTAINS(st.last_error, "onnect");
	profile__free(p);
	rm_rf(dir);
	free(dir);
}

TEST(pusher_refuses_bad_options_with_a_reason)
{
	char *dir = new_dir(), why[512] = "";
	const char *bad[] = {"1x=y"};

	CHECK(!pusher__new(&(struct push_opts){.url = "pyroscope:4040", .spool_dir = dir}, why,
			   sizeof(why)));
	CHECK_CONTAINS(why, "http://");
	CHECK(!pusher__new(
		&(struct push_opts){
			.url = "http://x", .spool_dir = dir, .labels = bad, .nr_labels = 1},
		why, sizeof(why)));
	CHECK_CONTAINS(why, "'1x'");
	rm_rf(dir);
	free(dir);
}

int main(void)
{
	return unit_run();
}
