#!/usr/bin/env python3
"""Check a trainer timeline (timelineFile) and summarise it, for tests/test_timeline.sh.

    timeline_check.py [--open] [--rank K] [--log LOG] FILE

Checks that FILE is JSON (Python's json module, strict): an array of trace events; the
metadata names the process "rank K" and the lanes; every "X" event has a name, ts and
dur >= 0 (microseconds), pid K, a known lane (tid) and numeric args with the epoch. Within
each lane the spans follow one another in the file and never overlap. Every compute and
communication span of epoch E lies inside the "epoch" span of E, and their durations add
up to at most its duration. With --log, the epoch spans last what LOG's "Finished
Epoch[...] ... epochTime=" lines say. --open: the file may lack its closing bracket (a
killed run; Chrome and Perfetto accept that) and its last line may be cut short.

Prints "count NAME N" for every span name and "epoch E SECONDS SUMMED" per epoch span;
exits 1 with a message on the first violation.
"""
import json
import re
import sys

LANES = {1: "epoch", 2: "compute", 3: "communication"}
EPS = 0.002  # microseconds: ts and dur are printed to the nanosecond


def fail(msg):
    print("timeline_check: " + msg)
    sys.exit(1)


def load(path, unterminated):
    text = open(path, encoding="utf-8").read()
    if not unterminated:
        try:
            return json.loads(text)
        except ValueError as err:
            fail("%s: not valid JSON: %s" % (path, err))
    body = text.rstrip()
    if body.endswith("]"):
        fail(path + ": --open, but the array is closed")
    lines = body.split("\n")
    for cut in (0, 1):  # the last line may be a piece cut short by the kill
        try:
            return json.loads("\n".join(lines[:len(lines) - cut]).rstrip().rstrip(",") + "\n]")
        except ValueError as err:
            why = err
    fail("%s: not a JSON array without its closing bracket: %s" % (path, why))


def check_meta(events, rank):
    names = {}
    for ev in events:
        if ev.get("ph") == "M" and ev.get("name") == "thread_name":
            names[ev["tid"]] = ev["args"]["name"]
        if ev.get("ph") == "M" and ev.get("name") == "process_name":
            if ev["args"]["name"] != "rank %d" % rank:
                fail("process named %r, wanted 'rank %d'" % (ev["args"]["name"], rank))
    if names != LANES:
        fail("lane names %r, wanted %r" % (names, LANES))


def check_span(ev, rank):
    for key in ("name", "ts", "dur", "pid", "tid", "args"):
        if key not in ev:
            fail("event without %s: %r" % (key, ev))
    if not isinstance(ev["name"], str) or not ev["name"]:
        fail("bad name: %r" % ev)
    if not all(isinstance(ev[k], (int, float)) for k in ("ts", "dur")) or ev["dur"] < 0:
        fail("bad ts/dur: %r" % ev)
    if ev["pid"] != rank:
        fail("pid %r in the file of rank %d" % (ev["pid"], rank))
    if ev["tid"] not in LANES or ev.get("cat") != LANES[ev["tid"]]:
        fail("unknown lane: %r" % ev)
    args = ev["args"]
    if not isinstance(args.get("epoch"), (int, float)) or args["epoch"] < 1:
        fail("no epoch argument: %r" % ev)
    if not all(isinstance(v, (int, float)) for v in args.values()):
        fail("non-numeric argument: %r" % ev)


def check_lanes(spans):
    last = {}
    for ev in spans:
        prev = last.get(ev["tid"])
        if prev and ev["ts"] < prev["ts"] + prev["dur"] - EPS:
            fail("lane %s: %r overlaps or precedes %r" % (LANES[ev["tid"]], ev, prev))
        last[ev["tid"]] = ev


def check_epochs(spans, log):
    epochs = {}
    for ev in spans:
        if ev["tid"] == 1 and ev["name"] == "epoch":
            epochs[int(ev["args"]["epoch"])] = ev
    summed = {e: 0.0 for e in epochs}
    for ev in spans:
        if ev["tid"] == 1:
            continue
        e = int(ev["args"]["epoch"])
        outer = epochs.get(e)
        if outer is None:  # a run that failed in this epoch
            continue
        if ev["ts"] < outer["ts"] - EPS or ev["ts"] + ev["dur"] > outer["ts"] + outer["dur"] + EPS:
            fail("%r lies outside epoch %d's span %r" % (ev, e, outer))
        summed[e] += ev["dur"]
    for e, outer in sorted(epochs.items()):
        if summed[e] > outer["dur"] + EPS:
            fail("epoch %d: spans add up to %.3f us, more than the epoch's %.3f us"
                 % (e, summed[e], outer["dur"]))
    if log:
        times = {}
        pat = re.compile(r"Finished Epoch\[ *(\d+) of \d+\]: \[Training\] .*epochTime=([0-9.e+-]+)s")
        for line in open(log, encoding="utf-8", errors="replace"):
            m = pat.search(line)
            if m:
                times[int(m.group(1))] = float(m.group(2))
        if sorted(times) != sorted(epochs):
            fail("epochs in the log %r, in the timeline %r" % (sorted(times), sorted(epochs)))
        for e, secs in times.items():
            dur = epochs[e]["dur"] / 1e6
            if abs(dur - secs) > 1e-5 * secs + 2e-6:
                fail("epoch %d lasts %.9f s in the timeline, epochTime=%g s in the log"
                     % (e, dur, secs))
    return epochs, summed


def main(argv):
    unterminated, rank, log = False, None, None
    while argv and argv[0].startswith("--"):
        opt = argv.pop(0)
        if opt == "--open":
            unterminated = True
        elif opt == "--rank":
            rank = int(argv.pop(0))
        elif opt == "--log":
            log = argv.pop(0)
        else:
            fail("unknown option " + opt)
    if len(argv) != 1:
        fail("usage: timeline_check.py [--open] [--rank K] [--log LOG] FILE")
    path = argv[0]
    if rank is None:
        m = re.search(r"\.rank(\d+)$", path)
        rank = int(m.group(1)) if m else 0
    events = load(path, unterminated)
    if not isinstance(events, list) or not events:
        fail(path + ": not a non-empty array")
    check_meta(events, rank)
    spans = []
    for ev in events:
        if ev.get("ph") == "X":
            check_span(ev, rank)
            spans.append(ev)
        elif ev.get("ph") != "M":
            fail("unexpected event: %r" % ev)
    check_lanes(spans)
    epochs, summed = check_epochs(spans, log)
    counts = {}
    for ev in spans:
        counts[ev["name"]] = counts.get(ev["name"], 0) + 1
    for name in sorted(counts):
        print("count %s %d" % (name, counts[name]))
    for e in sorted(epochs):
        print("epoch %d %.6f %.6f" % (e, epochs[e]["dur"] / 1e6, summed[e] / 1e6))


main(sys.argv[1:])
