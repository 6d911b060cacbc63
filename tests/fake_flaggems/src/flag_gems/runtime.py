"""flag_gems.runtime of the fake: the device function table is torch.cuda."""

import os

import torch

torch_device_fn = torch.cuda
torch_backend_device = torch.backends.cuda


class _Device:
    name = "cuda"
    vendor_name = (os.environ.get("GEMS_VENDOR") or "nvidia").lower()


device = _Device()
