#!/usr/bin/env python3
"""Whole-process comparison with the physical floor (../shared/bench/README.md).

Builds the floor and the release binary (unless given), makes a 255-worker and a 1-worker root
(1 MiB sessions, 32 x 3 MiB logs, a report per worker), runs each pair interleaved (A, B, A, B ...)
after warm-up passes (board files present), and prints medians of wall time and CPU (user+sys of
the child) and their ratios. No tmux server is reachable (private, empty TMUX_TMPDIR).

usage: python3 benches/floor_compare.py [--rounds N] [--bin PATH ...] [--floor PATH] [--workers 255,1]
Several --bin: each is measured in the same interleaved rounds (e.g. before and after a change).
"""
import argparse, os, resource, shutil, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BENCH = os.environ.get("INTERCOM_PANE_BENCH_DIR", os.path.join(os.path.dirname(REPO), "shared", "bench"))


def build(args):
    floor = args.floor
    if not floor:
        tgt = os.path.join(tempfile.gettempdir(), "floor-target")
        subprocess.run(["cargo", "build", "-q", "--release", "--manifest-path",
                        os.path.join(BENCH, "floor", "Cargo.toml"), "--target-dir", tgt], check=True)
        floor = os.path.join(tgt, "release", "floor")
    bins = args.bin
    if not bins:
        subprocess.run(["cargo", "build", "-q", "--release", "--bin", "intercom-pane"], cwd=REPO, check=True)
        bins = [os.path.join(REPO, "target", "release", "intercom-pane")]
    return floor, bins


def run_once(argv, cwd, env):
    """Wall ms and CPU ms (user + sys) of one whole process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - t0) * 1000
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"{argv[0]} {' '.join(argv[1:])}: exit {p.returncode}")
    return wall, (ru.ru_utime + ru.ru_stime) * 1000


def measure(pairs, cwd, env, rounds):
    """pairs: name -> argv. Interleaved rounds after two warm-up passes each."""
    for _ in range(2):
        for argv in pairs.values():
            run_once(argv, cwd, env)
    res = {k: ([], []) for k in pairs}
    for _ in range(rounds):
        for k, argv in pairs.items():
            w, c = run_once(argv, cwd, env)
            res[k][0].append(w)
            res[k][1].append(c)
    return {k: (statistics.median(w), statistics.median(c)) for k, (w, c) in res.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--bin", action="append", default=[])
    ap.add_argument("--floor")
    ap.add_argument("--workers", default="255,1")
    args = ap.parse_args()
    floor, bins = build(args)
    with tempfile.TemporaryDirectory(prefix="floor-compare-") as tmp:
        for n in [int(x) for x in args.workers.split(",")]:
            d = os.path.join(tmp, f"w{n}")
            subprocess.run([sys.executable, os.path.join(BENCH, "make_scale_root.py"), d, str(n), str(1 << 20)],
                           check=True, stdout=subprocess.DEVNULL)
            os.makedirs(os.path.join(d, "tmux"), exist_ok=True)
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": d,
                   "PI_CODING_AGENT_DIR": os.path.join(d, "agent"),
                   "XDG_STATE_HOME": os.path.join(d, "state"), "TMUX_TMPDIR": os.path.join(d, "tmux")}
            cwd = os.path.join(d, "root")
            for label, cmd, fl in [("scan --json", ["scan", "--json"], ["--write", "--json"]),
                                   ("status --json", ["status", "--json"], ["--json"])]:
                pairs = {"floor": [floor] + fl}
                for i, b in enumerate(bins):
                    pairs[f"bin{i}"] = [b] + cmd
                m = measure(pairs, cwd, env, args.rounds)
                fw, fc = m["floor"]
                print(f"{n:>3} workers  {label:<14} floor {fw:6.1f} ms wall {fc:6.1f} ms CPU")
                for i, b in enumerate(bins):
                    w, c = m[f"bin{i}"]
                    print(f"    {b}\n      {w:6.1f} ms wall {c:6.1f} ms CPU"
                          f"  ratio wall {w / fw:.2f}  CPU {c / fc:.2f}")


if __name__ == "__main__":
    main()
