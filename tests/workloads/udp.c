// SPDX-License-Identifier: GPL-2.0-only
/*
 * Wakeups by a network packet: "sender" sleeps 20 ms (times SCALE) and sends
 * one UDP datagram to "receiver" over 127.0.0.1, 10 times; "receiver" blocks
 * in recv() for each. Loopback delivers the datagram from softirq NET_RX, so
 * each receiver wait is woken by it, and each sender sleep by its hrtimer.
 * About 200 ms blocked in S for each thread, 10 waits each.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "workload.h"

#define ROUNDS 10

static double scale;
static int rx, tx;

static void *sender(void *arg)
{
	struct truth t;
	int i;

	truth_begin(&t, "udp", "sender", "S");
	for (i = 0; i < ROUNDS; i++) {
		wl_sleep_ns(20 * NSEC_PER_MSEC * scale);
		if (send(tx, "x", 1, 0) != 1)
			wl_die("send: %s", strerror(errno));
	}
	truth_end(&t, ROUNDS);
	return NULL;
}

static void *receiver(void *arg)
{
	struct truth t;
	long waits = 0;
	int got = 0;
	char c;

	truth_begin(&t, "udp", "receiver", "S");
	while (got < ROUNDS) {
		ssize_t n = recv(rx, &c, 1, 0);

		waits++;
		if (n < 0 && errno == EINTR)
			continue;
		if (n != 1)
			wl_die("recv: %s", n ? strerror(errno) : "nothing");
		got++;
	}
	truth_end(&t, waits);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	pthread_t s, r;

	scale = wl_scale(argc, argv,
			 "[SCALE]\n  \"sender\" sends a UDP datagram over 127.0.0.1 every 20 ms * "
			 "SCALE, 10 times; \"receiver\" blocks in recv()");
	rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (rx < 0 || tx < 0 || bind(rx, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(rx, (struct sockaddr *)&a, &len) ||
	    connect(tx, (struct sockaddr *)&a, sizeof(a)))
		wl_die("udp sockets on 127.0.0.1: %s", strerror(errno));
	wl_start();
	wl_check(pthread_create(&r, NULL, receiver, NULL), "pthread_create");
	wl_check(pthread_create(&s, NULL, sender, NULL), "pthread_create");
	wl_check(pthread_join(s, NULL), "pthread_join");
	wl_check(pthread_join(r, NULL), "pthread_join");
	return 0;
}
