#include "lib/uuid_abbrev.h"

#include <string.h>

/* How many leading bytes a and b share. */
static size_t common(const char *a, const char *b)
{
	size_t k = 0;

	while (a[k] && a[k] == b[k])
		k++;
	return k;
}

size_t uuid_abbrev_len(const char *const *uuids, size_t n, size_t min)
{
	size_t len = min;

	/* a handful of cards per batch: comparing every pair is enough */
	for (size_t i = 0; i < n; i++) {
		if (!uuids[i] || !*uuids[i])
			continue;
		for (size_t j = i + 1; j < n; j++) {
			size_t k;

			if (!uuids[j] || !*uuids[j] || !strcmp(uuids[i], uuids[j]))
				continue;
			/* one more byte than they share tells them apart */
			k = common(uuids[i], uuids[j]) + 1;
			if (k > len)
				len = k;
		}
	}
	return len;
}
