#include "lib/errbuf.h"

#include <stdarg.h>
#include <stdio.h>

void errbuf_printf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

void errbuf_clear(char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
}
