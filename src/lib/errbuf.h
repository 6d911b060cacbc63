/*
 * Messages into a caller's error buffer (char *err, size_t errlen), the
 * convention of the code that is also linked into libzlbtimer: that library
 * lives inside a Python process and reports through buffers, never through
 * zlb's error() routine. Only libc.
 */
#ifndef ZLB_ERRBUF_H
#define ZLB_ERRBUF_H

#include <stddef.h>

/*
 * Format into err (cut to errlen, always terminated). A NULL err or a zero
 * errlen means the caller wants no message: nothing is written.
 */
void errbuf_printf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Empty err (no message), with the same NULL and zero-length rule. */
void errbuf_clear(char *err, size_t errlen);

#endif
