"""zlbench: the in-process half of zlb.

pytest plugins loaded into FlagGems' benchmark process by `zlb run`
(`-p zlbench.results -p zlbench.seed -p zlbench.shapes -p zlbench.timing`).
They observe and act inside the measured process and write raw facts as JSON
lines under $ZLB_RUN_DIR; the C side reads them and writes everything a user
reads. The contract is docs/protocol.md.

Every module here imports without torch, triton or flag_gems installed: those
are imported lazily, inside hooks.
"""

__version__ = "0.1.0"

# Carried by every line of results.jsonl and events.jsonl.
SCHEMA_VERSION = 1
