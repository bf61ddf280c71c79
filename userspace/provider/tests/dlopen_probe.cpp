// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Loads a provider plugin the way libibverbs does (dlopen RTLD_NOW from a
 * process that has libibverbs loaded), so a missing or wrongly versioned
 * symbol fails here instead of in a user's application.  Prints "loaded" and
 * nothing else on success.
 */
#include <cstdio>
#include <dlfcn.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		std::fprintf(stderr, "usage: %s <provider.so>\n", argv[0]);
		return 2;
	}
	void *verbs = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!verbs) {
		std::fprintf(stderr, "cannot load libibverbs.so.1: %s\n", dlerror());
		return 1;
	}
	void *provider = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!provider) {
		std::fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
		return 1;
	}
	/* the constructor is not exported; the direct verbs are, versioned */
	if (dlsym(provider, "softrnic_register_provider") != nullptr) {
		std::fprintf(stderr, "%s exports its constructor\n", argv[1]);
		return 1;
	}
	if (dlvsym(provider, "softrnicdv_wr_flush", "SOFTRNICDV_1.0") == nullptr) {
		std::fprintf(stderr, "%s: no softrnicdv_wr_flush@SOFTRNICDV_1.0\n", argv[1]);
		return 1;
	}
	std::puts("loaded");
	return 0;
}
