// SPDX-License-Identifier: GPL-2.0-only
/*
 * empty-switch: attach a BPF program that does nothing to sched_switch
 * (tp_btf, as offcpu's and offcputime's are) and hold it until SIGINT or
 * SIGTERM. What it adds to a context switch is what any tracer of the
 * switch pays before its first instruction runs (the tracepoint's call
 * into BPF, the program's entry, bpf_stats when on): bench/overhead.sh's
 * floor.
 *
 *   empty-switch [--ready FILE]    FILE is created once attached
 *
 * The program is two instructions (r0 = 0; exit), built here: no BPF object.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_RAW_TP);
	const char *ready = argc == 3 && !strcmp(argv[1], "--ready") ? argv[2] : NULL;
	struct btf *vmlinux;
	int id, prog, link, fd;

	if (argc != 1 && !ready) {
		fprintf(stderr, "usage: empty-switch [--ready FILE]\n");
		return 2;
	}
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		fprintf(stderr, "empty-switch: no kernel BTF: %s\n", strerror(errno));
		return 1;
	}
	id = btf__find_by_name_kind(vmlinux, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	btf__free(vmlinux);
	if (id < 0) {
		fprintf(stderr, "empty-switch: btf_trace_sched_switch not in the kernel's BTF\n");
		return 1;
	}
	opts.attach_btf_id = (__u32)id;
	prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "empty_switch", "GPL", insns, 2, &opts);
	if (prog < 0) {
		fprintf(stderr, "empty-switch: load: %s\n", strerror(-prog));
		return 1;
	}
	link = bpf_link_create(prog, 0, BPF_TRACE_RAW_TP, NULL);
	if (link < 0) {
		fprintf(stderr, "empty-switch: attach: %s\n", strerror(-link));
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (ready) {
		fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			fprintf(stderr, "empty-switch: %s: %s\n", ready, strerror(errno));
			return 1;
		}
		close(fd);
	}
	while (!stop)
		pause();
	close(link);
	close(prog);
	return 0;
}
