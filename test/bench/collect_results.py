#!/usr/bin/env python3
"""Makes results.json (name -> value, unit, goal) of the JSON lines the benches appended
(bench_lib.bash's `figure`, bench_figures.hpp's `figure`). run.sh reads the machine reference
between every two benches (machine.reference_cpu_ms.LABEL); each other figure also gets
"readings": the labels of the readings just before and just after it, for compare.py to judge it
against the machine's speed of that moment. Usage: collect_results.py LINES JSON"""
import json
import sys

READING = "machine.reference_cpu_ms."


def collect(lines_path):
    results = {}
    previous_reading, since_reading = None, []  # the last reading's label, the figures after it
    with open(lines_path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                print(f"{lines_path}:{number}: not a figure ({error}): {line.strip()}", file=sys.stderr)
                continue
            name = record.pop("name")
            if name in results:
                print(f"{lines_path}:{number}: {name} twice: the last one is kept", file=sys.stderr)
            results[name] = record
            if name.startswith(READING):
                label = name[len(READING):]
                for figure in since_reading:
                    figure.setdefault("readings", []).append(label)
                previous_reading, since_reading = label, []
            elif not name.startswith("machine.reference."):
                if previous_reading:
                    record["readings"] = [previous_reading]
                since_reading.append(record)
    return results


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    results = collect(argv[1])
    with open(argv[2], "w", encoding="utf-8") as out:
        json.dump(results, out, indent=2, sort_keys=True)
        out.write("\n")
    print(f"{len(results)} figures in {argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
