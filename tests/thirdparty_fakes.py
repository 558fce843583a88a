"""Stand-in equivalence checkers that calibrate tests/thirdparty.py: it must
pass their verdicts on, and survive one that hangs or crashes."""
import os
import signal
import time

# The function whose check `hang_on_target` and `crash_on_target` misbehave on.
TARGET = "is_valid_cidr"  # in requests/utils.py; it compares


def always_proven(reference, recompiled):
    return True, "stand-in"


def never_sure(reference, recompiled):
    return None, "stand-in"


def hang_on_target(reference, recompiled):
    if reference.co_name == TARGET:
        while True:
            time.sleep(60)
    return True, "stand-in"


def crash_on_target(reference, recompiled):
    if reference.co_name == TARGET:
        os.kill(os.getpid(), signal.SIGSEGV)
    return True, "stand-in"
