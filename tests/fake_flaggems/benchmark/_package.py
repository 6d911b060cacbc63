"""Which FlagGems package this fake checkout provides.

The benchmark infrastructure (base, conftest, consts, utils) is shared by
both fake checkouts; like upstream's two repositories they differ in the
package they import: flag_gems here.
"""
import importlib

NAME = "flag_gems"
gems = importlib.import_module(NAME)
