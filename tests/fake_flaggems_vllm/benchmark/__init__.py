# The fake FlagGems-vllm benchmark package (modules import as benchmark.<name>).
