#include "lib/proc_tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/error.h"
#include "lib/strbuf.h"

/* How long proc_kill_tree() keeps reading the tree for processes that do not die. */
#define KILL_ROUNDS 400
#define KILL_ROUND_MS 5

int proc_become_subreaper(void)
{
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
		return error_errno("cannot become a subreaper (PR_SET_CHILD_SUBREAPER)");
	return 0;
}

void pid_set_add(struct pid_set *s, pid_t pid)
{
	if (pid_set_has(s, pid))
		return;
	if (s->nr == s->alloc) {
		s->alloc = s->alloc ? s->alloc * 2 : 16;
		s->v = xrealloc(s->v, s->alloc * sizeof(*s->v));
	}
	s->v[s->nr++] = pid;
}

int pid_set_has(const struct pid_set *s, pid_t pid)
{
	for (size_t i = 0; i < s->nr; i++)
		if (s->v[i] == pid)
			return 1;
	return 0;
}

void pid_set_clear(struct pid_set *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

struct proc_entry {
	pid_t pid, ppid, pgrp;
	char state;	/* 'Z' zombie, 'X' dead: nothing to kill */
};

/* Every process of the machine, from /proc/<pid>/stat. */
static size_t read_procs(struct proc_entry **out)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	size_t n = 0, alloc = 0;

	*out = NULL;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[64], buf[512], *rp, state;
		int fd, pid = atoi(e->d_name), ppid, pgrp;
		ssize_t len;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		/* The command name may hold spaces and parentheses: skip to the last ')'. */
		rp = strrchr(buf, ')');
		if (!rp || sscanf(rp + 1, " %c %d %d", &state, &ppid, &pgrp) != 3)
			continue;
		if (n == alloc) {
			alloc = alloc ? alloc * 2 : 256;
			*out = xrealloc(*out, alloc * sizeof(**out));
		}
		(*out)[n++] = (struct proc_entry){ pid, ppid, pgrp, state };
	}
	closedir(d);
	return n;
}

/* The descendants of root among p (root excluded), into set. */
static void descendants(const struct proc_entry *p, size_t n, pid_t root, struct pid_set *set)
{
	struct pid_set within = PID_SET_INIT;
	int grew = 1;

	pid_set_add(&within, root);
	while (grew) {
		grew = 0;
		for (size_t i = 0; i < n; i++) {
			if (pid_set_has(&within, p[i].ppid) && !pid_set_has(&within, p[i].pid)) {
				pid_set_add(&within, p[i].pid);
				pid_set_add(set, p[i].pid);
				grew = 1;
			}
		}
	}
	pid_set_clear(&within);
}

size_t proc_kill_tree(pid_t root, struct pid_set *killed)
{
	pid_t self = getpid(), own_group = getpgrp(), root_group = getpgid(root);
	struct pid_set signalled = PID_SET_INIT;
	size_t count;

	for (int round = 0; round < KILL_ROUNDS; round++) {
		struct proc_entry *p;
		size_t n = read_procs(&p);
		struct pid_set below = PID_SET_INIT;
		int alive = 0;

		descendants(p, n, root, &below);
		for (size_t i = 0; i < n; i++) {
			if (!pid_set_has(&below, p[i].pid))
				continue;
			if (p[i].state != 'Z' && p[i].state != 'X') {
				alive = 1;
				if (p[i].pgrp > 1 && p[i].pgrp != own_group && p[i].pgrp != root_group)
					kill(-p[i].pgrp, SIGKILL);
				kill(p[i].pid, SIGKILL);
				pid_set_add(&signalled, p[i].pid);
				if (killed)
					pid_set_add(killed, p[i].pid);
			}
			if (p[i].ppid == self)
				waitpid(p[i].pid, NULL, WNOHANG);
		}
		free(p);
		pid_set_clear(&below);
		if (!alive)
			break;
		/* SIGKILL is delivered, not done: let them die before reading again. */
		poll(NULL, 0, KILL_ROUND_MS);
	}
	count = signalled.nr;
	pid_set_clear(&signalled);
	return count;
}

void proc_reap(struct pid_set *s)
{
	size_t j = 0;

	for (size_t i = 0; i < s->nr; i++) {
		pid_t r = waitpid(s->v[i], NULL, WNOHANG);

		/* Gone (reaped here, or by another parent): forget it. */
		if (r == s->v[i] || (r < 0 && kill(s->v[i], 0) && errno == ESRCH))
			continue;
		s->v[j++] = s->v[i];
	}
	s->nr = j;
}
