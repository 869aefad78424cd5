// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <getopt.h>
#include <unistd.h>

#include "util/config.h"
#include "unit.h"

static int read_text(const char *text, struct config_args *a, char *err, size_t len)
{
	FILE *f = unit_memfile(text);
	int ret;

	if (!f)
		return -errno;
	err[0] = '\0';
	ret = config__read(f, "offcpu.conf", a, err, len);
	fclose(f);
	return ret;
}

/* argv[1..] joined by '|', and each one's line, to compare in one string. */
static const char *joined(const struct config_args *a)
{
	static char buf[1024];
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 1; i < a->argc; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%d:%s", i > 1 ? "|" : "",
				      a->lines[i], a->argv[i]);
	return buf;
}

TEST(config_lines_become_long_options)
{
	struct config_args a;
	char err[256];

	CHECK_INT(read_text("# offcpu\n"
			    "\n"
			    "every = 60s\n"
			    "  keep=24h  \n"
			    "\tkeep-size\t=\t2G\t\n"
			    "label = env=prod\n"
			    "label = \"team=a b\"   # quoted keeps spaces\n"
			    "label = c#d\n"
			    "output = /var/lib/offcpu # a comment after whitespace\n"
			    "kernel-threads\n"
			    "no-inline   # a flag and a comment\n"
			    "   # indented comment\n"
			    "push = \"http://h:4040/?a=\\\"b\\\"\\\\\"\r\n"
			    "last = no newline",
			    &a, err, sizeof(err)),
		  0);
	CHECK_STR(err, "");
	CHECK_STR(joined(&a),
		  "3:--every=60s|4:--keep=24h|5:--keep-size=2G|6:--label=env=prod|"
		  "7:--label=team=a b|8:--label=c#d|9:--output=/var/lib/offcpu|"
		  "10:--kernel-threads|11:--no-inline|13:--push=http://h:4040/?a=\"b\"\\|"
		  "14:--last=no newline");
	CHECK_STR(a.argv[0], "offcpu.conf");
	CHECK(a.argv[a.argc] == NULL);
	config__free(&a);
	CHECK(a.argv == NULL);
	config__free(&a);
	config__free(NULL);
}

TEST(config_empty_file_is_no_options)
{
	struct config_args a;
	char err[64];

	CHECK_INT(read_text("", &a, err, sizeof(err)), 0);
	CHECK_INT(a.argc, 1);
	CHECK(a.argv[1] == NULL);
	config__free(&a);
	CHECK_INT(read_text("\n\n# only comments\n   \n", &a, err, sizeof(err)), 0);
	CHECK_INT(a.argc, 1);
	config__free(&a);
}

TEST(config_errors_name_file_and_line)
{
	static const struct {
		const char *text;
		const char *err;
	} cases[] = {
		{"every = 60s\nkeep size = 2G\n",
		 "offcpu.conf:2: 'keep' is followed by more words: option names have no spaces"},
		{"\n\nlabel = \"a b\n", "offcpu.conf:3: 'label' has an unterminated quote"},
		{"label = \"a\" b\n", "offcpu.conf:1: 'label' has text after the closing quote"},
		{"--every = 60s\n",
		 "offcpu.conf:1: '--every' option names in a config have no leading"},
		{"every =\n", "offcpu.conf:1: 'every' has no value after '='"},
		{"every = # nothing\n", "offcpu.conf:1: 'every' has no value after '='"},
		{"= 60s\n", "offcpu.conf:1: the line starts with '='"},
		{"ev.ery = 1\n", "offcpu.conf:1: 'ev.ery' is not an option name"},
		{"-a\n", "offcpu.conf:1: '-a' is not an option name"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config_args a;
		char err[256];

		if (read_text(cases[i].text, &a, err, sizeof(err)) != -EINVAL ||
		    strncmp(err, cases[i].err, strlen(cases[i].err)))
			UNIT_FAIL("case %zu: '%s', expected '%s...'", i, err, cases[i].err);
		else if (strchr(err, '\n'))
			UNIT_FAIL("case %zu: the error is more than one line", i);
		CHECK(a.argv == NULL);
	}
}

TEST(config_long_line_and_nul_are_errors)
{
	char *text = malloc(CONFIG_LINE_MAX + 64), err[128];
	struct config_args a;
	FILE *f;
	int n;

	CHECK(text);
	/* Line 2 is "label = xxx...x\n", CONFIG_LINE_MAX bytes with its newline, then one more. */
	n = snprintf(text, CONFIG_LINE_MAX + 64, "every = 1\nlabel = ");
	memset(text + n, 'x', CONFIG_LINE_MAX);
	strcpy(text + 10 + CONFIG_LINE_MAX - 1, "\n");
	CHECK_INT(read_text(text, &a, err, sizeof(err)), 0);
	CHECK_INT(a.argc, 3);
	config__free(&a);
	strcpy(text + 10 + CONFIG_LINE_MAX - 1, "x\n");
	CHECK_INT(read_text(text, &a, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "offcpu.conf:2: the line is longer than 4096 bytes");
	free(text);

	f = fmemopen("every = 1\nkeep = 2\0h\n", 21, "r");
	CHECK(f);
	CHECK_INT(config__read(f, "c", &a, err, sizeof(err)), -EINVAL);
	fclose(f);
	CHECK_STR(err, "c:2: the line holds a NUL byte: not a text file?");
}

static const struct option opts[] = {
	{"every", required_argument, NULL, 'e'},
	{"label", required_argument, NULL, 'l'},
	{"json", optional_argument, NULL, 'j'},
	{"all", no_argument, NULL, 'a'},
	{"keep", required_argument, NULL, 'k'},
	{"keep-size", required_argument, NULL, 'K'},
	{NULL, 0, NULL, 0},
};

TEST(config_check_against_the_option_table)
{
	static const struct {
		const char *text;
		const char *err; /* NULL: accepted */
	} cases[] = {
		{"every = 1\nall\njson\njson = x\nkeep-size = 1G\n", NULL},
		{"every = 1\n\nevry = 2\n", "offcpu.conf:3: unknown option 'evry'"},
		/* No abbreviations in a file (getopt_long would take "kee" for keep). */
		{"kee = 1h\n", "offcpu.conf:1: unknown option 'kee'"},
		{"all = yes\n", "offcpu.conf:1: 'all' is a flag and takes no value"},
		/* A key alone must not swallow the next line as its value. */
		{"every\nlabel = a=b\n", "offcpu.conf:1: 'every' needs a value"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config_args a;
		char err[256] = "";
		int ret;

		CHECK_INT(read_text(cases[i].text, &a, err, sizeof(err)), 0);
		ret = config__check(&a, opts, err, sizeof(err));
		if (cases[i].err
			    ? ret != -EINVAL || strncmp(err, cases[i].err, strlen(cases[i].err))
			    : ret != 0)
			UNIT_FAIL("case %zu: ret %d '%s'", i, ret, err);
		config__free(&a);
	}
}

/* The way a command uses it: config first, command line after, so the command line wins. */
TEST(config_then_argv_through_getopt)
{
	char *argv[] = {"offcpu", "--every=5s", "--label", "cli=1", NULL};
	struct config_args a;
	const char *every = NULL, *labels[8];
	int nr_labels = 0, c, bad_index = -1;
	char err[256], where[64];

	CHECK_INT(read_text("every = 60s\nlabel = env=prod\nall\n", &a, err, sizeof(err)), 0);
	CHECK_INT(config__check(&a, opts, err, sizeof(err)), 0);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(a.argc, a.argv, "a", opts, NULL)) != -1) {
		if (c == 'e')
			every = optarg;
		else if (c == 'l')
			labels[nr_labels++] = optarg;
	}
	optind = 0;
	while ((c = getopt_long(4, argv, "a", opts, NULL)) != -1) {
		if (c == 'e')
			every = optarg;
		else if (c == 'l')
			labels[nr_labels++] = optarg;
	}
	CHECK_STR(every, "5s");
	CHECK_INT(nr_labels, 2);
	CHECK_STR(labels[0], "env=prod");
	CHECK_STR(labels[1], "cli=1");
	config__free(&a);

	/* A value the caller rejects is placed at its line through optind - 1. */
	CHECK_INT(read_text("all\n\nevery = 60s\nkeep = soon\n", &a, err, sizeof(err)), 0);
	optind = 0;
	while ((c = getopt_long(a.argc, a.argv, "a", opts, NULL)) != -1)
		if (c == 'k' && strcmp(optarg, "24h"))
			bad_index = optind - 1;
	CHECK_STR(config__where(&a, bad_index, where, sizeof(where)), "offcpu.conf:4");
	CHECK_STR(config__where(&a, 99, where, sizeof(where)), "offcpu.conf");
	config__free(&a);
}

/*
 * The shipped share/offcpu.conf reads, and names only options of the
 * continuous-mode contract, its commented examples too (uncommented here).
 */
TEST(config_shipped_example_parses)
{
	static const struct option record_keys[] = {
		{"output", required_argument, NULL, 0},
		{"every", required_argument, NULL, 0},
		{"keep", required_argument, NULL, 0},
		{"keep-size", required_argument, NULL, 0},
		{"push", required_argument, NULL, 0},
		{"push-auth", required_argument, NULL, 0},
		{"push-spool", required_argument, NULL, 0},
		{"label", required_argument, NULL, 0},
		{NULL, 0, NULL, 0},
	};
	char *text = unit_slurp("share/offcpu.conf"), err[256] = "";
	struct config_args a;
	size_t n = 0, len = 0;
	char *open_text;
	FILE *f;
	int labels = 0;

	CHECK(text);
	CHECK_INT(read_text(text, &a, err, sizeof(err)), 0);
	CHECK_INT(config__check(&a, record_keys, err, sizeof(err)), 0);
	CHECK_CONTAINS(joined(&a), "--every=60s");
	CHECK_CONTAINS(joined(&a), "--keep=24h");
	CHECK_CONTAINS(joined(&a), "--keep-size=2G");
	CHECK_CONTAINS(joined(&a), "--output=/var/lib/offcpu");
	config__free(&a);

	/* "# key = value" lines are examples: they must read as options once uncommented. */
	f = open_memstream(&open_text, &len);
	CHECK(f);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		size_t k = strspn(line + 2, "abcdefghijklmnopqrstuvwxyz-");

		if (!strncmp(line, "# ", 2) && k && !strncmp(line + 2 + k, " = ", 3)) {
			fprintf(f, "%s\n", line + 2);
			n++;
		}
	}
	fclose(f);
	CHECK(n >= 5);
	CHECK_INT(read_text(open_text, &a, err, sizeof(err)), 0);
	CHECK_INT(config__check(&a, record_keys, err, sizeof(err)), 0);
	for (int i = 1; i < a.argc; i++)
		labels += !strncmp(a.argv[i], "--label=", 8) && strchr(a.argv[i] + 8, '=');
	CHECK(labels >= 1);
	CHECK_CONTAINS(joined(&a), "--push=http://");
	config__free(&a);
	free(open_text);
	free(text);
}

TEST(config_load_a_path)
{
	char dir[] = "/tmp/offcpu-config.XXXXXX", path[64], err[256];
	struct config_args a;
	FILE *f;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/offcpu.conf", dir);
	CHECK_INT(config__load(path, opts, &a, err, sizeof(err)), -ENOENT);
	CHECK(!strncmp(err, dir, strlen(dir)));
	CHECK_CONTAINS(err, "/offcpu.conf: cannot open: No such file or directory");
	CHECK(a.argv == NULL);
	f = fopen(path, "w");
	CHECK(f);
	fputs("every = 1m\nall\n", f);
	fclose(f);
	CHECK_INT(config__load(path, opts, &a, err, sizeof(err)), 0);
	CHECK_INT(a.argc, 3);
	CHECK_STR(a.argv[1], "--every=1m");
	config__free(&a);
	f = fopen(path, "a");
	CHECK(f);
	fputs("bogus = 1\n", f);
	fclose(f);
	CHECK_INT(config__load(path, opts, &a, err, sizeof(err)), -EINVAL);
	CHECK_CONTAINS(err, "/offcpu.conf:3: unknown option 'bogus'");
	CHECK(a.argv == NULL);
	/* Without a table, only the syntax is checked. */
	CHECK_INT(config__load(path, NULL, &a, err, sizeof(err)), 0);
	CHECK_INT(a.argc, 4);
	config__free(&a);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	return unit_run();
}
