// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One-sided RDMA through an SDP socket, in one sitting: the client
 * registers a reply buffer, sends its question and the buffer's token on
 * the stream; the server writes its answer straight into the client's
 * buffer (an RDMA WRITE: the client's CPU does not copy it), then sends
 * one byte on the stream; that byte arrives after the answer is in place.
 *
 *   sdp_reply server ADDR PORT      answers one client, then exits
 *   sdp_reply client ADDR PORT TEXT prints the server's answer
 *
 * Build: make -C userspace/examples.  Both ends need the ib_sdp module.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/sdp.h>

#define REPLY_MAX 4096

struct question {		/* what the client sends on the stream */
	uint64_t token;		/* its reply buffer, for SDP_RDMA */
	uint32_t len;		/* the text's length, which follows */
};

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void full(int fd, void *p, size_t n, int out)
{
	ssize_t r;

	for (; n; n -= r, p = (char *)p + r) {
		r = out ? send(fd, p, n, 0) : recv(fd, p, n, 0);
		if (r <= 0)
			die(out ? "send" : "recv");
	}
}

static int sdp_socket(const char *addr, int port, struct sockaddr_in *sa)
{
	int fd = socket(AF_INET_SDP, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		die("socket(AF_INET_SDP)");
	/* both ends, before connect() or listen(): room for regions */
	if (setsockopt(fd, SOL_SDP, SDP_REGIONS, &one, sizeof(one)))
		die("SDP_REGIONS");
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &sa->sin_addr) != 1)
		die("address");
	return fd;
}

static int server(const char *addr, int port)
{
	char text[REPLY_MAX], answer[REPLY_MAX];
	char cbuf[CMSG_SPACE(sizeof(struct sdp_rdma))] = { 0 };
	struct iovec iov = { answer, 0 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	struct sdp_rdma op = { .op = SDP_RDMA_WRITE, .offset = 0 };
	struct sockaddr_in sa;
	struct question q;
	int l = sdp_socket(addr, port, &sa), c, one = 1;
	uint32_t i;

	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (void *)&sa, sizeof(sa)) || listen(l, 1))
		die("listen");
	c = accept(l, NULL, NULL);
	if (c < 0)
		die("accept");
	full(c, &q, sizeof(q), 0);
	if (q.len >= REPLY_MAX)
		return 1;
	full(c, text, q.len, 0);
	/* the answer: the question, shouted */
	for (i = 0; i < q.len; i++)
		answer[i] = toupper((unsigned char)text[i]);
	answer[q.len] = '\0';
	iov.iov_len = q.len + 1;

	/* WRITE it into the client's buffer, then tell it on the stream */
	op.token = q.token;
	cm->cmsg_level = SOL_SDP;
	cm->cmsg_type = SDP_RDMA;
	cm->cmsg_len = CMSG_LEN(sizeof(op));
	memcpy(CMSG_DATA(cm), &op, sizeof(op));
	if (sendmsg(c, &m, 0) != (ssize_t)iov.iov_len)
		die("sendmsg(SDP_RDMA_WRITE)");
	full(c, "!", 1, 1);
	close(c);
	close(l);
	return 0;
}

static int client(const char *addr, int port, const char *text)
{
	static char reply[REPLY_MAX];
	struct sdp_region r = { .addr = (uintptr_t)reply, .len = REPLY_MAX,
				.access = SDP_REGION_WRITE };
	socklen_t rlen = sizeof(r);
	struct sockaddr_in sa;
	struct question q = { .len = strlen(text) };
	int c = sdp_socket(addr, port, &sa);
	char done;

	if (q.len >= REPLY_MAX)
		return 1;
	if (connect(c, (void *)&sa, sizeof(sa)))
		die("connect");
	/* the reply buffer, for the server to write into */
	if (getsockopt(c, SOL_SDP, SDP_REGION_REG, &r, &rlen))
		die("SDP_REGION_REG");
	q.token = r.token;
	full(c, &q, sizeof(q), 1);
	full(c, (void *)text, q.len, 1);
	full(c, &done, 1, 0);	/* after the WRITE: the answer is there */
	printf("%s\n", reply);
	setsockopt(c, SOL_SDP, SDP_REGION_DEREG, &r.token, sizeof(r.token));
	close(c);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "server"))
		return server(argv[2], atoi(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "client"))
		return client(argv[2], atoi(argv[3]), argv[4]);
	fprintf(stderr, "usage: sdp_reply server ADDR PORT | client ADDR PORT TEXT\n");
	return 2;
}
