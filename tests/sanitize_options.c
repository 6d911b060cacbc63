/*
 * Linked into zlb and the unit tests of the sanitizer build only
 * (CMakeLists.txt, ZLB_SANITIZE): where ASan and UBSan write their
 * reports. Into files of one directory (ZLB_SAN_REPORTS) rather than onto
 * stderr, so a report from a process whose exit no test reads (a zlb run
 * below a batch, a process killed on purpose) is still found: `make
 * test-sanitize` fails when the directory holds anything. The CLI tests
 * give zlb an environment of their own, so the options are built in here
 * rather than passed in ASAN_OPTIONS.
 */
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);

const char *__asan_default_options(void)
{
	return "log_path=" ZLB_SAN_REPORTS "/asan:detect_leaks=1";
}

const char *__ubsan_default_options(void)
{
	return "log_path=" ZLB_SAN_REPORTS "/ubsan:print_stacktrace=1";
}
