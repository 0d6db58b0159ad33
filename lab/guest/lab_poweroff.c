// SPDX-License-Identifier: GPL-2.0
/*
 * lab_poweroff: end the Bochs run from inside the guest.  Bochs exits when
 * the string "Shutdown" is written to I/O port 0x8900.  The serial console is
 * drained first, or the end of the log is lost.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/io.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	struct timespec settle = { 0, 100 * 1000 * 1000 };
	const char *msg = "Shutdown";
	int fd = open("/dev/console", O_WRONLY | O_NOCTTY);

	fflush(stdout);
	if (fd >= 0)
		tcdrain(fd);
	nanosleep(&settle, NULL);
	if (ioperm(0x8900, 1, 1)) {
		perror("ioperm");
		return 1;
	}
	while (*msg)
		outb(*msg++, 0x8900);
	pause();
	return 0;
}
