/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One request to a Grafana Pyroscope server's ingest API (docs/push.md): the
 * profile of one period as pprof, sent with libcurl.
 *
 *   POST URL/ingest?name=APP{host=H,K=V,...}&from=S&until=S&spyName=offcpu
 *   Content-Type: multipart/form-data
 *     profile             the gzipped profile.proto (output/pprof.h, with the
 *                         string labels process and thread)
 *     sample_type_config  JSON: off_cpu is summed, not sampled, and shown
 *                         under PYROSCOPE_PROFILE_NAME
 *
 * Errors are sorted for the sender: 0 (a 2xx), -EAGAIN (worth retrying: no
 * connection, a timeout, 5xx, 408, 429), -EREMOTEIO (the server refused it
 * for good: any other status), -ECANCELED (the caller's abort flag), -EINVAL
 * (a URL libcurl does not take). The reason is one line: "HTTP 401: the first
 * line of the server's answer", or libcurl's words.
 */
#ifndef OFFCPU_PUSH_PYROSCOPE_H
#define OFFCPU_PUSH_PYROSCOPE_H

#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

/*
 * The profile name (Pyroscope's __name__) the off_cpu sample type is shown
 * under. The ingest API derives it from the sample types and turns every name
 * holding "cpu" into process_cpu, the CPU profile: off_cpu is renamed here so
 * that off-CPU time is never listed as CPU time.
 */
#define PYROSCOPE_PROFILE_NAME "wait"
#define PYROSCOPE_DEFAULT_APP "offcpu"

struct pyroscope_target {
	const char *url;  /* the server, e.g. http://pyroscope:4040 (a trailing / is fine) */
	const char *auth; /* a whole header ("Authorization: ..."), NULL for none */
	int connect_timeout_ms, timeout_ms;
	/* When set and non-zero, a request in flight is given up (-ECANCELED). */
	const volatile int *abort;
};

/* "K=V" for --label: Pyroscope's label name rules, a value it parses back. 0 or -EINVAL. */
int pyroscope__label_check(const char *kv, char *why, size_t whylen);
/* An application name (--name): letters, digits, _ . - /. 0 or -EINVAL. */
int pyroscope__app_check(const char *app, char *why, size_t whylen);
/*
 * The series: app{host=HOST,K=V,...} into out. host is left out when labels
 * name one (the user's wins). 0, -EINVAL (a bad label, or one given twice),
 * -ENAMETOOLONG.
 */
int pyroscope__series(char *out, size_t len, const char *app, const char *host,
		      const char *const *labels, size_t nr_labels, char *why, size_t whylen);

/*
 * The credential in path as a header into out: its first line is "Bearer
 * TOKEN", "Basic USER:PASSWORD" or a bare token (bearer). A file that group
 * or others may read is refused (-EPERM), as is an empty one (-EINVAL).
 */
int pyroscope__auth_read(const char *path, char *out, size_t len, char *why, size_t whylen);

/* The gzipped pprof of p for one period [from_ns, until_ns), in a malloc()ed buffer. */
int pyroscope__encode(const struct profile *p, uint64_t from_ns, uint64_t until_ns, uint8_t **body,
		      size_t *len);

/* POST one period's body (pyroscope__encode) under series. See the errors above. */
int pyroscope__ingest(const struct pyroscope_target *t, const char *series, uint64_t from_ns,
		      uint64_t until_ns, const void *body, size_t len, char *why, size_t whylen);

/*
 * GET URL/path with the target's credentials (for doctor): *status is the
 * HTTP status (0 when there was no answer), answer its first line. 0 when an
 * answer came, else -errno with why.
 */
int pyroscope__get(const struct pyroscope_target *t, const char *path, long *status, char *answer,
		   size_t answerlen, char *why, size_t whylen);

#endif
