#!/usr/bin/env python3
"""Draw bus bandwidth against size from the -J JSON files of Braid's *_perf programs.

One line per file (and per type/operation/root left after the filters), so that two runs
- two commits, two transports, Braid and another library writing the same schema - can be
compared in one picture. --csv writes the same data as CSV and needs no matplotlib.

Run it with Debian's Python, which has python3-matplotlib (scripts/install-deps.sh):
  /usr/bin/python3 tools/plot/braid_plot.py -o busbw.png before.json after.json

Exit status: 0 done; 1 a file could not be read or has nothing to plot; 2 usage error, or
matplotlib is missing for a PNG.
"""

import argparse
import csv
import json
import os
import sys
from collections import OrderedDict

SCHEMA = "braid-bench/1"
PLACEMENTS = {"out-of-place": "out_of_place", "in-place": "in_place"}
CSV_COLUMNS = ["label", "file", "library", "program", "type", "redop", "root", "placement", "size", "count",
               "time_us", "algbw_gbs", "busbw_gbs"]


class InputError(Exception):
    """A file that cannot be used; the message names it."""


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="braid_plot.py",
        description="Plot bus bandwidth (GB/s) against size from *_perf -J JSON files, one line per file.",
        epilog="Example: /usr/bin/python3 tools/plot/braid_plot.py -o cmp.png --label before --label after "
               "a.json b.json")
    parser.add_argument("files", nargs="+", metavar="FILE.json", help="-J output of a *_perf program")
    parser.add_argument("-o", "--output", metavar="OUT.png", help="write the plot here (PNG, needs matplotlib)")
    parser.add_argument("--csv", metavar="OUT.csv", help="write the plotted data as CSV ('-': standard output)")
    parser.add_argument("--label", action="append", default=[],
                        help="legend label of each file, in order (default: the file name)")
    parser.add_argument("--op", help="only this reduction operation (sum, prod, max, min, avg, mulsum, none)")
    parser.add_argument("--type", help="only this data type (float, half, int8, ...)")
    parser.add_argument("--root", type=int, help="only this root (rooted collectives)")
    parser.add_argument("--placement", choices=list(PLACEMENTS) + ["both"], default="out-of-place",
                        help="which half of each row to plot (default: out-of-place)")
    parser.add_argument("--title", help="title of the plot (default: the programs and the filters)")
    parser.add_argument("--reference", metavar="GBS[:LABEL]",
                        help="a dashed horizontal line at GBS GB/s, e.g. a link's rate: 1.25:'link rate'")
    args = parser.parse_args(argv)
    if not args.output and not args.csv:
        parser.error("nothing to write: give -o OUT.png and/or --csv OUT.csv")
    if args.reference:
        value, _, label = args.reference.partition(":")
        try:
            args.reference = (float(value), label or "%s GB/s" % value)
        except ValueError:
            parser.error("--reference %r: expected GB/s as a number, then optionally :LABEL" % args.reference)
    if args.label and len(args.label) != len(args.files):
        parser.error("%d --label value(s) for %d file(s): give one per file or none" %
                     (len(args.label), len(args.files)))
    return args


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise InputError("%s: %s" % (path, e)) from e
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise InputError("%s: not a *_perf -J file (no 'results' list)" % path)
    if doc.get("schema") != SCHEMA:
        print("braid_plot: %s: schema %r, not %r; reading it anyway" % (path, doc.get("schema"), SCHEMA),
              file=sys.stderr)
    if doc.get("status") == "failed":
        print("braid_plot: %s: the run failed (%s); plotting the rows it has" %
              (path, "; ".join(str(e) for e in doc.get("errors", [])) or "no reason given"), file=sys.stderr)
    return doc


def series_of(path, label, doc, args):
    """The lines of one file: {(type, redop, root, placement): {size: (count, time, algbw, busbw)}}.

    Rows repeated by -N (cycles) are averaged.
    """
    placements = list(PLACEMENTS) if args.placement == "both" else [args.placement]
    sums = OrderedDict()
    seen = set()
    for row in doc["results"]:
        key = (row.get("type"), row.get("redop"), row.get("root"))
        seen.add(key)
        if args.type is not None and key[0] != args.type:
            continue
        if args.op is not None and key[1] != args.op:
            continue
        if args.root is not None and key[2] != args.root:
            continue
        for placement in placements:
            half = row.get(PLACEMENTS[placement])
            if not isinstance(half, dict) or half.get("bus_bw") is None:
                continue
            points = sums.setdefault(key + (placement,), {})
            acc = points.setdefault(int(row["size"]), [row.get("count"), 0.0, 0.0, 0.0, 0])
            acc[1] += half.get("time") or 0.0
            acc[2] += half.get("alg_bw") or 0.0
            acc[3] += half["bus_bw"]
            acc[4] += 1
    if not sums:
        available = ", ".join("%s/%s/root %s" % k for k in sorted(seen, key=str)) or "no rows"
        raise InputError("%s: nothing matches the filters (the file has: %s)" % (path, available))
    lines = []
    for key, points in sums.items():
        averaged = {size: (a[0], a[1] / a[4], a[2] / a[4], a[3] / a[4]) for size, a in sorted(points.items())}
        lines.append({"label": label, "file": path, "key": key, "points": averaged,
                      "program": doc.get("program", "?"), "library": (doc.get("library") or {}).get("name", "?")})
    # Name the type/op/root/placement in the legend only where the file has several lines.
    varying = [i for i in range(4) if len({line["key"][i] for line in lines}) > 1]
    for line in lines:
        detail = " ".join(str(line["key"][i]) if i != 2 else "root %s" % line["key"][i] for i in varying)
        line["legend"] = "%s (%s)" % (label, detail) if detail else label
    return lines


def write_csv(lines, destination):
    out = sys.stdout if destination == "-" else open(destination, "w", newline="", encoding="utf-8")
    try:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for line in lines:
            dtype, redop, root, placement = line["key"]
            for size, (count, time_us, algbw, busbw) in line["points"].items():
                writer.writerow([line["label"], line["file"], line["library"], line["program"], dtype, redop, root,
                                 placement, size, count, "%.6g" % time_us, "%.6g" % algbw, "%.6g" % busbw])
    finally:
        if out is not sys.stdout:
            out.close()


def size_label(size):
    for shift, suffix in ((30, "G"), (20, "M"), (10, "K")):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return "%d%s" % (size >> shift, suffix)
    return str(size)


def import_pyplot():
    """matplotlib.pyplot with the Agg backend (no display needed), or None when missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        return None


def default_title(lines, args):
    programs = sorted({line["program"] for line in lines})
    filters = [v for v in (args.type, args.op, None if args.root is None else "root %d" % args.root) if v]
    placement = "out-of-place and in-place" if args.placement == "both" else args.placement
    return "%s: bus bandwidth, %s%s" % (", ".join(programs), placement,
                                        (" (" + ", ".join(filters) + ")") if filters else "")


def write_png(plt, lines, args):
    fig, ax = plt.subplots(figsize=(9, 5.5), dpi=120)
    markers = "osD^vP*X"
    for i, line in enumerate(lines):
        sizes = list(line["points"])
        busbw = [p[3] for p in line["points"].values()]
        style = "--" if line["key"][3] == "in-place" and args.placement == "both" else "-"
        ax.plot(sizes, busbw, style, marker=markers[i % len(markers)], markersize=4, linewidth=1.5,
                label=line["legend"])
    ax.set_xscale("log", base=2)
    all_sizes = sorted({s for line in lines for s in line["points"]})
    lo, hi = all_sizes[0].bit_length() - 1, max(all_sizes[-1].bit_length() - 1, all_sizes[0].bit_length() - 1)
    step = 1
    while (hi - lo) // step > 14:  # at most ~15 labels, on whole powers of two
        step += 1
    ticks = [1 << e for e in range(lo, hi + 1, step)]
    ax.set_xticks(ticks)
    ax.set_xticklabels([size_label(t) for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("size (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s)")
    if args.reference:
        ax.axhline(args.reference[0], color="gray", linestyle=":", linewidth=1.2, label=args.reference[1])
    ax.set_ylim(bottom=0)
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(args.title or default_title(lines, args))
    ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    fig.savefig(args.output, format="png")
    plt.close(fig)


def main(argv):
    args = parse_args(argv)
    plt = None
    if args.output:
        plt = import_pyplot()
        if plt is None:
            print("braid_plot: matplotlib is not importable by %s (apt-get install python3-matplotlib and run "
                  "/usr/bin/python3, or use --csv)" % sys.executable, file=sys.stderr)
            return 2
    labels = args.label or [os.path.basename(f) for f in args.files]
    lines = []
    try:
        for path, label in zip(args.files, labels):
            lines.extend(series_of(path, label, load(path), args))
    except InputError as e:
        print("braid_plot: %s" % e, file=sys.stderr)
        return 1
    try:
        if args.csv:
            write_csv(lines, args.csv)
        if args.output:
            write_png(plt, lines, args)
    except BrokenPipeError:
        # CSV piped into head(1): the reader has what it wanted. Silence the final flush.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except OSError as e:
        print("braid_plot: cannot write: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
