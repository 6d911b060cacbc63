/*
 * A stand-in for the non-CUDA vendor runtimes zlb enumerates devices with
 * (src/backends/{musa,rocm,ascend}.c through dlprobe.c): the MUSA driver
 * (mu*), HIP (hip*) and AscendCL (acl*) entry points zlb looks up, in one
 * library that tests load through ZLB_LIBMUSA, ZLB_LIBHIP and
 * ZLB_LIBASCENDCL.
 *
 * FAKE_VENDOR_DEVICES (default 2) devices, named per vendor ("Fake MTT S5000
 * 0", "Fake AMD MI300X 1", ...); FAKE_VENDOR_INIT_FAILS=1 makes the init call
 * fail with 100 (no device). Driver versions: MUSA 40100, HIP 60200.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static int devices(void)
{
	const char *v = getenv("FAKE_VENDOR_DEVICES");
	return v && *v ? atoi(v) : 2;
}

static int init_rc(void)
{
	const char *v = getenv("FAKE_VENDOR_INIT_FAILS");
	return v && !strcmp(v, "1") ? 100 : 0;
}

static int count(int *n)
{
	if (!n)
		return 1;
	*n = devices();
	return 0;
}

static int name(const char *model, char *buf, int len, int dev)
{
	if (!buf || len <= 0 || dev < 0 || dev >= devices())
		return 1;
	snprintf(buf, (size_t)len, "Fake %s %d", model, dev);
	return 0;
}

/* MUSA driver API */
EXPORT int muInit(unsigned flags) { (void)flags; return init_rc(); }
EXPORT int muDeviceGetCount(int *n) { return count(n); }
EXPORT int muDeviceGetName(char *b, int len, int dev) { return name("MTT S5000", b, len, dev); }
EXPORT int muDriverGetVersion(int *v) { if (!v) return 1; *v = 40100; return 0; }

/* HIP */
EXPORT int hipInit(unsigned flags) { (void)flags; return init_rc(); }
EXPORT int hipGetDeviceCount(int *n) { return count(n); }
EXPORT int hipDeviceGetName(char *b, int len, int dev) { return name("AMD MI300X", b, len, dev); }
EXPORT int hipDriverGetVersion(int *v) { if (!v) return 1; *v = 60200; return 0; }

/* AscendCL: aclInit takes a config path (NULL: none) */
EXPORT int aclInit(const char *config) { (void)config; return init_rc(); }
EXPORT int aclrtGetDeviceCount(unsigned *n)
{
	if (!n)
		return 1;
	*n = (unsigned)devices();
	return 0;
}
