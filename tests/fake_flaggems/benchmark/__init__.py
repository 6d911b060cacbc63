# The fake FlagGems benchmark package (modules import as benchmark.<name>).
