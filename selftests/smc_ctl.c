// SPDX-License-Identifier: GPL-2.0
/*
 * smc_ctl - what the test bed needs of SMC (net/smc), Linux's own RDMA
 * socket, to set it side by side with SDP: no smc-tools in Debian 12.
 *
 *   smc_ctl ueid-add NAME   add a user EID (SMC-Rv2 needs the same one at
 *                           both ends; A-Z, 0-9, '.', '-', up to 32)
 *   smc_ctl pnet-add PNETID NETDEV IBDEV
 *                           put a netdev and an RDMA device's port 1 in one
 *                           PNET table entry (6.1 finds no device without:
 *                           it asks the device's get_netdev, which rxe lacks)
 *   smc_ctl stats           SMC-R's counters: connections that went SMC-Rv2
 *                           as client and server, handshake errors, bytes,
 *                           and every fallback reason with its count
 *   smc_ctl socks           one line per SMC socket (sock_diag): its mode
 *                           (SMCR, TCP for a fallback, SMCD), state and the
 *                           fallback's reason, then a count of each mode
 *
 * Lines are "key value" pairs, for a script to read.  Exit 1 on error.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/smc.h>
#include <linux/smc_diag.h>
#include <linux/sock_diag.h>

#ifndef AF_SMC
#define AF_SMC 43
#endif

static char buf[65536];

static void die(const char *what)
{
	perror(what);
	exit(1);
}

struct req {
	struct nlmsghdr nh;
	union {
		struct genlmsghdr g;
		struct smc_diag_req d;
	};
	char attrs[256];
};

static void put_attr(struct req *r, unsigned short type, const void *data,
		     unsigned short len)
{
	struct nlattr *a = (struct nlattr *)((char *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

typedef void (*msg_fn)(const struct nlmsghdr *h);

/* Send @r on @fd and read the answers until the dump's end or the ack;
 * @fn sees every data message.  Returns 0 or the negative errno.
 */
static int transact(int fd, struct req *r, msg_fn fn)
{
	if (send(fd, r, r->nh.nlmsg_len, 0) < 0)
		die("netlink send");
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n < 0)
			die("netlink recv");
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				return e->error;
			}
			if (fn)
				fn(h);
		}
	}
}

static struct nlattr *attr_first(const void *p, int len, int *left)
{
	*left = len;
	return (struct nlattr *)p;
}

/* the attributes of a generic netlink message, and those nested in one */
static struct nlattr *genl_attrs(const struct nlmsghdr *h, int *left)
{
	return attr_first((char *)NLMSG_DATA(h) + GENL_HDRLEN,
			  h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN), left);
}

static int attr_ok(const struct nlattr *a, int left)
{
	return left >= (int)NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	       a->nla_len <= left;
}

static struct nlattr *attr_next(const struct nlattr *a, int *left)
{
	*left -= NLA_ALIGN(a->nla_len);
	return (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
}

static void *attr_data(const struct nlattr *a)
{
	return (char *)a + NLA_HDRLEN;
}

static int attr_type(const struct nlattr *a)
{
	return a->nla_type & NLA_TYPE_MASK;
}

static struct nlattr *nest_attrs(const struct nlattr *nest, int *left)
{
	return attr_first(attr_data(nest), nest->nla_len - NLA_HDRLEN, left);
}

static uint64_t attr_u64(const struct nlattr *a)
{
	uint64_t v = 0;

	memcpy(&v, attr_data(a), a->nla_len - NLA_HDRLEN < 8 ?
	       a->nla_len - NLA_HDRLEN : 8);
	return v;
}

static int genl_family(int fd, const char *name)
{
	int id = 0;
	struct req r = {
		.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN),
		.nh.nlmsg_type = GENL_ID_CTRL,
		.nh.nlmsg_flags = NLM_F_REQUEST,
		.g.cmd = CTRL_CMD_GETFAMILY,
		.g.version = 1,
	};
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct nlattr *a;
	ssize_t n;
	int left;

	put_attr(&r, CTRL_ATTR_FAMILY_NAME, name, strlen(name) + 1);
	if (send(fd, &r, r.nh.nlmsg_len, 0) < 0)
		die("netlink send");
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		die("netlink recv");
	if (!NLMSG_OK(h, n) || h->nlmsg_type == NLMSG_ERROR) {
		fprintf(stderr, "smc_ctl: no generic netlink family %s (modprobe smc)\n",
			name);
		exit(1);
	}
	for (a = genl_attrs(h, &left);
	     attr_ok(a, left); a = attr_next(a, &left))
		if (attr_type(a) == CTRL_ATTR_FAMILY_ID)
			id = *(uint16_t *)attr_data(a);
	if (!id) {
		fprintf(stderr, "smc_ctl: family %s has no id\n", name);
		exit(1);
	}
	return id;
}

static int genl_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);

	if (fd < 0)
		die("socket(NETLINK_GENERIC)");
	return fd;
}

static void genl_req(struct req *r, int family, int cmd, int flags)
{
	memset(r, 0, sizeof(*r));
	r->nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r->nh.nlmsg_type = family;
	r->nh.nlmsg_flags = NLM_F_REQUEST | flags;
	r->g.cmd = cmd;
	r->g.version = SMC_GENL_FAMILY_VERSION;	/* SMCR_GENL_'s is the same */
}

static int pnet_add(const char *pnetid, const char *netdev, const char *ibdev)
{
	unsigned char port = 1;
	struct req r;
	int fd, err;

	fd = genl_open();
	genl_req(&r, genl_family(fd, SMCR_GENL_FAMILY_NAME), SMC_PNETID_ADD,
		 NLM_F_ACK);
	put_attr(&r, SMC_PNETID_NAME, pnetid, strlen(pnetid) + 1);
	put_attr(&r, SMC_PNETID_ETHNAME, netdev, strlen(netdev) + 1);
	put_attr(&r, SMC_PNETID_IBNAME, ibdev, strlen(ibdev) + 1);
	put_attr(&r, SMC_PNETID_IBPORT, &port, sizeof(port));
	err = transact(fd, &r, NULL);
	close(fd);
	if (err && err != -EEXIST) {
		errno = -err;
		perror("smc_ctl: SMC_PNETID_ADD");
		return 1;
	}
	printf("pnet %s %s %s\n", pnetid, netdev, ibdev);
	return 0;
}

static int ueid_add(const char *name)
{
	char eid[SMC_MAX_EID_LEN + 1];
	size_t len = strlen(name), i;
	struct req r;
	int fd, err;

	if (!len || len > SMC_MAX_EID_LEN) {
		fprintf(stderr, "smc_ctl: an EID has 1 to %d characters\n",
			SMC_MAX_EID_LEN);
		return 1;
	}
	/* the kernel takes exactly 32 characters, blank-padded */
	memset(eid, ' ', SMC_MAX_EID_LEN);
	eid[SMC_MAX_EID_LEN] = '\0';
	for (i = 0; i < len; i++)
		eid[i] = name[i];
	fd = genl_open();
	genl_req(&r, genl_family(fd, SMC_GENL_FAMILY_NAME),
		 SMC_NETLINK_ADD_UEID, NLM_F_ACK);
	put_attr(&r, SMC_NLA_EID_TABLE_ENTRY, eid, sizeof(eid));
	err = transact(fd, &r, NULL);
	close(fd);
	if (err && err != -EEXIST) {
		errno = -err;
		perror("smc_ctl: ADD_UEID");
		return 1;
	}
	printf("ueid %s\n", name);
	return 0;
}

static void print_tech(const struct nlattr *nest)
{
	static const char * const names[SMC_NLA_STATS_T_MAX + 1] = {
		[SMC_NLA_STATS_T_CLNT_V1_SUCC] = "smcr_client_v1",
		[SMC_NLA_STATS_T_CLNT_V2_SUCC] = "smcr_client_v2",
		[SMC_NLA_STATS_T_SRV_V1_SUCC] = "smcr_server_v1",
		[SMC_NLA_STATS_T_SRV_V2_SUCC] = "smcr_server_v2",
		[SMC_NLA_STATS_T_RX_BYTES] = "smcr_rx_bytes",
		[SMC_NLA_STATS_T_TX_BYTES] = "smcr_tx_bytes",
		[SMC_NLA_STATS_T_RX_CNT] = "smcr_rx_calls",
		[SMC_NLA_STATS_T_TX_CNT] = "smcr_tx_calls",
	};
	struct nlattr *a;
	int left;

	for (a = nest_attrs(nest, &left);
	     attr_ok(a, left); a = attr_next(a, &left))
		if (attr_type(a) <= SMC_NLA_STATS_T_MAX && names[attr_type(a)])
			printf("%s %llu\n", names[attr_type(a)],
			       (unsigned long long)attr_u64(a));
}

static void stats_msg(const struct nlmsghdr *h)
{
	struct nlattr *top, *a;
	int ltop, left;

	for (top = genl_attrs(h, &ltop);
	     attr_ok(top, ltop); top = attr_next(top, &ltop)) {
		if (attr_type(top) != SMC_GEN_STATS)
			continue;
		for (a = nest_attrs(top, &left);
		     attr_ok(a, left); a = attr_next(a, &left)) {
			if (attr_type(a) == SMC_NLA_STATS_SMCR_TECH)
				print_tech(a);
			else if (attr_type(a) == SMC_NLA_STATS_CLNT_HS_ERR_CNT)
				printf("handshake_errors_client %llu\n",
				       (unsigned long long)attr_u64(a));
			else if (attr_type(a) == SMC_NLA_STATS_SRV_HS_ERR_CNT)
				printf("handshake_errors_server %llu\n",
				       (unsigned long long)attr_u64(a));
		}
	}
}

static void fback_msg(const struct nlmsghdr *h)
{
	struct nlattr *top, *a;
	int ltop, left;

	for (top = genl_attrs(h, &ltop);
	     attr_ok(top, ltop); top = attr_next(top, &ltop)) {
		unsigned int code = 0, cnt = 0, srv = 0;

		if (attr_type(top) != SMC_GEN_FBACK_STATS)
			continue;
		for (a = nest_attrs(top, &left);
		     attr_ok(a, left); a = attr_next(a, &left)) {
			switch (attr_type(a)) {
			case SMC_NLA_FBACK_STATS_TYPE:
				srv = *(uint8_t *)attr_data(a);
				break;
			case SMC_NLA_FBACK_STATS_RSN_CODE:
				code = *(uint32_t *)attr_data(a);
				break;
			case SMC_NLA_FBACK_STATS_RSN_CNT:
				cnt = *(uint16_t *)attr_data(a);
				break;
			case SMC_NLA_FBACK_STATS_SRV_CNT:
				printf("fallbacks_server %llu\n",
				       (unsigned long long)attr_u64(a));
				break;
			case SMC_NLA_FBACK_STATS_CLNT_CNT:
				printf("fallbacks_client %llu\n",
				       (unsigned long long)attr_u64(a));
				break;
			}
		}
		if (code)
			printf("fallback_%s_0x%08x %u\n",
			       srv ? "server" : "client", code, cnt);
	}
}

static int stats(void)
{
	int fd = genl_open(), fam = genl_family(fd, SMC_GENL_FAMILY_NAME);
	struct req r;
	int err;

	genl_req(&r, fam, SMC_NETLINK_GET_STATS, NLM_F_DUMP);
	err = transact(fd, &r, stats_msg);
	if (!err) {
		genl_req(&r, fam, SMC_NETLINK_GET_FBACK_STATS, NLM_F_DUMP);
		err = transact(fd, &r, fback_msg);
	}
	close(fd);
	if (err) {
		errno = -err;
		perror("smc_ctl: GET_STATS");
		return 1;
	}
	return 0;
}

static unsigned long modes[3];

static void sock_msg(const struct nlmsghdr *h)
{
	static const char * const mode_name[] = { "SMCR", "TCP", "SMCD" };
	const struct smc_diag_msg *m = NLMSG_DATA(h);
	struct smc_diag_fallback fb = { 0 };
	struct nlattr *a;
	int left;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return;
	for (a = attr_first((char *)m + NLMSG_ALIGN(sizeof(*m)),
			    h->nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(sizeof(*m))),
			    &left);
	     attr_ok(a, left); a = attr_next(a, &left))
		if (attr_type(a) == SMC_DIAG_FALLBACK &&
		    a->nla_len >= NLA_HDRLEN + sizeof(fb))
			memcpy(&fb, attr_data(a), sizeof(fb));
	if (m->diag_mode > 2)
		return;
	modes[m->diag_mode]++;
	printf("sock inode %llu mode %s state %u reason 0x%08x peer 0x%08x\n",
	       (unsigned long long)m->diag_inode, mode_name[m->diag_mode],
	       m->diag_state, fb.reason, fb.peer_diagnosis);
}

static int socks(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	struct req r;
	int err;

	if (fd < 0)
		die("socket(NETLINK_SOCK_DIAG)");
	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(r.d));
	r.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	r.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	r.d.diag_family = AF_SMC;
	err = transact(fd, &r, sock_msg);
	close(fd);
	if (err) {
		errno = -err;
		perror("smc_ctl: sock_diag (modprobe smc_diag)");
		return 1;
	}
	printf("socks_smcr %lu\nsocks_fallback %lu\nsocks_smcd %lu\n",
	       modes[SMC_DIAG_MODE_SMCR], modes[SMC_DIAG_MODE_FALLBACK_TCP],
	       modes[SMC_DIAG_MODE_SMCD]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "ueid-add"))
		return ueid_add(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "pnet-add"))
		return pnet_add(argv[2], argv[3], argv[4]);
	if (argc == 2 && !strcmp(argv[1], "stats"))
		return stats();
	if (argc == 2 && !strcmp(argv[1], "socks"))
		return socks();
	fprintf(stderr, "usage: smc_ctl ueid-add NAME | stats | socks\n"
		"       smc_ctl pnet-add PNETID NETDEV IBDEV\n");
	return 2;
}
