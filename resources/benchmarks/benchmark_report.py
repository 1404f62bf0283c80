"""What the side-by-side benchmark scripts share: the machine's facts, MedSeg's heap settings as a peer
gets them, and a report saved atomically under results/ with the command that made it."""
import json
import os
import sys

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
# MedSeg's heap settings (core/util/TensorMemory.cpp) as a glibc tunable: no mmap of its own for any
# block, 512 MiB top pad, 1 GiB trim threshold.
MEDSEG_HEAP_TUNABLES = "glibc.malloc.mmap_max=0:glibc.malloc.top_pad=536870912:glibc.malloc.trim_threshold=1073741824"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown-cpu"


def usable_cores():
    return len(os.sched_getaffinity(0))


def save_report(report, kind, extra=None):
    """results/<date>-<cpu model>-<kind>.json, written atomically; returns its path."""
    os.makedirs(RESULTS, exist_ok=True)
    name = report["date"] + "-" + "-".join("".join(c if c.isalnum() else " " for c in report["cpu"]).split()) + f"-{kind}.json"
    path = os.path.join(RESULTS, name)
    with open(path + ".tmp", "w") as f:
        json.dump({"command": " ".join(sys.argv), **report, **(extra or {})}, f, indent=1, sort_keys=True)
    os.replace(path + ".tmp", path)
    print("written: " + path, file=sys.stderr)
    return path
