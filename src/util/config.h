/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The config file of `offcpu record --config FILE`: one option per line,
 * turned into the argv the command line would have held, so that one getopt
 * table parses both and the config accepts exactly what the command line
 * does.
 *
 *     # comment (at the start of a line, or after whitespace)
 *     every = 60s               ->  --every=60s
 *     label = env=prod          ->  --label=env=prod   (the first '=' splits)
 *     label = "team=a b"        ->  --label=team=a b   (quotes keep spaces; \" and \\)
 *     kernel-threads            ->  --kernel-threads   (a key alone: a flag)
 *
 * Keys are long option names without "--" (letters, digits, '-', '_').
 * Whitespace around '=' and at both ends of a line is dropped, as are blank
 * lines. Errors name the place: "FILE:LINE: what", one line.
 *
 * The reader does not know the keys. The caller parses the config's argv
 * first and its own argv after, so the command line wins:
 *
 *     config__read(f, path, &cfg, err, sizeof(err));
 *     config__check(&cfg, longopts, err, sizeof(err));  // unknown keys, values
 *     optind = 0; opterr = 0; while (getopt_long(cfg.argc, cfg.argv, ...)) ...
 *     optind = 0; while (getopt_long(argc, argv, ...)) ...
 *
 * A value the caller rejects is reported at its line with
 * config__where(&cfg, optind - 1, ...) (getopt_long has moved optind past
 * the argument it returned). A key the caller does not allow in a config
 * (config itself, help) is the caller's to refuse.
 */
#ifndef OFFCPU_UTIL_CONFIG_H
#define OFFCPU_UTIL_CONFIG_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

/* Longer lines are an error, not silently cut. */
#define CONFIG_LINE_MAX 4096

struct config_args {
	int argc;
	/*
	 * argv[0] is the config's path (getopt's program name), then one
	 * "--key" or "--key=value" per option line; argv[argc] is NULL.
	 */
	char **argv;
	int *lines; /* lines[i]: the line argv[i] came from; lines[0] is 0 */
	char *path;
};

/* 0, or -errno with "FILE:LINE: what" (or "FILE: what") in err. out is freed on error. */
int config__read(FILE *f, const char *path, struct config_args *out, char *err, size_t errlen);
/*
 * Every key names a long option in opts (exactly: no abbreviations in a
 * file), a flag takes no value, an option with a required argument has
 * one. 0 or -EINVAL with "FILE:LINE: what" in err.
 */
int config__check(const struct config_args *a, const struct option *opts, char *err, size_t errlen);
/* "FILE:LINE" of argv[i] into buf ("FILE" when i is out of range). Returns buf. */
char *config__where(const struct config_args *a, int i, char *buf, size_t len);
/*
 * The whole of it for a path: open (a missing or unreadable file is
 * "FILE: cannot open: why"), config__read, and config__check when opts is
 * not NULL. 0 or -errno with the message in err.
 */
int config__load(const char *path, const struct option *opts, struct config_args *out, char *err,
		 size_t errlen);
/* Frees what config__read made and zeroes *a; accepts a zeroed or NULL a. */
void config__free(struct config_args *a);

#endif
