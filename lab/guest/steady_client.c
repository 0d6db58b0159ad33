// SPDX-License-Identifier: GPL-2.0
/*
 * steady_client: one TCP connection to a valkey server, kept through a live
 * migration of the server (criu --tcp-established), writing and reading all
 * along.  It never reconnects: a broken connection ends it with an error.
 *
 *   steady_client HOST PORT STOPFILE
 *
 * In database 1, so that the server's own data (database 0) stays as it was
 * and its digest can be compared after the move.  Until STOPFILE exists:
 * SET steady:<i> <value of i>, then GET it back and compare, every PACE_MS.
 * Each reply's time (CLOCK_MONOTONIC: guest time) is noted; the longest
 * wait for a reply is the freeze a client saw.  Once
 * STOPFILE exists: every acknowledged key read back on the same connection,
 * and CLIENT ID compared with the one at the start (a server that saw a new
 * connection would give a new id).  Prints one line of key=value fields:
 *
 *   acked=N lost=L mismatched=M max_gap_ms=G gap_after=K client_id=A/B
 *
 * and exits 0 only when the connection held, nothing acked was lost and
 * every read matched.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PACE_MS		20
#define VALUE_MAX	64
#define REPLY_MAX	256

static int sk;
static char rbuf[4096];
static size_t rlen, rpos;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("steady_client: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	exit(2);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void send_all(const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(sk, buf, len);

		if (n <= 0)
			die("connection lost while sending");
		buf += n;
		len -= n;
	}
}

static int next_byte(void)
{
	if (rpos == rlen) {
		ssize_t n = read(sk, rbuf, sizeof(rbuf));

		if (n <= 0)
			die("connection lost while waiting for a reply");
		rlen = n;
		rpos = 0;
	}
	return rbuf[rpos++];
}

/* one reply line without its CRLF */
static void read_line(char *out, size_t max)
{
	size_t n = 0;
	int c;

	while ((c = next_byte()) != '\n')
		if (c != '\r' && n + 1 < max)
			out[n++] = c;
	out[n] = '\0';
}

/*
 * One reply as text: a simple string or integer as it is, a bulk string's
 * contents, "(nil)" for a missing key.  Bulk strings here are short
 * (values of VALUE_MAX at most): a longer one is a protocol error for us.
 */
static void read_reply(char *out, size_t max)
{
	char line[REPLY_MAX];
	long len, i;

	read_line(line, sizeof(line));
	if (line[0] != '$') {
		snprintf(out, max, "%s", line + (line[0] == '+' || line[0] == ':'));
		return;
	}
	len = strtol(line + 1, NULL, 10);
	if (len < 0) {
		snprintf(out, max, "(nil)");
		return;
	}
	if ((size_t)len + 1 > max)
		die("reply of %ld bytes is longer than expected", len);
	for (i = 0; i < len; i++)
		out[i] = next_byte();
	out[len] = '\0';
	read_line(line, sizeof(line));	/* the CRLF after the data */
}

/* a command of up to three words, as a RESP array */
static void command(char *reply, size_t max, int argc, ...)
{
	char buf[512];
	size_t off;
	va_list ap;
	int i;

	off = snprintf(buf, sizeof(buf), "*%d\r\n", argc);
	va_start(ap, argc);
	for (i = 0; i < argc; i++) {
		const char *arg = va_arg(ap, const char *);

		off += snprintf(buf + off, sizeof(buf) - off, "$%zu\r\n%s\r\n", strlen(arg), arg);
	}
	va_end(ap);
	send_all(buf, off);
	read_reply(reply, max);
}

static void value_of(unsigned long i, char *out, size_t max)
{
	snprintf(out, max, "value-%lu-%lx", i, i * 2654435761UL);
}

static void connect_to(const char *host, const char *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(atoi(port)) };
	int one = 1;

	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		die("bad address %s", host);
	sk = socket(AF_INET, SOCK_STREAM, 0);
	if (sk < 0 || connect(sk, (struct sockaddr *)&sa, sizeof(sa)))
		die("cannot connect to %s:%s", host, port);
	setsockopt(sk, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int main(int argc, char **argv)
{
	char key[64], want[VALUE_MAX], got[REPLY_MAX], id0[REPLY_MAX], id1[REPLY_MAX];
	unsigned long acked = 0, lost = 0, mismatched = 0, gap_after = 0, i;
	double last, max_gap = 0;

	if (argc != 4)
		die("usage: steady_client HOST PORT STOPFILE");
	connect_to(argv[1], argv[2]);
	command(got, sizeof(got), 2, "SELECT", "1");
	if (strcmp(got, "OK"))
		die("SELECT 1 answered '%s'", got);
	command(id0, sizeof(id0), 2, "CLIENT", "ID");
	last = now_ms();
	while (access(argv[3], F_OK)) {
		snprintf(key, sizeof(key), "steady:%lu", acked);
		value_of(acked, want, sizeof(want));
		command(got, sizeof(got), 3, "SET", key, want);
		if (strcmp(got, "OK"))
			die("SET %s answered '%s'", key, got);
		command(got, sizeof(got), 2, "GET", key);
		if (strcmp(got, want))
			mismatched++;
		if (now_ms() - last > max_gap) {
			max_gap = now_ms() - last;
			gap_after = acked;
		}
		last = now_ms();
		acked++;
		usleep(PACE_MS * 1000);
	}
	for (i = 0; i < acked; i++) {
		snprintf(key, sizeof(key), "steady:%lu", i);
		value_of(i, want, sizeof(want));
		command(got, sizeof(got), 2, "GET", key);
		if (!strcmp(got, "(nil)"))
			lost++;
		else if (strcmp(got, want))
			mismatched++;
	}
	command(id1, sizeof(id1), 2, "CLIENT", "ID");
	printf("acked=%lu lost=%lu mismatched=%lu max_gap_ms=%.0f gap_after=%lu client_id=%s/%s\n",
	       acked, lost, mismatched, max_gap, gap_after, id0, id1);
	return lost || mismatched || strcmp(id0, id1);
}
