"""torch.version of the stub."""

__version__ = "0.0-stub"
cuda = "13.0"
hip = None
git_version = "stub"
