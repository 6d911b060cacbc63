"""Benchmark classes shaped like FlagGems' base.py, without torch."""


class Benchmark:
    def __init__(self, op_name, torch_op=None, dtypes=None, is_backward=False):
        self.op_name = op_name + ("_backward" if is_backward else "")

    def run(self):
        pass


class GenericBenchmark(Benchmark):
    pass


class UnaryReductionBenchmark(GenericBenchmark):
    pass
