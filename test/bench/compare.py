#!/usr/bin/env python3
"""Compares two results.json of `make bench` (name -> value, unit, goal): prints the change of
every figure, and flags a CPU-per-unit figure (its unit starts with "cpu_") that grew by more
than the threshold (10% by default). Wall figures are printed, never flagged: they move with
the machine's load. CPU figures move with the host's own speed: when both files hold the
machine reference (bench_machine_reference: the CPU of a fixed workload, at the run's start
and end), a CPU figure is judged by its change against the reference's (--raw: as it reads).
The host's speed does not always change alike for every kind of work: its process starts, page
faults and plain computing (the reference's three parts) can move by 15% and by 35% between
two days. So a figure is flagged only when it grew by more than the threshold against each of
them too, i.e. against the part whose change excuses it most.
The host's speed also moves within a run (two runs 20 minutes apart, with the same mean reading,
put 17 CPU figures more than 10% apart), so run.sh reads the reference between every two benches,
and collect_results.py names, with each figure, the readings just before and after its bench
("readings"). When both files name them, a CPU figure is judged against those readings' change
rather than the whole run's.
Exit status 1 when a CPU figure regressed, 2 on bad input.

Usage: compare.py [--threshold PERCENT] [--raw] OLD.json NEW.json"""
import argparse
import json
import sys


REFERENCE = "machine.reference"


def is_cpu(unit):
    return unit.startswith("cpu_")


def reading_labels(results):
    """The labels of the run's machine reference readings (machine.reference_cpu_ms.LABEL: at_start,
    after.BENCH, at_end)."""
    return {name[len(REFERENCE + "_cpu_ms."):] for name, record in results.items()
            if name.startswith(REFERENCE + "_cpu_ms.") and record["value"] > 0}


def machine_reference(results, labels=None):
    """The mean of the machine reference readings of these labels (all the run's by default), or
    None."""
    labels = reading_labels(results) if labels is None else labels
    values = [results[REFERENCE + "_cpu_ms." + label]["value"] for label in labels]
    return sum(values) / len(values) if values else None


def machine_parts(results, labels=None):
    """The mean reading of each part of the machine reference (machine.reference.LABEL.PART) over
    these labels (all the run's by default), by part."""
    labels = reading_labels(results) if labels is None else set(labels)
    readings = {}
    for name, record in results.items():
        prefix, _, part = name.rpartition(".")
        if prefix.startswith(REFERENCE + ".") and prefix[len(REFERENCE) + 1:] in labels and record["value"] > 0:
            readings.setdefault(part, []).append(record["value"])
    return {part: sum(values) / len(values) for part, values in readings.items()}


def excusing_factor(old, new, machine_factor, old_labels=None, new_labels=None):
    """Of the reference's change (new / old) and each of its parts' changes, the largest: the one
    against which a CPU figure's growth looks smallest."""
    old_parts, new_parts = machine_parts(old, old_labels), machine_parts(new, new_labels)
    factors = [machine_factor] + [new_parts[part] / old_parts[part] for part in old_parts if part in new_parts]
    return max(factors)


def nearby_factors(old, new, name):
    """The machine's change around one figure: (factor, excusing factor) from the readings both
    files name with it, just before and after its bench; None when either names none or names a
    reading it lacks."""
    old_labels, new_labels = old[name].get("readings"), new[name].get("readings")
    if not old_labels or not new_labels:
        return None
    if not set(old_labels) <= reading_labels(old) or not set(new_labels) <= reading_labels(new):
        return None
    factor = machine_reference(new, new_labels) / machine_reference(old, old_labels)
    return factor, excusing_factor(old, new, factor, old_labels, new_labels)


def higher_is_better(record):
    """True for rates (a goal '>= x', a unit '.../s'), False for CPU per unit, times and sizes,
    None when the unit does not say (a count): no verdict then."""
    goal = record.get("goal") or ""
    if goal.startswith(">"):
        return True
    if goal.startswith("<"):
        return False
    unit = record.get("unit", "")
    if is_cpu(unit) or unit in ("s", "ms", "us", "bytes", "MB"):
        return False
    if unit.endswith("/s"):
        return True
    return None


def load(path):
    with open(path, encoding="utf-8") as file:
        results = json.load(file)
    if not isinstance(results, dict):
        raise ValueError(f"{path}: not an object of figures")
    for name, record in results.items():
        if not isinstance(record, dict) or not isinstance(record.get("value"), (int, float)):
            raise ValueError(f"{path}: {name}: no numeric value")
    return results


def shown(value):
    return f"{value:.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def compare(old, new, threshold, machine_factor=None, excusing=None):
    """Lines of the report, and the names of the CPU figures that regressed. machine_factor:
    the machine reference's new / old, against which CPU figures are judged (None: as read),
    unless both files name the readings nearby (nearby_factors); excusing: excusing_factor(),
    against which a regression must also exceed the threshold."""
    lines, regressions = [], []
    width = max((len(name) for name in {*old, *new}), default=10)
    for name in sorted({*old, *new}):
        if name not in new:
            lines.append(f"{name:<{width}}  {shown(old[name]['value']):>14}  {'(gone)':>14}")
            continue
        record = new[name]
        unit = record.get("unit", "")
        if name not in old:
            lines.append(f"{name:<{width}}  {'(new)':>14}  {shown(record['value']):>14}  {unit}")
            continue
        before, after = old[name]["value"], record["value"]
        if before == 0:
            change, verdict = "n/a", ""
        else:
            percent = (after - before) * 100.0 / abs(before)
            change = f"{percent:+.1f}%"
            verdict = ""
            direction = higher_is_better(record)
            if percent != 0 and direction is not None:
                verdict = "better" if (percent > 0) == direction else "worse"
            judged = percent
            judged_cpu = is_cpu(unit) and not name.startswith(REFERENCE)  # the yardstick is not judged
            if judged_cpu and machine_factor:
                nearby = nearby_factors(old, new, name)
                factor, excuse = nearby or (machine_factor, excusing or machine_factor)
                machine = "the machine nearby" if nearby else "the machine"
                judged = (after / factor - before) * 100.0 / abs(before)
                verdict = "" if judged == 0 else ("better" if judged < 0 else "worse")
                excused = (after / excuse - before) * 100.0 / abs(before)
                if excused != judged and judged > threshold:
                    change += f" ({judged:+.1f}% against {machine}, {excused:+.1f}% against its least-moved part)"
                else:
                    change += f" ({judged:+.1f}% against {machine})"
                judged = excused
            if judged_cpu and judged > threshold:
                verdict = f"REGRESSION (CPU per unit over +{threshold:g}%)"
                regressions.append(name)
        lines.append(f"{name:<{width}}  {shown(before):>14}  {shown(after):>14}  {change:>8}  {unit}  {verdict}".rstrip())
    return lines, regressions


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threshold", type=float, default=10.0, help="percent (default 10)")
    parser.add_argument("--raw", action="store_true", help="CPU figures as read, not against the machine reference")
    parser.add_argument("old")
    parser.add_argument("new")
    args = parser.parse_args(argv[1:])
    try:
        old, new = load(args.old), load(args.new)
    except (OSError, ValueError) as error:
        print(f"compare.py: {error}", file=sys.stderr)
        return 2
    old_machine, new_machine = machine_reference(old), machine_reference(new)
    machine_factor = excusing = None
    if old_machine and new_machine and not args.raw:
        machine_factor = new_machine / old_machine
        excusing = excusing_factor(old, new, machine_factor)
        print(f"machine reference (CPU of a fixed workload): {shown(old_machine)} -> {shown(new_machine)} cpu_ms "
              f"({(machine_factor - 1) * 100:+.1f}%); CPU figures are judged against it")
        if excusing != machine_factor:
            print(f"its parts moved unevenly: a CPU figure is flagged only over the threshold against its "
                  f"least-moved part too ({(excusing - 1) * 100:+.1f}%)")
        if any(nearby_factors(old, new, name) for name in old.keys() & new.keys()):
            print("a figure whose bench both runs read the machine around is judged against those readings "
                  "(\"the machine nearby\")")
    else:
        why = "--raw" if args.raw else "no machine reference in both files"
        print(f"CPU figures judged as they read ({why})")
    lines, regressions = compare(old, new, args.threshold, machine_factor, excusing)
    print(f"{'figure':<{max((len(n) for n in {*old, *new}), default=10)}}  {'old':>14}  {'new':>14}  change")
    print("\n".join(lines))
    if regressions:
        print(f"{len(regressions)} CPU figure(s) regressed by more than {args.threshold:g}%: {', '.join(regressions)}")
        return 1
    print(f"no CPU figure regressed by more than {args.threshold:g}%")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
