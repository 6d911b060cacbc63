"""triton.runtime of the stub: driver.active.get_benchmarker() returns
triton.testing.do_bench as it is at call time (as Triton's does)."""


class _Active:
    def get_benchmarker(self):
        from triton.testing import do_bench

        return do_bench


class _Driver:
    active = _Active()


driver = _Driver()
