// SPDX-License-Identifier: GPL-2.0-only
/* offcpu doctor: what works on this host for off-CPU collection, and why not. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "collect/probe.h"
#include "push/pyroscope.h"

static void push_line(const char *verdict, const char *name, const char *seen, const char *fix)
{
	printf("%-4s %-10s %s", verdict, name, seen);
	if (fix && fix[0])
		printf("; fix: %s", fix);
	putchar('\n');
}

/*
 * offcpu doctor --push URL: does the Pyroscope server answer, and does it (or
 * the proxy in front of it) take the credential? Exit 0 when it does.
 */
static int doctor_push(const char *url, const char *auth_file)
{
	struct pyroscope_target t = {.url = url, .connect_timeout_ms = 5000, .timeout_ms = 10000};
	char auth[4096], seen[1024], why[512], answer[256], *v;
	long status;
	int err;

	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		push_line("FAIL", "push-url", url, "give an http:// or https:// URL");
		return 1;
	}
	if (auth_file) {
		err = pyroscope__auth_read(auth_file, auth, sizeof(auth), why, sizeof(why));
		if (err) {
			push_line("FAIL", "push-auth", why, NULL);
			return 1;
		}
		snprintf(seen, sizeof(seen), "%s: a %s credential, not readable by group or others",
			 auth_file, strstr(auth, "Basic") ? "basic" : "bearer");
		push_line("ok", "push-auth", seen, NULL);
		t.auth = auth;
	}
	/* /ready: Pyroscope's readiness endpoint; a proxy in front checks the credential. */
	err = pyroscope__get(&t, "/ready", &status, answer, sizeof(answer), why, sizeof(why));
	if (err) {
		snprintf(seen, sizeof(seen), "%s/ready: no answer: %s", url, why);
		push_line("FAIL", "push-ready", seen, "check the URL, the network and the server");
		return 1;
	}
	snprintf(seen, sizeof(seen), "%s/ready: HTTP %ld%s%s", url, status, answer[0] ? ": " : "",
		 answer);
	if (status == 401 || status == 403) {
		push_line("FAIL", "push-auth", seen,
			  auth_file ? "the credential was refused: check --auth-file"
				    : "the server wants a credential: give --auth-file");
		return 1;
	}
	if (status != 200) {
		push_line("FAIL", "push-ready", seen,
			  status == 404 ? "is URL a Pyroscope server (its base, without /ingest)?"
					: "the server is not ready yet; look at its logs");
		return 1;
	}
	push_line("ok", "push-ready", seen, NULL);
	/* The version, for the record: a server without the endpoint is not a failure. */
	if (!pyroscope__get(&t, "/api/v1/status/buildinfo", &status, answer, sizeof(answer), why,
			    sizeof(why)) &&
	    status == 200 && (v = strstr(answer, "\"version\""))) {
		v += strlen("\"version\"");
		v += strspn(v, " :\"");
		snprintf(seen, sizeof(seen), "server version %.*s", (int)strcspn(v, "\""), v);
		push_line("info", "push-build", seen, NULL);
	}
	explicit_bzero(auth, sizeof(auth));
	printf("push: %s takes profiles from this host\n", url);
	return 0;
}

int cmd_doctor(int argc, char **argv)
{
	struct probe_result res[32];
	const char *binary = NULL, *push_url = NULL, *auth_file = NULL;
	int native_ok = 1;
	size_t n;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: offcpu doctor [--binary PATH]\n"
			       "       offcpu doctor --push URL [--auth-file FILE]\n\n"
			       "One line per check: ok, warn, FAIL or info, what was seen, and the "
			       "fix.\n"
			       "Exit status 0 when the native collector can run here, 1 "
			       "otherwise.\n"
			       "With --push, only the push target is checked: it answers "
			       "GET /ready with the\n"
			       "credential; exit status 0 when it does.\n");
			return 0;
		}
		if (!strcmp(argv[i], "--binary") && i + 1 < argc) {
			binary = argv[++i];
			continue;
		}
		if (!strcmp(argv[i], "--push") && i + 1 < argc) {
			push_url = argv[++i];
			continue;
		}
		if (!strcmp(argv[i], "--auth-file") && i + 1 < argc) {
			auth_file = argv[++i];
			continue;
		}
		fprintf(stderr, "offcpu doctor: unknown argument '%s'; try --help\n", argv[i]);
		return 2;
	}
	if (auth_file && !push_url) {
		fprintf(stderr, "offcpu doctor: --auth-file goes with --push URL\n");
		return 2;
	}
	if (push_url)
		return doctor_push(push_url, auth_file);
	n = probe__run_all(res, sizeof(res) / sizeof(res[0]), binary);
	for (size_t i = 0; i < n; i++) {
		printf("%-4s %-10s %s", probe_verdict__name(res[i].verdict), res[i].name,
		       res[i].seen);
		if (res[i].fix[0])
			printf("; fix: %s", res[i].fix);
		putchar('\n');
		if (res[i].verdict == PROBE_FAIL && res[i].needed_by_native)
			native_ok = 0;
	}
	printf("%s\n", native_ok ? "native collector: can run here"
				 : "native collector: cannot run here (see FAIL lines)");
	return native_ok ? 0 : 1;
}
