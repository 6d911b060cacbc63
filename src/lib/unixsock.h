/*
 * Unix stream sockets: what zlb needs of a peer listening on one.
 */
#ifndef ZLB_UNIXSOCK_H
#define ZLB_UNIXSOCK_H

#include <sys/types.h>

/*
 * The pid of the process listening on the socket at path, as the kernel
 * tells it (SO_PEERCRED), learnt by connecting and closing at once without
 * a byte sent: a listener must take such a connection as a probe. A socket
 * not there yet or not listening yet is tried again for up to wait_ms (a
 * listener just started binds within its own start). Returns 0, or -1 with
 * error() (no such socket or nobody listening by then, path too long).
 */
int unix_socket_listener_pid(const char *path, int wait_ms, pid_t *pid);

#endif
