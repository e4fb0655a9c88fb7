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
Exit status 1 when a CPU figure regressed, 2 on bad input.

Usage: compare.py [--threshold PERCENT] [--raw] OLD.json NEW.json"""
import argparse
import json
import sys


REFERENCE = "machine.reference"


def is_cpu(unit):
    return unit.startswith("cpu_")


def machine_reference(results):
    """The mean of the run's machine reference readings (machine.reference_cpu_ms.at_start,
    .at_end), or None."""
    values = [record["value"] for name, record in results.items()
              if name.startswith(REFERENCE + "_cpu_ms.") and record["value"] > 0]
    return sum(values) / len(values) if values else None


def machine_parts(results):
    """The mean reading of each part of the machine reference (machine.reference.at_start.PART,
    .at_end.PART), by part."""
    readings = {}
    for name, record in results.items():
        prefix, _, part = name.rpartition(".")
        if prefix in (REFERENCE + ".at_start", REFERENCE + ".at_end") and record["value"] > 0:
            readings.setdefault(part, []).append(record["value"])
    return {part: sum(values) / len(values) for part, values in readings.items()}


def excusing_factor(old, new, machine_factor):
    """Of the reference's change (new / old) and each of its parts' changes, the largest: the one
    against which a CPU figure's growth looks smallest."""
    old_parts, new_parts = machine_parts(old), machine_parts(new)
    factors = [machine_factor] + [new_parts[part] / old_parts[part] for part in old_parts if part in new_parts]
    return max(factors)


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
    the machine reference's new / old, against which CPU figures are judged (None: as read);
    excusing: excusing_factor(), against which a regression must also exceed the threshold."""
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
                judged = (after / machine_factor - before) * 100.0 / abs(before)
                verdict = "" if judged == 0 else ("better" if judged < 0 else "worse")
                excused = (after / (excusing or machine_factor) - before) * 100.0 / abs(before)
                if excused != judged and judged > threshold:
                    change += f" ({judged:+.1f}% against the machine, {excused:+.1f}% against its least-moved part)"
                else:
                    change += f" ({judged:+.1f}% against the machine)"
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
