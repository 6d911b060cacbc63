/*
 * Short GPU uuids for a terminal line, the way git shortens object names:
 * the shortest prefix that still tells every uuid of the set apart, never
 * shorter than a floor. Real uuids are random, so the floor is almost
 * always enough; cards whose uuids share a long prefix (the test driver's
 * differ only at the end) keep as much as it takes, up to the whole uuid.
 */
#ifndef ZLB_UUID_ABBREV_H
#define ZLB_UUID_ABBREV_H

#include <stddef.h>

/* The default floor: "GPU-" and 8 hex digits, as nvidia-smi's uuids begin. */
#define UUID_ABBREV_MIN 12

/*
 * The prefix length that makes each distinct uuid of uuids[0..n) unique
 * among them: at least min (or the uuid's whole length if shorter); NULL
 * and "" entries are ignored, equal ones count once.
 */
size_t uuid_abbrev_len(const char *const *uuids, size_t n, size_t min);

#endif
