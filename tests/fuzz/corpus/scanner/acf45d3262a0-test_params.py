import pytest


@pytest.mark.parametrize("n", [1, 2, 3])
def test_mm(n):
    pass


class TestMatmul:
    def test_bmm(self):
        pass
