// SPDX-License-Identifier: GPL-2.0-only
/* The record config file, read into an argv for getopt_long (see config.h). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/config.h"

static void say(char *err, size_t errlen, const char *path, int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || !errlen)
		return;
	n = line ? snprintf(err, errlen, "%s:%d: ", path, line)
		 : snprintf(err, errlen, "%s: ", path);
	if (n < 0 || (size_t)n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_key_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_';
}

static int push(struct config_args *a, char *arg, int line)
{
	char **argv = realloc(a->argv, (size_t)(a->argc + 2) * sizeof(*argv));
	int *lines;

	if (!argv)
		return -ENOMEM;
	a->argv = argv;
	lines = realloc(a->lines, (size_t)(a->argc + 1) * sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	a->lines = lines;
	a->argv[a->argc] = arg;
	a->lines[a->argc] = line;
	a->argv[++a->argc] = NULL;
	return 0;
}

/*
 * The value of a quoted "..." starting at s (at the quote), unescaped in place
 * into out; *rest points after the closing quote. -EINVAL when unterminated.
 */
static int unquote(char *s, char **out, char **rest)
{
	char *w = s, *r = s + 1;

	for (; *r && *r != '"'; r++) {
		if (*r == '\\' && (r[1] == '"' || r[1] == '\\'))
			r++;
		*w++ = *r;
	}
	if (*r != '"')
		return -EINVAL;
	*w = '\0';
	*out = s;
	*rest = r + 1;
	return 0;
}

/*
 * One line, without its newline: nothing (blank, comment), or "--key" /
 * "--key=value" into *arg (malloc'ed). 0 or -EINVAL with the reason in why.
 */
static int parse_line(char *s, char **arg, const char **why, char *key_buf, size_t key_len)
{
	char *end, *key, *value = NULL, *rest;
	size_t klen;

	*arg = NULL;
	while (is_space(*s))
		s++;
	end = s + strlen(s);
	while (end > s && is_space(end[-1]))
		*--end = '\0';
	if (!*s || *s == '#')
		return 0;
	key = s;
	while (*s && !is_space(*s) && *s != '=')
		s++;
	klen = (size_t)(s - key);
	snprintf(key_buf, key_len, "%.*s", (int)klen, key);
	if (klen >= 2 && key[0] == '-' && key[1] == '-') {
		*why = "option names in a config have no leading '--' (write 'every = 60s')";
		return -EINVAL;
	}
	for (size_t i = 0; i < klen; i++) {
		if (!is_key_char(key[i]) || (i == 0 && !isalnum((unsigned char)key[i]))) {
			*why = "is not an option name (letters, digits and '-'; write 'key = "
			       "value')";
			return -EINVAL;
		}
	}
	if (!klen) {
		*why = "the line starts with '=': the option's name is missing (write 'key = "
		       "value')";
		return -EINVAL;
	}
	while (is_space(*s))
		s++;
	if (*s == '=') {
		for (s++; is_space(*s);)
			s++;
		if (*s == '"') {
			if (unquote(s, &value, &rest)) {
				*why = "has an unterminated quote (close it with '\"')";
				return -EINVAL;
			}
			while (is_space(*rest))
				rest++;
			if (*rest && *rest != '#') {
				*why = "has text after the closing quote (quote the whole value)";
				return -EINVAL;
			}
		} else {
			/* A '#' after whitespace starts a comment; inside a word it is text. */
			value = s;
			for (char *p = s; *p; p++) {
				if (*p == '#' && p > s && is_space(p[-1])) {
					*p = '\0';
					break;
				}
			}
			end = value + strlen(value);
			while (end > value && is_space(end[-1]))
				*--end = '\0';
			if (!*value || *value == '#') {
				*why = "has no value after '=' (write 'key = value', or the key "
				       "alone "
				       "for a flag)";
				return -EINVAL;
			}
		}
	} else if (*s && *s != '#') {
		*why = "is followed by more words: option names have no spaces (write "
		       "'key = value')";
		return -EINVAL;
	}
	key[klen] = '\0';
	if (value ? asprintf(arg, "--%s=%s", key, value) < 0 : asprintf(arg, "--%s", key) < 0) {
		*arg = NULL;
		return -ENOMEM;
	}
	return 0;
}

int config__read(FILE *f, const char *path, struct config_args *out, char *err, size_t errlen)
{
	char *line = NULL, *arg, key[64];
	size_t cap = 0;
	ssize_t n;
	int lineno = 0, ret = 0;
	const char *why;

	memset(out, 0, sizeof(*out));
	out->path = strdup(path);
	if (!out->path || push(out, out->path, 0)) {
		ret = -ENOMEM;
		goto cleanup;
	}
	/* argv[0] is the path itself: freed with path, not as an argument. */
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if ((size_t)n > CONFIG_LINE_MAX) {
			say(err, errlen, path, lineno, "the line is longer than %d bytes",
			    CONFIG_LINE_MAX);
			ret = -EINVAL;
			goto cleanup;
		}
		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		if (strlen(line) != (size_t)n) {
			say(err, errlen, path, lineno,
			    "the line holds a NUL byte: not a text file?");
			ret = -EINVAL;
			goto cleanup;
		}
		why = NULL;
		key[0] = '\0';
		ret = parse_line(line, &arg, &why, key, sizeof(key));
		if (ret) {
			if (why && *key)
				say(err, errlen, path, lineno, "'%s' %s", key, why);
			else if (why)
				say(err, errlen, path, lineno, "%s", why);
			else
				say(err, errlen, path, lineno, "%s", strerror(-ret));
			goto cleanup;
		}
		if (arg && push(out, arg, lineno)) {
			free(arg);
			ret = -ENOMEM;
			goto cleanup;
		}
	}
	if (ferror(f)) {
		ret = -EIO;
		say(err, errlen, path, 0, "cannot read: %s", strerror(errno ? errno : EIO));
	}
cleanup:
	free(line);
	if (ret) {
		if (ret == -ENOMEM)
			say(err, errlen, path, 0, "%s", strerror(ENOMEM));
		config__free(out);
	}
	return ret;
}

int config__check(const struct config_args *a, const struct option *opts, char *err, size_t errlen)
{
	for (int i = 1; i < a->argc; i++) {
		const char *key = a->argv[i] + 2, *eq = strchr(key, '=');
		size_t klen = eq ? (size_t)(eq - key) : strlen(key);
		const struct option *o;

		for (o = opts; o->name; o++)
			if (strlen(o->name) == klen && !strncmp(o->name, key, klen))
				break;
		if (!o->name) {
			say(err, errlen, a->path, a->lines[i], "unknown option '%.*s'", (int)klen,
			    key);
			return -EINVAL;
		}
		if (eq && o->has_arg == no_argument) {
			say(err, errlen, a->path, a->lines[i],
			    "'%s' is a flag and takes no value (write '%s' alone)", o->name,
			    o->name);
			return -EINVAL;
		}
		if (!eq && o->has_arg == required_argument) {
			say(err, errlen, a->path, a->lines[i],
			    "'%s' needs a value (write '%s = ...')", o->name, o->name);
			return -EINVAL;
		}
	}
	return 0;
}

int config__load(const char *path, const struct option *opts, struct config_args *out, char *err,
		 size_t errlen)
{
	FILE *f = fopen(path, "re");
	int ret;

	memset(out, 0, sizeof(*out));
	if (!f) {
		ret = -errno;
		say(err, errlen, path, 0, "cannot open: %s", strerror(-ret));
		return ret;
	}
	ret = config__read(f, path, out, err, errlen);
	fclose(f);
	if (!ret && opts) {
		ret = config__check(out, opts, err, errlen);
		if (ret)
			config__free(out);
	}
	return ret;
}

char *config__where(const struct config_args *a, int i, char *buf, size_t len)
{
	if (i >= 1 && i < a->argc)
		snprintf(buf, len, "%s:%d", a->path, a->lines[i]);
	else
		snprintf(buf, len, "%s", a->path ? a->path : "");
	return buf;
}

void config__free(struct config_args *a)
{
	if (!a)
		return;
	for (int i = 1; i < a->argc; i++)
		free(a->argv[i]);
	free(a->argv);
	free(a->lines);
	free(a->path);
	memset(a, 0, sizeof(*a));
}
