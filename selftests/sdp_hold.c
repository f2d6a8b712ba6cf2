// SPDX-License-Identifier: GPL-2.0
/*
 * Test helper: open an SDP socket, print "ready", and keep it open until
 * standard input reaches EOF (or the process is killed).
 *
 * Usage: sdp_hold [FAMILY]   (default 27)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int family = argc > 1 ? atoi(argv[1]) : 27;
	int fd = socket(family, SOCK_STREAM, 0);
	char c;

	if (fd < 0) {
		perror("sdp_hold: socket");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	close(fd);
	return 0;
}
