#include "lib/fingerprint.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

int file_xxh3(const char *path, uint64_t *hash, uint64_t *size)
{
	XXH3_state_t *st;
	char buf[1 << 16];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), saved;

	if (fd < 0)
		return -1;
	st = XXH3_createState();
	if (!st) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	XXH3_64bits_reset(st);
	*size = 0;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			saved = errno;
			XXH3_freeState(st);
			close(fd);
			errno = saved;
			return -1;
		}
		XXH3_64bits_update(st, buf, (size_t)n);
		*size += (uint64_t)n;
	}
	*hash = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	close(fd);
	return 0;
}
