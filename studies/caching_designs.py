"""The register-caching designs' study (the LTRF and Malekeh papers): rfmodel/studies/caching_designs.py,
also ``rfmodel study caching`` (and ``rfmodel study malekeh``: Malekeh's configuration).
``python studies/caching_designs.py --help`` lists its options."""

import sys

from rfmodel.studies import launch

if __name__ == "__main__":
    sys.exit(launch("caching", "caching_designs.py"))
