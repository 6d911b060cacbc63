"""triton.language of the stub: only `constexpr`, the annotation the stub JIT
reads to tell compile-time parameters apart."""


class constexpr:
    def __init__(self, value=None):
        self.value = value

    def __repr__(self):
        return "constexpr[%r]" % (self.value,)
