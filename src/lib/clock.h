/*
 * The monotonic clock in seconds: how long something took, never when.
 */
#ifndef ZLB_CLOCK_H
#define ZLB_CLOCK_H

/* Seconds on CLOCK_MONOTONIC (an arbitrary origin: subtract two readings). */
double mono_s(void);

#endif
