from . import base


def test_nextafter_():
    base.GenericBenchmark(op_name="nextafter_").run()
