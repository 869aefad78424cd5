// SPDX-License-Identifier: GPL-2.0-only
/*
 * The lazy DWARF reader (symbolize/dwlazy.h) on arbitrary bytes as a debug
 * file (a memfd): opening it must fail cleanly or give a reader whose CU
 * lookups, and a walk of the DIEs of the CU found, stay within what was
 * inflated (the sanitizers see any read past it). A debug file inside a
 * traced container is the container's to write.
 * fuzz-needs: src/symbolize/dwlazy.c
 */
#include <gelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/dwlazy.h"
#include "fuzz.h"

/* The lowest PT_LOAD vaddr of the input, which dwlazy__open() must be given. */
static uint64_t lowest_load(const uint8_t *data, size_t size)
{
	Elf *elf;
	size_t n;
	uint64_t low = 0;
	bool any = false;

	elf_version(EV_CURRENT);
	elf = elf_memory((char *)data, size);
	if (!elf)
		return 0;
	if (!elf_getphdrnum(elf, &n)) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (!any || ph.p_vaddr < low)
				low = ph.p_vaddr;
			any = true;
		}
	}
	elf_end(elf);
	return low;
}

static void walk(Dwarf_Die *die, int depth)
{
	Dwarf_Die child;

	if (depth > 6 || dwarf_child(die, &child))
		return;
	for (int i = 0; i < 64; i++) {
		(void)dwarf_tag(&child);
		(void)dwarf_diename(&child);
		(void)dwarf_haspc(&child, 0x1000);
		walk(&child, depth + 1);
		if (dwarf_siblingof(&child, &child))
			break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-dwlazy", MFD_CLOEXEC);
	uint64_t addrs[4] = {0, 0x1000, 0x1140, 0x1147};
	char path[64];
	struct dwlazy *d;
	size_t done, kept, full;
	uint8_t *copy = malloc(size ? size : 1);

	FUZZ_CHECK(fd >= 0 && copy);
	FUZZ_CHECK(write(fd, data, size) == (ssize_t)size);
	/* libelf may write into a buffer it is given: a copy */
	memcpy(copy, data, size);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	d = dwlazy__open(path, lowest_load(copy, size));
	free(copy);
	if (size >= 8)
		memcpy(&addrs[0], data + size - 8, 8);
	for (size_t i = 0; d && i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		Dwarf_Die cu;

		if (dwlazy__addrdie(d, addrs[i], &cu))
			walk(&cu, 0);
		dwlazy__info_size(d, &done, &kept, &full);
		FUZZ_CHECK(done <= full && kept <= full);
	}
	dwlazy__free(d);
	close(fd);
	return 0;
}
