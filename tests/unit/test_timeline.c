// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <sys/stat.h>
#include <linux/types.h>
#include <unistd.h>

#include "unit.h"

#include "bpf/offcpu.h"
#include "collect/wakers.h"

#include "exports_fixture.h"

TEST(timeline_append_and_at_keep_order)
{
	struct timeline *t = fixture_timeline();

	CHECK(t);
	CHECK_INT(timeline__nr(t), 4);
	CHECK_U64(timeline__at(t, 0)->start_ns, 1000500000);
	CHECK_INT(timeline__at(t, 2)->state, OFFCPU_STATE_PREEMPT);
	CHECK_INT(timeline__at(t, 1)->waker_tid, 101);
	CHECK(timeline__at(t, 4) == NULL);
	CHECK_INT(timeline__nr(NULL), 0);
	timeline__free(t);
	timeline__free(NULL);
}

TEST(timeline_append_rejects_impossible_intervals)
{
	struct timeline *t = timeline__new();
	struct timeline_interval bad_runq = fixture_iv(10, 5, 6, 1, 0, OFFCPU_STATE_SLEEP, 0);
	struct timeline_interval wraps =
		fixture_iv(UINT64_MAX - 2, 5, 0, 1, 0, OFFCPU_STATE_SLEEP, 0);
	struct timeline_interval bad_state = fixture_iv(10, 5, 0, 1, 0, OFFCPU_STATE__COUNT, 0);
	struct timeline_interval ok = fixture_iv(10, 5, 5, 1, 0, OFFCPU_STATE_PREEMPT, 0);

	CHECK(t);
	CHECK_INT(timeline__append(t, &bad_runq), -EINVAL);
	CHECK_INT(timeline__append(t, &wraps), -EINVAL);
	CHECK_INT(timeline__append(t, &bad_state), -EINVAL);
	CHECK_INT(timeline__nr(t), 0);
	CHECK_INT(timeline__append(t, &ok), 0);
	CHECK_INT(timeline__nr(t), 1);
	timeline__free(t);
}

TEST(timeline_sorted_orders_by_tid_then_start_then_append)
{
	struct timeline *t = timeline__new();
	struct timeline_interval v[] = {
		fixture_iv(50, 1, 0, 7, 0, OFFCPU_STATE_SLEEP, 0),
		fixture_iv(10, 1, 0, 9, 0, OFFCPU_STATE_SLEEP, 0),
		fixture_iv(20, 1, 0, 7, 0, OFFCPU_STATE_SLEEP, 0),
		fixture_iv(50, 2, 0, 7, 0, OFFCPU_STATE_DISK, 0),
		fixture_iv(5, 1, 0, 8, 0, OFFCPU_STATE_SLEEP, 0),
	};
	size_t want[] = {2, 0, 3, 4, 1}, *idx = NULL;

	CHECK(t);
	for (size_t i = 0; i < 5; i++)
		CHECK_INT(timeline__append(t, &v[i]), 0);
	CHECK_INT(timeline__sorted(t, &idx), 0);
	CHECK(idx);
	for (size_t i = 0; i < 5; i++)
		CHECK_INT(idx[i], want[i]);
	free(idx);
	timeline__free(t);

	t = timeline__new();
	idx = (size_t *)1;
	CHECK_INT(timeline__sorted(t, &idx), 0);
	CHECK(idx == NULL);
	timeline__free(t);
}

static int write_fixture(FILE *out, const void *arg)
{
	const void *const *pt = arg;

	return timeline__write(out, pt[0], pt[1]);
}

TEST(timeline_write_matches_golden)
{
	struct profile *p = fixture_profile();
	struct timeline *t = fixture_timeline();
	const void *args[2] = {t, p};
	const char *why;
	char *text;
	int err;

	CHECK(p && t);
	text = fixture_capture(write_fixture, args, &err, NULL);
	CHECK_INT(err, 0);
	why = fixture_golden("timeline_small.txt", text);
	if (why)
		UNIT_FAIL("%s", why);
	/* Each stack is defined once, before its first use. */
	CHECK_CONTAINS(text, "lost 0 0\nstack 1 u:main;u:worker_loop;");
	CHECK(!strstr(strstr(text, "\nstack 1 ") + 1, "\nstack 1 "));
	free(text);
	timeline__free(t);
	profile__free(p);
}

/* The threshold and the losses travel with the intervals; malformed ones are counted. */
TEST(timeline_info_roundtrips_and_is_checked)
{
	struct profile *p = fixture_profile(), *q = profile__new();
	struct timeline *t = fixture_timeline(), *u = timeline__new();
	struct timeline_info info = {.min_ns = 1000000, .lost = 3, .lost_ns = 4500000};
	struct parse_stats st;
	const void *args[2] = {t, p};
	char *text;
	FILE *in;
	int err;

	CHECK(p && q && t && u);
	timeline__set_info(t, &info);
	text = fixture_capture(write_fixture, args, &err, NULL);
	CHECK_INT(err, 0);
	CHECK_CONTAINS(text, "offcpu-timeline 2\nthreshold 1000000\nlost 3 4500000\n");
	in = unit_memfile(text);
	CHECK_INT(timeline__parse(in, q, u, &st), 0);
	fclose(in);
	CHECK_U64(timeline__info(u)->min_ns, 1000000);
	CHECK_U64(timeline__info(u)->lost, 3);
	CHECK_U64(timeline__info(u)->lost_ns, 4500000);
	free(text);
	timeline__free(u);

	u = timeline__new();
	in = unit_memfile("offcpu-timeline 1\nthreshold 1ms\nlost 3\n");
	CHECK_INT(timeline__parse(in, q, u, &st), 0);
	fclose(in);
	CHECK_INT(st.malformed, 2);
	CHECK_INT(st.first_malformed_line, 2);
	CHECK_STR(st.first_malformed_reason, "bad threshold");
	CHECK_U64(timeline__info(u)->min_ns, 0);
	timeline__free(u);
	timeline__free(t);
	profile__free(p);
	profile__free(q);
}

TEST(timeline_roundtrips_through_text_into_another_profile)
{
	struct profile *p = fixture_profile(), *q = profile__new();
	struct timeline *t = fixture_timeline(), *u = timeline__new();
	struct parse_stats st;
	const void *args[2] = {t, p};
	char *text;
	FILE *in;
	int err;

	CHECK(p && q && t && u);
	/* q interns unrelated stacks first, so no stack keeps its id from p. */
	CHECK(fixture_stack(q, "other;-;schedule") >= 0);
	CHECK(fixture_stack(q, "another;-;schedule") >= 0);
	text = fixture_capture(write_fixture, args, &err, NULL);
	CHECK_INT(err, 0);
	in = unit_memfile(text);
	CHECK_INT(timeline__parse(in, q, u, &st), 0);
	fclose(in);
	CHECK_INT(st.malformed, 0);
	CHECK_INT(st.records, 4);
	CHECK_INT(timeline__nr(u), 4);
	for (size_t i = 0; i < 4; i++) {
		const struct timeline_interval *a = timeline__at(t, i), *b = timeline__at(u, i);
		size_t na, nb;
		const uint32_t *fa = profile__stack_at(p, a->stack, &na);
		const uint32_t *fb = profile__stack_at(q, b->stack, &nb);

		CHECK_U64(b->start_ns, a->start_ns);
		CHECK_U64(b->dur_ns, a->dur_ns);
		CHECK_U64(b->runq_ns, a->runq_ns);
		CHECK_INT(b->pid, a->pid);
		CHECK_INT(b->tid, a->tid);
		CHECK_INT(b->state, a->state);
		CHECK_INT(b->waker_tid, a->waker_tid);
		CHECK(b->stack != a->stack);
		CHECK_INT(nb, na);
		for (size_t j = 0; j < na; j++) {
			CHECK_STR(profile__frame_at(q, fb[j])->name,
				  profile__frame_at(p, fa[j])->name);
			CHECK_INT(profile__frame_at(q, fb[j])->kind,
				  profile__frame_at(p, fa[j])->kind);
		}
	}
	/* The timeline names stacks; it adds no weight to the profile. */
	CHECK_INT(profile__nr_rows(q), 0);
	free(text);
	timeline__free(t);
	timeline__free(u);
	profile__free(p);
	profile__free(q);
}

TEST(timeline_escapes_names_with_separators)
{
	struct profile *p = profile__new(), *q = profile__new();
	struct timeline *t = timeline__new(), *u = timeline__new();
	const char *odd = "operator;%20 \"x\"\n\ttail";
	struct timeline_interval v;
	const void *args[2];
	uint32_t f;
	size_t n;
	char *text;
	FILE *in;
	int err, sk, sk_empty;

	CHECK(p && q && t && u);
	f = (uint32_t)profile__frame(p, FRAME_INLINE, odd, strlen(odd));
	sk = profile__stack(p, &f, 1);
	sk_empty = profile__stack(p, NULL, 0);
	CHECK(sk >= 0 && sk_empty >= 0);
	v = fixture_iv(1, 2, 0, 3, (uint32_t)sk, OFFCPU_STATE_OTHER, 0);
	CHECK_INT(timeline__append(t, &v), 0);
	v = fixture_iv(5, 2, 1, 3, (uint32_t)sk_empty, OFFCPU_STATE_UNKNOWN, -1);
	CHECK_INT(timeline__append(t, &v), 0);
	args[0] = t;
	args[1] = p;
	text = fixture_capture(write_fixture, args, &err, NULL);
	CHECK_INT(err, 0);
	CHECK_CONTAINS(text, "i:operator%3B%2520 \"x\"%0A%09tail\n");
	in = unit_memfile(text);
	CHECK_INT(timeline__parse(in, q, u, NULL), 0);
	fclose(in);
	CHECK_INT(timeline__nr(u), 2);
	CHECK_STR(
		profile__frame_at(q, profile__stack_at(q, timeline__at(u, 0)->stack, &n)[0])->name,
		odd);
	CHECK_INT(
		profile__frame_at(q, profile__stack_at(q, timeline__at(u, 0)->stack, &n)[0])->kind,
		FRAME_INLINE);
	profile__stack_at(q, timeline__at(u, 1)->stack, &n);
	CHECK_INT(n, 0);
	CHECK_INT(timeline__at(u, 1)->state, OFFCPU_STATE_UNKNOWN);
	CHECK_INT(timeline__at(u, 1)->waker_tid, -1);
	free(text);
	timeline__free(t);
	timeline__free(u);
	profile__free(p);
	profile__free(q);
}

TEST(timeline_write_refuses_unknown_stack_before_writing)
{
	struct profile *p = fixture_profile();
	struct timeline *t = timeline__new();
	struct timeline_interval v = fixture_iv(1, 1, 0, 1, 99, OFFCPU_STATE_SLEEP, 0);
	const void *args[2] = {t, p};
	size_t len = 1;
	char *text;
	int err;

	CHECK(p && t);
	CHECK_INT(timeline__append(t, &v), 0);
	text = fixture_capture(write_fixture, args, &err, &len);
	CHECK_INT(err, -EINVAL);
	CHECK(text == NULL);
	CHECK_INT(len, 0);
	timeline__free(t);
	profile__free(p);
}

TEST(timeline_parse_refuses_other_versions)
{
	struct profile *p = profile__new();
	struct timeline *t = timeline__new();
	const char *inputs[] = {"offcpu-timeline 3\ninterval 1 1 0 1 1 S 0 0\n",
				"offcpu-timeline 0\ninterval 1 1 0 1 1 S 0 0\n",
				"offcpu-timeline 2 \n", "interval 1 1 0 1 1 S 0 0\n", ""};

	CHECK(p && t);
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		FILE *in = unit_memfile(inputs[i]);

		CHECK_INT(timeline__parse(in, p, t, NULL), -EPROTO);
		fclose(in);
	}
	CHECK_INT(timeline__nr(t), 0);
	timeline__free(t);
	profile__free(p);
}

TEST(timeline_parse_counts_malformed_lines_and_keeps_going)
{
	struct profile *p = profile__new();
	struct timeline *t = timeline__new();
	struct parse_stats st;
	const char *text = "offcpu-timeline 1\r\n"
			   "# a comment\n"
			   "\n"
			   "stack 7 u:main;k:schedule\r\n"
			   "interval 100 50 10 1 2 S 0 7\r\n"
			   "interval 100 50 10 1 2 S 0 8\n"	  /* line 6: stack 8 undefined */
			   "interval 100 50 60 1 2 S 0 7\n"	  /* runq > dur */
			   "interval 100 50 10 1 2 Z 0 7\n"	  /* bad state */
			   "interval 100 x 10 1 2 S 0 7\n"	  /* bad number */
			   "stack 9 q:main\n"			  /* bad kind */
			   "stack 10 u:bad%2\n"			  /* bad escape */
			   "bogus 1 2 3\n"			  /* unknown record */
			   "interval 100 50 10 1 2 S 0 7 extra\n" /* trailing field */
			   "interval 200 5 5 1 3 R 4 7";	  /* no final newline */
	FILE *in = unit_memfile(text);

	CHECK(p && t && in);
	CHECK_INT(timeline__parse(in, p, t, &st), 0);
	fclose(in);
	CHECK_INT(st.lines, 14);
	CHECK_INT(st.records, 2);
	CHECK_INT(st.malformed, 8);
	CHECK_INT(st.first_malformed_line, 6);
	CHECK_CONTAINS(st.first_malformed_reason, "stack id not defined");
	CHECK_INT(timeline__nr(t), 2);
	CHECK_U64(timeline__at(t, 1)->start_ns, 200);
	CHECK_INT(timeline__at(t, 1)->state, OFFCPU_STATE_PREEMPT);
	CHECK_INT(timeline__at(t, 1)->waker_tid, 4);
	timeline__free(t);
	profile__free(p);
}

/* Interrupt wakers: interned by name, written as names, read back as the same names. */
TEST(timeline_irq_wakers_roundtrip_by_name)
{
	struct profile *p = fixture_profile(), *q = profile__new();
	struct timeline *t = fixture_timeline(), *u = timeline__new();
	const char *odd = "irq:odd name;50%", *digit = "-1 looks like a tid";
	struct timeline_interval v;
	const void *args[2] = {t, p};
	int net, timer, weird;
	char *text;
	FILE *in;
	int err;

	CHECK(p && q && t && u);
	net = timeline__irq(t, "softirq:NET_RX");
	timer = timeline__irq(t, "irq:timer");
	weird = timeline__irq(t, odd);
	CHECK_INT(net, 1);
	CHECK_INT(timer, 2);
	CHECK_INT(weird, 3);
	CHECK_INT(timeline__irq(t, "softirq:NET_RX"), 1);
	CHECK_INT(timeline__irq(t, ""), -EINVAL);
	CHECK_INT(timeline__nr_irqs(t), 3);
	CHECK(timeline__irq_name(t, 0) == NULL && timeline__irq_name(t, 4) == NULL);
	v = fixture_iv(1005000000, 1000000, 2000, 101, 1, OFFCPU_STATE_SLEEP, 0);
	v.waker_irq = (uint32_t)net;
	CHECK_INT(timeline__append(t, &v), 0);
	v.start_ns += 2000000;
	v.waker_irq = (uint32_t)weird;
	CHECK_INT(timeline__append(t, &v), 0);
	v.start_ns += 2000000;
	v.waker_irq = (uint32_t)timer;
	CHECK_INT(timeline__append(t, &v), 0);
	v.start_ns += 2000000;
	v.waker_irq = (uint32_t)timeline__irq(t, digit);
	CHECK_INT(timeline__append(t, &v), 0);
	text = fixture_capture(write_fixture, args, &err, NULL);
	CHECK_INT(err, 0);
	CHECK_CONTAINS(text, "offcpu-timeline 2\n");
	CHECK_CONTAINS(text, "interval 1005000000 1000000 2000 100 101 S softirq:NET_RX 1\n");
	CHECK_CONTAINS(text, " S irq:odd%20name%3B50%25 1\n");
	CHECK_CONTAINS(text, " S irq:timer 1\n");
	in = unit_memfile(text);
	CHECK_INT(timeline__parse(in, q, u, NULL), 0);
	fclose(in);
	CHECK_CONTAINS(text, " S %2D1%20looks%20like%20a%20tid 1\n");
	CHECK_INT(timeline__nr(u), 8);
	CHECK_STR(timeline__irq_name(u, timeline__at(u, 7)->waker_irq), digit);
	/* Thread wakers stay tids, interrupt wakers names. */
	CHECK_INT(timeline__at(u, 0)->waker_tid, 100);
	CHECK_INT(timeline__at(u, 0)->waker_irq, 0);
	CHECK_STR(timeline__irq_name(u, timeline__at(u, 4)->waker_irq), "softirq:NET_RX");
	CHECK_INT(timeline__at(u, 4)->waker_tid, 0);
	CHECK_STR(timeline__irq_name(u, timeline__at(u, 5)->waker_irq), odd);
	CHECK_STR(timeline__irq_name(u, timeline__at(u, 6)->waker_irq), "irq:timer");
	free(text);
	timeline__free(t);
	timeline__free(u);
	profile__free(p);
	profile__free(q);
}

TEST(timeline_append_checks_the_irq_waker)
{
	struct timeline *t = timeline__new();
	struct timeline_interval v = fixture_iv(10, 5, 0, 1, 0, OFFCPU_STATE_SLEEP, 0);

	CHECK(t);
	v.waker_irq = 1;
	CHECK_INT(timeline__append(t, &v), -EINVAL); /* not interned */
	CHECK_INT(timeline__irq(t, "irq:timer"), 1);
	v.waker_tid = 7;
	CHECK_INT(timeline__append(t, &v), -EINVAL); /* a thread and an interrupt */
	v.waker_tid = 0;
	CHECK_INT(timeline__append(t, &v), 0);
	timeline__free(t);
}

/* Files of version 1 (always a tid) still read; a bad name is a malformed line. */
TEST(timeline_reads_version_1_and_checks_waker_names)
{
	struct profile *p = profile__new();
	struct timeline *t = timeline__new();
	struct parse_stats st;
	FILE *in = unit_memfile("offcpu-timeline 1\n"
				"stack 3 k:schedule\n"
				"interval 100 50 10 1 2 S 7 3\n"
				"interval 200 50 10 1 2 S softirq:BLOCK 3\n"
				"interval 300 50 10 1 2 S irq:bad%2 3\n"
				"interval 400 50 10 1 2 S irq:timer\n");

	CHECK(p && t && in);
	CHECK_INT(timeline__parse(in, p, t, &st), 0);
	fclose(in);
	CHECK_INT(st.records, 2);
	CHECK_INT(st.malformed, 2);
	CHECK_STR(st.first_malformed_reason, "bad waker name");
	CHECK_INT(timeline__at(t, 0)->waker_tid, 7);
	CHECK_STR(timeline__irq_name(t, timeline__at(t, 1)->waker_irq), "softirq:BLOCK");
	timeline__free(t);
	profile__free(p);
}

static void make_path(const char *root, const char *rel, bool dir)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (dir) {
		mkdir(path, 0755);
		return;
	}
	f = fopen(path, "w");
	if (f)
		fclose(f);
}

/* The BPF side's interrupt contexts by name; a hard IRQ by its handlers' directories. */
TEST(wakers_name_softirqs_timers_and_irqs)
{
	char root[] = "/tmp/offcpu-irq.XXXXXX", buf[64], cmd[64];
	struct timeline *t = timeline__new();
	struct wakers w = {.irq_root = root};

	CHECK(t && mkdtemp(root));
	make_path(root, "38", true);
	make_path(root, "38/virtio2-input.0", true);
	make_path(root, "38/smp_affinity", false);
	make_path(root, "40", true);
	make_path(root, "40/eth1", true);
	make_path(root, "40/eth0", true);
	make_path(root, "41", true);
	make_path(root, "41/spurious", false);

	CHECK_INT(wakers__name(OFFCPU_WAKER(OFFCPU_WAKER_SOFTIRQ, 3), root, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "softirq:NET_RX");
	wakers__name(OFFCPU_WAKER(OFFCPU_WAKER_SOFTIRQ, 0), root, buf, sizeof(buf));
	CHECK_STR(buf, "softirq:HI");
	wakers__name(OFFCPU_WAKER(OFFCPU_WAKER_SOFTIRQ, 9), root, buf, sizeof(buf));
	CHECK_STR(buf, "softirq:RCU");
	wakers__name(OFFCPU_WAKER(OFFCPU_WAKER_SOFTIRQ, 12), root, buf, sizeof(buf));
	CHECK_STR(buf, "softirq:12");
	wakers__name(OFFCPU_WAKER(OFFCPU_WAKER_TIMER, 0), root, buf, sizeof(buf));
	CHECK_STR(buf, "irq:timer");
	wakers__name(OFFCPU_WAKER(OFFCPU_WAKER_HARDIRQ, 38), root, buf, sizeof(buf));
	CHECK_STR(buf, "irq:virtio2-input.0");
	wakers__name(OFFCPU_WAKER(OFFCPU_WAKER_HARDIRQ, 40), root, buf, sizeof(buf));
	CHECK_STR(buf, "irq:eth0,eth1");
	wakers__name(OFFCPU_WAKER(OFFCPU_WAKER_HARDIRQ, 41), root, buf, sizeof(buf));
	CHECK_STR(buf, "irq:41");
	wakers__name(OFFCPU_WAKER(OFFCPU_WAKER_HARDIRQ, 99), root, buf, sizeof(buf));
	CHECK_STR(buf, "irq:99");
	/* A tid, or nothing, is no interrupt. */
	CHECK_INT(wakers__name(1234, root, buf, sizeof(buf)), -EINVAL);
	CHECK_INT(wakers__name(0, root, buf, sizeof(buf)), -EINVAL);
	CHECK(!wakers__is_irq(1234) && !wakers__is_irq(0) &&
	      wakers__is_irq(OFFCPU_WAKER(OFFCPU_WAKER_TIMER, 0)));

	/* Interned once per value; two irqs of one name share it. */
	CHECK_INT(wakers__intern(&w, t, OFFCPU_WAKER(OFFCPU_WAKER_HARDIRQ, 38)), 1);
	CHECK_INT(wakers__intern(&w, t, OFFCPU_WAKER(OFFCPU_WAKER_SOFTIRQ, 3)), 2);
	CHECK_INT(wakers__intern(&w, t, OFFCPU_WAKER(OFFCPU_WAKER_HARDIRQ, 38)), 1);
	CHECK_INT(wakers__intern(&w, t, 77), -EINVAL);
	CHECK_STR(timeline__irq_name(t, 1), "irq:virtio2-input.0");
	CHECK_INT(timeline__nr_irqs(t), 2);
	wakers__release(&w);
	wakers__release(NULL);
	timeline__free(t);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK_INT(system(cmd), 0);
}

int main(void)
{
	return unit_run();
}
