// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfmap__read_all() on a BPF hash map that another thread keeps changing,
 * as the programs change the threads map during a cut: every key that stays
 * in the map is read exactly once. Root only (creates BPF maps).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "collect/bpfmap.h"
#include "unit.h"

#define STAY 2000  /* keys 0 .. STAY-1 stay */
#define CHURN 4000 /* keys STAY .. STAY+CHURN-1 come and go */
#define ENTRIES 8192

struct churn {
	int fd;
	atomic_bool stop;
};

static void *churn_run(void *arg)
{
	struct churn *c = arg;
	uint64_t v = 0;
	uint32_t k = 0;

	while (!atomic_load(&c->stop)) {
		uint32_t key = STAY + k++ % CHURN;

		if (bpf_map_delete_elem(c->fd, &key))
			bpf_map_update_elem(c->fd, &key, &v, BPF_ANY);
	}
	return NULL;
}

static void read_under_churn(uint32_t flags)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = flags);
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "t_read_all", sizeof(uint32_t), sizeof(uint64_t),
				ENTRIES, &o);
	struct churn c = {.fd = fd};
	static uint8_t seen[STAY];
	pthread_t th;
	int bad = 0;

	CHECK(fd >= 0);
	for (uint32_t k = 0; k < STAY + CHURN; k++) {
		uint64_t v = k;

		CHECK_INT(bpf_map_update_elem(fd, &k, &v, BPF_ANY), 0);
	}
	CHECK_INT(pthread_create(&th, NULL, churn_run, &c), 0);
	for (int round = 0; round < 200 && !bad; round++) {
		void *keys, *vals;
		size_t nr;

		memset(seen, 0, sizeof(seen));
		if (bpfmap__read_all(fd, sizeof(uint32_t), sizeof(uint64_t), &keys, &vals, &nr)) {
			bad = 1;
		} else {
			for (size_t i = 0; i < nr; i++) {
				uint32_t k = ((uint32_t *)keys)[i];

				if (k < STAY && (seen[k]++ || ((uint64_t *)vals)[i] != k))
					bad = 2;
			}
			for (uint32_t k = 0; k < STAY; k++)
				if (seen[k] != 1)
					bad = 3;
		}
		free(keys);
		free(vals);
	}
	atomic_store(&c.stop, true);
	pthread_join(th, NULL);
	close(fd);
	if (bad)
		UNIT_FAIL("a key that stayed was read %s", bad == 1   ? "(failed)"
							   : bad == 2 ? "twice or wrong"
								      : "not once");
}

TEST(read_all_reads_each_lasting_key_once_while_others_come_and_go)
{
	if (geteuid() != 0)
		SKIP("needs root: creates BPF maps");
	read_under_churn(0);
	read_under_churn(BPF_F_NO_PREALLOC);
}

int main(void)
{
	return unit_run();
}
