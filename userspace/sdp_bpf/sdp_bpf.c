// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_bpf: move unmodified programs onto SDP with a BPF policy, no
 * LD_PRELOAD (sdp_bpf(8)).
 *
 *   sdp_bpf check
 *   sdp_bpf attach NAME --cgroup DIR... [--program NAME[*]...] [--config FILE]
 *                  [--protocol sdp|smc|N]
 *   sdp_bpf detach NAME
 *   sdp_bpf status
 *   sdp_bpf run [--program NAME[*]...] [--config FILE] [--protocol P]
 *               -- COMMAND [ARG...]
 *
 * A policy is one instance of sdp_policy.bpf.c on the kernel's
 * update_socket_protocol hook (6.6 and later): the TCP sockets that tasks
 * of its cgroups (and their descendants) create, of the programs it
 * names or of every program, are IPPROTO_SDP sockets.  attach pins the
 * policy under /sys/fs/bpf/sdp_bpf/NAME, where it stays until detach (or
 * a reboot); run puts COMMAND in a cgroup of its own under a policy that
 * lasts as long as COMMAND.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/magic.h>

#include "sdp_policy.h"
#include "sdp_policy.skel.h"

#define PIN_ROOT	"/sys/fs/bpf/sdp_bpf"
#define CGROUP_ROOT	"/sys/fs/cgroup"

static bool verbose;

struct policy {
	const char *cgroups[SDP_POLICY_CGROUPS];
	int ncgroups;
	struct sdp_policy_rule rules[SDP_POLICY_RULES];
	int nrules;
	int proto;	/* --protocol; 0: the module's IPPROTO_SDP */
};

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("sdp_bpf: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (!verbose && level != LIBBPF_WARN)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* Does the running kernel have update_socket_protocol? */
static bool have_hook(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool have;

	if (!btf)
		return false;
	have = btf__find_by_name_kind(btf, "update_socket_protocol",
				      BTF_KIND_FUNC) > 0;
	btf__free(btf);
	return have;
}

static void need_hook(void)
{
	if (have_hook())
		return;
	fprintf(stderr,
		"sdp_bpf: this kernel has no update_socket_protocol hook (Linux 6.6 and later have it):\n"
		"sdp_bpf: move programs with libsdp instead, sdp_run(8) and libsdp.conf(5)\n");
	exit(2);
}

/* The module's protocol number, loading it if it is installed. */
static int sdp_proto(void)
{
	FILE *f = fopen("/sys/module/ib_sdp/parameters/ipproto_sdp", "r");
	int n = 0;

	if (!f) {
		if (system("modprobe -q ib_sdp") == 0)
			f = fopen("/sys/module/ib_sdp/parameters/ipproto_sdp",
				  "r");
	}
	if (!f)
		die("ib_sdp is not loaded and cannot be (modprobe ib_sdp)");
	if (fscanf(f, "%d", &n) != 1 || n <= 0)
		die("ib_sdp registers no IPPROTO_SDP (ipproto_sdp=%d)", n);
	fclose(f);
	return n;
}

/* --protocol: "sdp" (the module's), "smc" (Linux's own RDMA socket,
 * IPPROTO_SMC, 6.11 and later: to set the two side by side) or a number.
 */
static int proto_arg(const char *arg)
{
	char *end;
	long n;

	if (!strcmp(arg, "sdp"))
		return 0;
	if (!strcmp(arg, "smc"))
		return 256;	/* IPPROTO_SMC */
	n = strtol(arg, &end, 10);
	if (*end || n <= IPPROTO_TCP || n > 65535)
		die("--protocol %s: sdp, smc or a protocol number", arg);
	return n;
}

static void mount_bpffs(void)
{
	struct statfs st;

	if (!statfs("/sys/fs/bpf", &st) && st.f_type == BPF_FS_MAGIC)
		return;
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, NULL))
		die("cannot mount the BPF file system on /sys/fs/bpf: %m");
}

static void add_rule(struct policy *p, const char *name)
{
	struct sdp_policy_rule *r;
	size_t len = strlen(name);

	if (p->nrules == SDP_POLICY_RULES)
		die("at most %d --program", SDP_POLICY_RULES);
	r = &p->rules[p->nrules++];
	memset(r, 0, sizeof(*r));
	r->prefix = len && name[len - 1] == '*';
	if (r->prefix)
		len--;
	/* the kernel keeps 15 bytes of a task's name */
	if (len >= SDP_POLICY_COMM) {
		if (!r->prefix)
			fprintf(stderr,
				"sdp_bpf: '%s': a task's name is 15 bytes at most: matching its first 15\n",
				name);
		len = SDP_POLICY_COMM - 1;
		r->prefix = 1;
	}
	memcpy(r->comm, name, len);
	r->len = len;
}

/* Program rules from a file in libsdp.conf(5)'s language, as far as the
 * hook can follow it: it runs at socket(), before any address or role is
 * known, so a "use sdp" or "use both" rule for any address ("*" or "*:*")
 * names its program; a rule for some addresses, or "use tcp", cannot be
 * followed and is said so (addresses without an SDP peer fall back to TCP
 * in the module).  A program pattern is a name, or a beginning ending in
 * '*'; "*" alone means every program.
 */
static void read_config(struct policy *p, const char *path)
{
	char line[512], act[16], role[16], prog[64], addr[128];
	int n = 0, all = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		die("%s: %m", path);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (sscanf(line, " use %15s %15s %63s %127s", act, role, prog,
			   addr) != 4)
			continue;
		if (strcmp(act, "sdp") && strcmp(act, "both")) {
			fprintf(stderr,
				"sdp_bpf: %s:%d: 'use %s': a policy only moves sockets; not followed\n",
				path, n, act);
			continue;
		}
		if (strcmp(addr, "*") && strcmp(addr, "*:*")) {
			fprintf(stderr,
				"sdp_bpf: %s:%d: %s: no address is known at socket(); not followed\n",
				path, n, addr);
			continue;
		}
		if (!strcmp(prog, "*")) {
			all = 1;
			continue;
		}
		if (strpbrk(prog, "?[") ||
		    (strchr(prog, '*') && strchr(prog, '*') != prog + strlen(prog) - 1)) {
			fprintf(stderr,
				"sdp_bpf: %s:%d: %s: only NAME or BEGINNING* patterns; not followed\n",
				path, n, prog);
			continue;
		}
		add_rule(p, prog);
	}
	fclose(f);
	if (all)
		p->nrules = 0;	/* every program */
	else if (!p->nrules)
		die("%s: no rule a policy can follow", path);
}

/* Load a policy: every cgroup opened, every rule in place. */
static struct sdp_policy *load(const struct policy *p)
{
	struct sdp_policy *skel = sdp_policy__open();
	__u32 i;
	int fd;

	if (!skel)
		die("cannot open the BPF program: %m");
	skel->rodata->sdp_proto = p->proto ? p->proto : sdp_proto();
	skel->rodata->ncgroups = p->ncgroups;
	skel->rodata->nrules = p->nrules;
	if (sdp_policy__load(skel))
		die("cannot load the BPF program (sdp_bpf -v says why)");
	for (i = 0; i < (__u32)p->ncgroups; i++) {
		fd = open(p->cgroups[i], O_RDONLY | O_DIRECTORY);
		if (fd < 0)
			die("cgroup %s: %m", p->cgroups[i]);
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.cgroups), &i,
					&fd, BPF_ANY))
			die("cgroup %s: not a cgroup v2 directory? %m",
			    p->cgroups[i]);
		close(fd);
	}
	for (i = 0; i < (__u32)p->nrules; i++)
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.rules), &i,
					&p->rules[i], BPF_ANY))
			die("rule %u: %m", i);
	if (sdp_policy__attach(skel))
		die("cannot attach to update_socket_protocol: %m");
	return skel;
}

static void pin_path(char *buf, size_t n, const char *name, const char *what)
{
	if ((size_t)snprintf(buf, n, PIN_ROOT "/%s%s%s", name, what ? "/" : "",
			     what ?: "") >= n)
		die("name too long");
}

static int cmd_attach(const char *name, struct policy *p)
{
	struct sdp_policy *skel;
	char path[PATH_MAX];

	if (!p->ncgroups)
		die("attach: at least one --cgroup");
	if (strchr(name, '/') || !*name || *name == '.')
		die("attach: a policy's name is one path component");
	need_hook();
	mount_bpffs();
	mkdir(PIN_ROOT, 0700);
	pin_path(path, sizeof(path), name, NULL);
	if (mkdir(path, 0700))
		die("attach: %s: %m (detach it first?)", path);
	skel = load(p);
	pin_path(path, sizeof(path), name, "link");
	if (bpf_link__pin(skel->links.sdp_policy, path))
		die("pin %s: %m", path);
	pin_path(path, sizeof(path), name, "counts");
	if (bpf_map__pin(skel->maps.counts, path))
		die("pin %s: %m", path);
	sdp_policy__destroy(skel);	/* the pins keep it */
	printf("sdp_bpf: policy %s attached\n", name);
	return 0;
}

static int cmd_detach(const char *name)
{
	char path[PATH_MAX];
	int err = 0;

	pin_path(path, sizeof(path), name, "link");
	if (unlink(path)) {
		fprintf(stderr, "sdp_bpf: no policy %s: %m\n", name);
		return 1;
	}
	pin_path(path, sizeof(path), name, "counts");
	err |= unlink(path);
	pin_path(path, sizeof(path), name, NULL);
	err |= rmdir(path);
	return !!err;
}

/* Sum of a per-CPU counter. */
static unsigned long long counter(int fd, __u32 key)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	unsigned long long sum = 0;
	__u64 *v;

	if (ncpu <= 0)
		return 0;
	v = calloc(ncpu, sizeof(*v));
	if (v && !bpf_map_lookup_elem(fd, &key, v))
		for (i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

static int cmd_status(void)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dir;
	int fd;

	printf("update_socket_protocol hook: %s\n",
	       have_hook() ? "yes" : "no (use libsdp)");
	dir = opendir(PIN_ROOT);
	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		pin_path(path, sizeof(path), d->d_name, "counts");
		fd = bpf_obj_get(path);
		printf("policy %s: moved %llu, kept %llu\n", d->d_name,
		       fd < 0 ? 0 : counter(fd, SDP_POLICY_MOVED),
		       fd < 0 ? 0 : counter(fd, SDP_POLICY_KEPT));
		if (fd >= 0)
			close(fd);
	}
	if (dir)
		closedir(dir);
	return 0;
}

/* COMMAND in a cgroup of its own, under a policy for it alone. */
static int cmd_run(struct policy *p, char **argv)
{
	char cg[PATH_MAX], procs[PATH_MAX + 16];
	struct sdp_policy *skel;
	int st = 0, fd;
	pid_t pid;

	need_hook();
	snprintf(cg, sizeof(cg), CGROUP_ROOT "/sdp_bpf-%d", getpid());
	if (mkdir(cg, 0755))
		die("run: %s: %m (is cgroup v2 mounted on " CGROUP_ROOT "?)",
		    cg);
	p->cgroups[0] = cg;
	p->ncgroups = 1;
	skel = load(p);
	pid = fork();
	if (pid < 0)
		die("fork: %m");
	if (!pid) {
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
		fd = open(procs, O_WRONLY);
		if (fd < 0 || write(fd, "0", 1) != 1)
			die("cannot join %s: %m", cg);
		close(fd);
		execvp(argv[0], argv);
		fprintf(stderr, "sdp_bpf: %s: %m\n", argv[0]);
		_exit(127);
	}
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	sdp_policy__destroy(skel);
	rmdir(cg);	/* fails while a daemon it left runs: left there */
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

static void usage(FILE *f)
{
	fputs("usage: sdp_bpf check\n"
	      "       sdp_bpf attach NAME --cgroup DIR... [--program NAME[*]...] [--config FILE]\n"
	      "       sdp_bpf detach NAME\n"
	      "       sdp_bpf status\n"
	      "       sdp_bpf run [--program NAME[*]...] [--config FILE] -- COMMAND [ARG...]\n"
	      "options: -v (libbpf's messages), --protocol sdp|smc|N (what sockets become)\n", f);
}

/* A policy's option @o (with @arg) into @p; false for one it has not.
 * --cgroup only where @cgroups: run makes the cgroup itself.
 */
static bool policy_opt(struct policy *p, int o, const char *arg, bool cgroups)
{
	switch (o) {
	case 'f':
		read_config(p, arg);
		return true;
	case 'p':
		add_rule(p, arg);
		return true;
	case 'P':
		p->proto = proto_arg(arg);
		return true;
	case 'v':
		verbose = true;
		return true;
	case 'c':
		if (!cgroups)
			return false;
		if (p->ncgroups == SDP_POLICY_CGROUPS)
			die("at most %d --cgroup", SDP_POLICY_CGROUPS);
		p->cgroups[p->ncgroups++] = arg;
		return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cgroup", required_argument, NULL, 'c' },
		{ "program", required_argument, NULL, 'p' },
		{ "config", required_argument, NULL, 'f' },
		{ "protocol", required_argument, NULL, 'P' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	struct policy p = { };
	const char *cmd, *name;
	int o;

	while ((o = getopt_long(argc, argv, "+c:p:f:P:vh", opts, NULL)) != -1) {
		if (o == 'h') {
			usage(stdout);
			return 0;
		}
		if (!policy_opt(&p, o, optarg, true)) {
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	libbpf_set_print(libbpf_print);
	cmd = argv[optind++];
	if (!strcmp(cmd, "check")) {
		need_hook();
		puts("sdp_bpf: this kernel has the update_socket_protocol hook");
		return 0;
	}
	if (!strcmp(cmd, "status"))
		return cmd_status();
	if (!strcmp(cmd, "run")) {
		/* options may follow "run" too */
		while ((o = getopt_long(argc, argv, "+p:f:P:v", opts, NULL)) != -1)
			if (!policy_opt(&p, o, optarg, false))
				return 2;
		if (optind >= argc)
			die("run: no command");
		return cmd_run(&p, argv + optind);
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(cmd, "detach"))
		return cmd_detach(argv[optind]);
	if (!strcmp(cmd, "attach")) {
		name = argv[optind++];
		while ((o = getopt_long(argc, argv, "+c:p:f:P:v", opts, NULL)) != -1)
			if (!policy_opt(&p, o, optarg, true))
				return 2;
		return cmd_attach(name, &p);
	}
	usage(stderr);
	return 2;
}
