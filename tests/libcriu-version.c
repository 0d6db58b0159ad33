// SPDX-License-Identifier: GPL-2.0
/*
 * libcriu-version CRIU: the version libcriu gets from CRIU (the binary given)
 * through an RPC request to `criu swrk`, as 10000 * major + 100 * minor +
 * sublevel.  Built by tests/test_install.py against an installed libcriu
 * with its pkg-config file, as a program using libcriu is.
 */
#include <stdio.h>

#include <criu.h>

int main(int argc, char **argv)
{
	int version;

	if (argc != 2) {
		fprintf(stderr, "usage: %s CRIU\n", argv[0]);
		return 2;
	}
	if (criu_init_opts() || criu_set_service_binary(argv[1])) {
		fprintf(stderr, "libcriu: cannot set up its options\n");
		return 1;
	}
	version = criu_get_version();
	if (version < 0) {
		fprintf(stderr, "libcriu: no version from %s (%d)\n", argv[1], version);
		return 1;
	}
	printf("%d\n", version);
	return 0;
}
