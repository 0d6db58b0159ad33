// SPDX-License-Identifier: GPL-2.0
/*
 * vk_fill: the valkey suite's data set, the same in every run.
 *
 *   vk_fill set N   RESP commands for valkey-cli --pipe: N strings key:<i>
 *                   (10 B to 64 KiB), a hash of 200 fields, a list of 500
 *   vk_fill get N   inline commands reading all of it back in a fixed
 *                   order, for valkey-cli < file | md5sum: the client's
 *                   digest of every key and value
 *
 * Values are printable and hold no blank, so valkey-cli's raw output of a
 * GET is the value itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HASH_FIELDS	200
#define LIST_ITEMS	500

/* one in a hundred keys 64 KiB, one in ten 4 KiB, the rest 10 to 999 B */
static size_t value_size(unsigned long i)
{
	if (i % 100 == 0)
		return 64 << 10;
	if (i % 10 == 0)
		return 4096;
	return 10 + (i * 37) % 990;
}

static void put_value(unsigned long i, size_t len)
{
	size_t j;

	for (j = 0; j < len; j++)
		putchar('a' + (i + j * 7) % 26);
}

/* one RESP bulk string */
static void bulk(const char *s)
{
	printf("$%zu\r\n%s\r\n", strlen(s), s);
}

static void cmd3(const char *verb, const char *key, const char *arg)
{
	printf("*3\r\n");
	bulk(verb);
	bulk(key);
	bulk(arg);
}

static void fill(unsigned long n)
{
	char key[32], field[32], val[64];
	unsigned long i;

	for (i = 0; i < n; i++) {
		size_t len = value_size(i);

		snprintf(key, sizeof(key), "key:%lu", i);
		printf("*3\r\n");
		bulk("SET");
		bulk(key);
		printf("$%zu\r\n", len);
		put_value(i, len);
		printf("\r\n");
	}
	for (i = 0; i < HASH_FIELDS; i++) {
		snprintf(field, sizeof(field), "f%lu", i);
		snprintf(val, sizeof(val), "v%lu-%lu", i, i * i);
		printf("*4\r\n");
		bulk("HSET");
		bulk("hash:1");
		bulk(field);
		bulk(val);
	}
	for (i = 0; i < LIST_ITEMS; i++) {
		snprintf(val, sizeof(val), "item%lu", i * 3);
		cmd3("RPUSH", "list:1", val);
	}
}

static void read_back(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		printf("GET key:%lu\n", i);
	/* a hash's order is the server's; each field by name is not */
	for (i = 0; i < HASH_FIELDS; i++)
		printf("HGET hash:1 f%lu\n", i);
	printf("LRANGE list:1 0 -1\n");
	printf("DBSIZE\n");
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;

	if (argc != 3 || !n) {
		fprintf(stderr, "usage: vk_fill set|get N\n");
		return 2;
	}
	if (!strcmp(argv[1], "set"))
		fill(n);
	else if (!strcmp(argv[1], "get"))
		read_back(n);
	else
		return 2;
	return fflush(stdout) ? 1 : 0;
}
