"""torch.backends of the stub: flags FlagGems sets and never reads back."""

from types import SimpleNamespace

cuda = SimpleNamespace(matmul=SimpleNamespace(allow_tf32=False))
cudnn = SimpleNamespace(allow_tf32=False, enabled=True)
