#include "lib/unixsock.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/error.h"

static const struct timespec retry_pause = { 0, 20 * 1000 * 1000 };

/* connect(), tried again while the socket is missing or refuses, up to tries. */
static int connect_patiently(int fd, const struct sockaddr_un *addr, int tries)
{
	for (;;) {
		if (!connect(fd, (const struct sockaddr *)addr, sizeof(*addr)))
			return 0;
		if ((errno != ENOENT && errno != ECONNREFUSED) || tries-- <= 0)
			return -1;
		nanosleep(&retry_pause, NULL);
	}
}

int unix_socket_listener_pid(const char *path, int wait_ms, pid_t *pid)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd, r = -1;

	if (strlen(path) >= sizeof(addr.sun_path))
		return error("socket path too long (%zu bytes, at most %zu): %s",
			     strlen(path), sizeof(addr.sun_path) - 1, path);
	memcpy(addr.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_errno("socket");
	if (connect_patiently(fd, &addr, wait_ms / 20))
		error_errno("cannot connect to %s", path);
	else if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		error_errno("SO_PEERCRED on %s", path);
	else {
		*pid = cred.pid;
		r = 0;
	}
	close(fd);
	return r;
}
