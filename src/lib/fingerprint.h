/*
 * Content fingerprints (XXH3-64 from libxxhash): cheap enough to take over
 * a compiled compiler library on every run, stable across machines.
 */
#ifndef ZLB_FINGERPRINT_H
#define ZLB_FINGERPRINT_H

#include <stdint.h>

/* Hash a whole file. Returns 0 and sets *hash and *size, or -1 (errno set). */
int file_xxh3(const char *path, uint64_t *hash, uint64_t *size);

#endif
