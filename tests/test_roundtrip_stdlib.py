"""Round trip of the stdlib corpus through depyf.decompile: every output must
compile, nothing may raise or hang, and the identical share must reach the
floor in fidelity_floor.json (the issue's target is 90%)."""
import json
import os
import sys

import roundtrip

FLOOR_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fidelity_floor.json")
TARGET_PERCENT = 90

def fidelity_floor():
    with open(FLOOR_FILE) as f:
        floors = json.load(f)
    return floors["%d.%d" % sys.version_info[:2]]


def test_stdlib_roundtrip(capsys):
    reports = roundtrip.run_corpus()
    identical = roundtrip.identical_percent(reports)
    floor = fidelity_floor()
    with capsys.disabled():
        print("\n" + roundtrip.format_table(reports))
        print("identical: %.1f%% (floor %s%%, target %d%%)" % (identical, floor, TARGET_PERCENT))

    broken = [f for f in roundtrip.failures(reports) if f[2] != "different"]
    assert not broken, "%d functions did not decompile to compilable source:\n%s" % (
        len(broken), "\n".join("%s %s [%s] %s" % f for f in broken[:40]))
    assert identical >= floor, "identical share %.1f%% fell below the floor %s%%:\n%s" % (
        identical, floor, roundtrip.format_failures(reports, 40))
