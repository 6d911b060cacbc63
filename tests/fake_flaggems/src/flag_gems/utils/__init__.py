"""flag_gems.utils of the fake. As upstream, `libentry` here is the decorator;
the module is flag_gems.utils.libentry in sys.modules."""

from . import shape_utils  # noqa: F401
from .libentry import libentry, libtuner  # noqa: F401
