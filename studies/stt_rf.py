"""The STT-RAM register file's study: rfmodel/studies/stt_rf.py, also ``rfmodel study stt``.
``python studies/stt_rf.py --help`` lists its options."""

import sys

from rfmodel.studies import launch

if __name__ == "__main__":
    sys.exit(launch("stt", "stt_rf.py"))
