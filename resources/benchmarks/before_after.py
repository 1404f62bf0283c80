#!/usr/bin/python3
"""Before and after a change, side by side on this machine: the fresh build's time, `medseg bench`'s
figures and the demo's held-out Dice, of two commits of this repository.

Each commit is cloned into --work and built from nothing as README's build does
(`cmake --preset release && cmake --build --preset release -j CORES`, no ccache), one after the other;
then the bench runs --rounds times on each, alternating before and after, so that the machine's drift
falls on both; then the demo runs once on each (`medseg demo`, its own budget and data). Nothing else
should run meanwhile.

  /usr/bin/python3 resources/benchmarks/before_after.py --before 910e47b --after HEAD --save

--before-build / --after-build take folders already built (build/release of a clone) instead of
cloning and building; --smoke runs the bench and the demo at their smallest on one build given twice
(what the test suite runs, to keep this script working).
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchmark_report  # noqa: E402

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH_FLAGS = ["--whole-volume"]
SMOKE_BENCH_FLAGS = ["--depth", "2", "--base-filters", "4", "--patch", "16", "--steps", "2", "--warmup", "1",
                     "--roi", "32", "--infer-size", "48,48,32"]
DEMO_FLAGS = []
# A bench takes about 2 minutes and the demo its 9-minute budget on 2 cores: five times that is a hang.
BENCH_LIMIT_S = 600
DEMO_LIMIT_S = 3000
SMOKE_DEMO_FLAGS = ["--cases", "8", "--size", "32"]


def run(command, cwd=None, env=None, limit_s=None):
    """The command's stdout; its stderr passes through; a failure, or a run past limit_s seconds (a
    commit whose command hangs), stops the study with the command named."""
    try:
        done = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE, text=True, timeout=limit_s)
    except subprocess.TimeoutExpired:
        sys.exit("before_after: `%s` did not finish within %d s: does this commit's command hang?"
                 % (" ".join(command), limit_s))
    if done.returncode != 0:
        sys.exit("before_after: `%s` failed with exit status %d" % (" ".join(command), done.returncode))
    return done.stdout


def commit_of(repo, name):
    return run(["git", "-C", repo, "rev-parse", "--short", name]).strip()


def fresh_build(repo, commit, work):
    """Clones `commit` into work/<commit>, builds it and returns (build folder, seconds, build steps)."""
    clone = os.path.join(work, commit)
    run(["git", "clone", "--quiet", "--no-checkout", repo, clone])
    run(["git", "-C", clone, "checkout", "--quiet", commit])
    start = time.monotonic()
    run(["cmake", "--preset", "release"], cwd=clone)
    log = run(["cmake", "--build", "--preset", "release", "-j", str(benchmark_report.usable_cores())], cwd=clone)
    seconds = time.monotonic() - start
    steps = sum(1 for line in log.splitlines() if line.startswith("["))
    return os.path.join(clone, "build", "release"), seconds, steps


def medseg_of(build):
    program = os.path.join(build, "bin", "medseg")
    if not os.access(program, os.X_OK):
        sys.exit("before_after: %s is not a built medseg (give a build folder such as CLONE/build/release)" % program)
    return program


def result_event(stdout, kind):
    """The `result` event of a `medseg --json` run's lines."""
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "result":
            return event
    sys.exit("before_after: `medseg --json %s` printed no result event" % kind)


def bench(build, flags):
    report = result_event(run([medseg_of(build), "--json", "bench"] + flags, limit_s=BENCH_LIMIT_S), "bench")
    figures = {"conv3d_gflops": report.get("conv3d_gflops"), "peak_rss_mb": report.get("peak_rss_mb")}
    if "train" in report:
        figures["train_step_s"] = report["train"]["step_s"]
    if "infer" in report:
        figures["sliding_window_s"] = report["infer"]["sliding_window_s"]
        if "whole_volume_s" in report["infer"]:
            figures["whole_volume_s"] = report["infer"]["whole_volume_s"]
    return figures


def demo(build, work, name, flags):
    out = os.path.join(work, "demo-" + name)
    start = time.monotonic()
    run([medseg_of(build), "demo", "--out", out] + flags, limit_s=DEMO_LIMIT_S)
    with open(os.path.join(out, "report.json")) as f:
        report = json.load(f)
    return {"seconds": time.monotonic() - start, "report": report}


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else 0.5 * (ordered[middle - 1] + ordered[middle])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", help="the commit before the change")
    parser.add_argument("--after", default="HEAD", help="the commit after it (default HEAD)")
    parser.add_argument("--repo", default=SOURCE, help="the repository to clone (default: this one)")
    parser.add_argument("--work", help="where the clones, builds and demo runs go (default: a new temporary folder)")
    parser.add_argument("--before-build", help="a built build/release of the before commit (no clone, no build)")
    parser.add_argument("--after-build", help="a built build/release of the after commit (no clone, no build)")
    parser.add_argument("--rounds", type=int, default=3, help="bench runs of each side, alternating (default 3)")
    parser.add_argument("--no-demo", action="store_true", help="skip the demos")
    parser.add_argument("--demo-config", help="the demos' training config (default: each commit's own default)")
    parser.add_argument("--save", action="store_true", help="write results/<date>-<cpu>-before-after.json")
    parser.add_argument("--smoke", action="store_true", help="tiny bench and demo; needs --before-build and --after-build")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.smoke and not (args.before_build and args.after_build):
        parser.error("--smoke takes built folders: --before-build and --after-build")
    if not args.before and not args.before_build:
        parser.error("give --before COMMIT (or --before-build FOLDER)")
    work = args.work or tempfile.mkdtemp(prefix="before-after-")
    os.makedirs(work, exist_ok=True)

    sides = {}
    for name, commit, built in (("before", args.before, args.before_build), ("after", args.after, args.after_build)):
        if built:
            sides[name] = {"commit": commit, "build": os.path.abspath(built)}
            continue
        commit = commit_of(args.repo, commit)
        build, seconds, steps = fresh_build(args.repo, commit, work)
        sides[name] = {"commit": commit, "build": build, "fresh_build_s": round(seconds, 1), "build_steps": steps}
        print("%s (%s): fresh build %.0f s, %d steps" % (name, commit, seconds, steps), file=sys.stderr)

    flags = SMOKE_BENCH_FLAGS if args.smoke else BENCH_FLAGS
    rounds = {"before": [], "after": []}
    for _ in range(args.rounds):
        for name in ("before", "after"):
            rounds[name].append(bench(sides[name]["build"], flags))
    for name in ("before", "after"):
        keys = rounds[name][0].keys()
        sides[name]["bench_rounds"] = rounds[name]
        sides[name]["bench_median"] = {k: median([r[k] for r in rounds[name] if r.get(k) is not None])
                                       for k in keys if any(r.get(k) is not None for r in rounds[name])}
        if not args.no_demo:
            demo_flags = (SMOKE_DEMO_FLAGS if args.smoke else DEMO_FLAGS) + (["--config", args.demo_config] if args.demo_config else [])
            sides[name]["demo"] = demo(sides[name]["build"], work, name, demo_flags)
        del sides[name]["build"]

    ratios = {k: sides["after"]["bench_median"][k] / sides["before"]["bench_median"][k]
              for k in sides["after"]["bench_median"] if sides["before"]["bench_median"].get(k)}
    report = {"date": datetime.date.today().isoformat(),
              "cpu": benchmark_report.cpu_model(), "usable_cores": benchmark_report.usable_cores(),
              "bench_flags": flags, "rounds": args.rounds, "before": sides["before"], "after": sides["after"],
              "ratio_after_over_before": ratios}
    print(json.dumps(report, indent=1, sort_keys=True))
    if args.save and not args.smoke:
        benchmark_report.save_report(report, "before-after")


if __name__ == "__main__":
    main()
