from . import base


def test_fused_moe():
    base.GenericBenchmark(op_name="fused_moe").run()


# Same name as main's softmax: the vllm: prefix keeps them apart.
def test_softmax():
    base.GenericBenchmark(op_name="vllm_softmax").run()
