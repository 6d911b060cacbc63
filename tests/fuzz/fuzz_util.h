/*
 * What every libFuzzer harness of tests/fuzz/ shares (each harness is a
 * program of its own, so this header defines rather than declares).
 *
 * The library says what is wrong through error() and warning(): silenced
 * here, since bad input is the point. Parsers that read files (by path,
 * as zlb reads a run directory) get the input written to a private
 * directory first: fuzz_dir() made once per process (left behind: a
 * harness runs until it is stopped), fuzz_put() rewriting one file in it.
 */
#ifndef ZLB_TESTS_FUZZ_UTIL_H
#define ZLB_TESTS_FUZZ_UTIL_H

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/error.h"
#include "lib/paths.h"

static __attribute__((unused)) void fuzz_quiet(const char *prefix, const char *msg)
{
	(void)prefix;
	(void)msg;
}

/* Silence the library's messages; call from LLVMFuzzerInitialize. */
static __attribute__((unused)) void fuzz_init(void)
{
	set_error_routine(fuzz_quiet);
	set_warning_routine(fuzz_quiet);
}

/* A private directory for the inputs written as files. */
static __attribute__((unused)) const char *fuzz_dir(void)
{
	static char dir[256];

	if (!dir[0]) {
		/* Memory, where there is a tmpfs for it: each input is a file write. */
		const char *t = getenv("TMPDIR");
		const char *base = !access("/dev/shm", W_OK) ? "/dev/shm" : t && *t ? t : "/tmp";
		snprintf(dir, sizeof(dir), "%s/zlb-fuzz-XXXXXX", base);
		if (!mkdtemp(dir))
			abort();
	}
	return dir;
}

/* Write data as dir/name (replacing what was there); its path, fresh. */
static __attribute__((unused)) char *fuzz_put(const char *dir, const char *name, const uint8_t *data, size_t size)
{
	char *path = path_join(dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		abort();
	for (size_t done = 0; done < size;) {
		ssize_t n = write(fd, data + done, size - done);
		if (n <= 0)
			abort();
		done += (size_t)n;
	}
	close(fd);
	return path;
}

/* data as a NUL-terminated string (NULs inside kept: C readers stop there). */
static __attribute__((unused)) char *fuzz_text(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

#endif
