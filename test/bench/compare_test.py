#!/usr/bin/env python3
"""compare.py and collect_results.py on fixture files (ctest bench.compare)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")


def run(script, *args):
    return subprocess.run([sys.executable, os.path.join(HERE, script), *args],
                          capture_output=True, text=True, check=False)


def line_of(output, name):
    return next(line for line in output.splitlines() if line.startswith(name + " "))


class CompareTest(unittest.TestCase):
    def setUp(self):
        self.result = run("compare.py", os.path.join(FIXTURES, "old.json"), os.path.join(FIXTURES, "new.json"))

    def test_a_cpu_figure_up_more_than_10_percent_is_a_regression(self):
        self.assertEqual(self.result.returncode, 1, self.result.stdout + self.result.stderr)
        self.assertIn("+12.0%", line_of(self.result.stdout, "replay.cpu_s_per_1M_events"))
        self.assertIn("REGRESSION", line_of(self.result.stdout, "replay.cpu_s_per_1M_events"))
        self.assertIn("1 CPU figure(s) regressed by more than 10%: replay.cpu_s_per_1M_events", self.result.stdout)

    def test_a_cpu_figure_up_less_than_10_percent_or_down_is_not(self):
        self.assertNotIn("REGRESSION", line_of(self.result.stdout, "lifecycle.controller_cpu_ms_per_job"))
        restart = line_of(self.result.stdout, "restart.from_snapshot.controller_cpu_s_per_1M_events")
        self.assertIn("-60.0%", restart)
        self.assertIn("better", restart)
        self.assertNotIn("REGRESSION", line_of(self.result.stdout, "lifecycle.cli_cpu_ms_per_sbatch"))

    def test_wall_figures_show_their_change_and_direction_unflagged(self):
        rate = line_of(self.result.stdout, "replay.events_per_s")
        self.assertIn("-50.0%", rate)
        self.assertIn("worse", rate)
        self.assertNotIn("REGRESSION", rate)
        wall = line_of(self.result.stdout, "lifecycle.trivial_jobs_wall_s")
        self.assertIn("+80.0%", wall)
        self.assertIn("worse", wall)
        self.assertNotIn("REGRESSION", wall)
        self.assertIn("better", line_of(self.result.stdout, "restart.from_snapshot_s"))

    def test_a_count_gets_no_verdict(self):
        count = line_of(self.result.stdout, "log.append.syncs")
        self.assertIn("+50.0%", count)
        self.assertNotIn("better", count)
        self.assertNotIn("worse", count)

    def test_figures_of_one_side_only_and_zeros(self):
        self.assertIn("(gone)", line_of(self.result.stdout, "old.only"))
        self.assertIn("(new)", line_of(self.result.stdout, "new.only"))
        reverse = run("compare.py", os.path.join(FIXTURES, "new.json"), os.path.join(FIXTURES, "old.json"))
        self.assertIn("n/a", line_of(reverse.stdout, "query.history_bytes"))

    def test_a_higher_threshold_lets_it_pass(self):
        result = run("compare.py", "--threshold", "15", os.path.join(FIXTURES, "old.json"),
                     os.path.join(FIXTURES, "new.json"))
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn("no CPU figure regressed by more than 15%", result.stdout)

    def test_bad_input_is_refused(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as bad:
            bad.write('{"x": {"unit": "s"}}')
            bad.flush()
            result = run("compare.py", bad.name, os.path.join(FIXTURES, "new.json"))
        self.assertEqual(result.returncode, 2)
        self.assertIn("x: no numeric value", result.stderr)


def figures_file(work, name, figures):
    path = os.path.join(work, name)
    with open(path, "w", encoding="utf-8") as out:
        json.dump({key: {"value": value, "unit": unit, "goal": None} for key, (value, unit) in figures.items()}, out)
    return path


class FiguresTest(unittest.TestCase):
    """A work directory for figure files, and the check of one figure's line."""

    def setUp(self):
        self.work = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.work.cleanup()

    def assert_judged(self, output, name, text, flagged):
        line = line_of(output, name)
        self.assertIn(text, line)
        (self.assertIn if flagged else self.assertNotIn)("REGRESSION", line)


class MachineReferenceTest(FiguresTest):
    """CPU figures judged against the machine reference's change (a host 25% slower)."""

    def setUp(self):
        super().setUp()
        self.old = figures_file(self.work.name, "old.json", {
            "machine.reference_cpu_ms.at_start": (300, "cpu_ms"),
            "machine.reference_cpu_ms.at_end": (340, "cpu_ms"),
            "machine.reference.at_start.sort_cpu_ms": (100, "cpu_ms"),
            "a.cpu_ms_per_job": (1.0, "cpu_ms/job"),
            "b.cpu_ms_per_job": (1.0, "cpu_ms/job"),
            "c.cpu_ms_per_job": (1.0, "cpu_ms/job"),
            "d.wall_s": (2.0, "s"),
        })
        changed = {"machine.reference_cpu_ms.at_start": 400, "machine.reference_cpu_ms.at_end": 400,
                   "machine.reference.at_start.sort_cpu_ms": 125, "a.cpu_ms_per_job": 1.3,
                   "b.cpu_ms_per_job": 1.45, "d.wall_s": 2.5}
        with open(self.old, encoding="utf-8") as file:
            before = json.load(file)
        self.new = figures_file(self.work.name, "new.json", {
            name: (changed.get(name, record["value"]), record["unit"]) for name, record in before.items()})

    def test_cpu_figures_are_judged_against_the_machine(self):
        result = run("compare.py", self.old, self.new)
        self.assertIn("machine reference (CPU of a fixed workload): 320 -> 400 cpu_ms (+25.0%)", result.stdout)
        self.assert_judged(result.stdout, "a.cpu_ms_per_job", "+30.0% (+4.0% against the machine)", False)
        self.assert_judged(result.stdout, "b.cpu_ms_per_job", "(+16.0% against the machine)", True)
        self.assert_judged(result.stdout, "c.cpu_ms_per_job", "+0.0% (-20.0% against the machine)", False)
        self.assertIn("better", line_of(result.stdout, "c.cpu_ms_per_job"))
        self.assertNotIn("REGRESSION", line_of(result.stdout, "machine.reference.at_start.sort_cpu_ms"))
        self.assertNotIn("against", line_of(result.stdout, "d.wall_s"))
        self.assertEqual(result.returncode, 1)
        self.assertIn("1 CPU figure(s) regressed by more than 10%: b.cpu_ms_per_job", result.stdout)

    def test_raw_or_without_a_reference_on_both_sides_they_are_judged_as_read(self):
        raw = run("compare.py", "--raw", self.old, self.new)
        self.assertIn("CPU figures judged as they read (--raw)", raw.stdout)
        self.assertIn("REGRESSION", line_of(raw.stdout, "a.cpu_ms_per_job"))
        without = run("compare.py", os.path.join(FIXTURES, "old.json"), self.new)
        self.assertIn("no machine reference in both files", without.stdout)


class UnevenMachineTest(FiguresTest):
    """A host 28.6% faster at process starts, 35% at page faults, 15% only at computing: a CPU
    figure is flagged only when it grew by more than 10% against each."""

    def setUp(self):
        super().setUp()
        parts = ("spawn_cpu_us_per_process", "sort_cpu_ms", "page_faults_cpu_us_per_mb")
        def site(combined, spawn, sort, faults, x, y):
            figures = {"machine.reference_cpu_ms.at_start": (combined, "cpu_ms"),
                       "x.cpu_ms_per_job": (x, "cpu_ms/job"), "y.cpu_ms_per_job": (y, "cpu_ms/job")}
            for part, value in zip(parts, (spawn, sort, faults)):
                figures["machine.reference.at_start." + part] = (value, "cpu_us")
            return figures
        self.old = figures_file(self.work.name, "old.json", site(560, 700, 160, 1000, 1.0, 1.0))
        self.new = figures_file(self.work.name, "new.json", site(400, 500, 136, 650, 0.82, 0.98))

    def test_a_figure_is_judged_against_the_part_that_excuses_it_most(self):
        result = run("compare.py", self.old, self.new)
        self.assertIn("its least-moved part too (-15.0%)", result.stdout)
        self.assert_judged(result.stdout, "x.cpu_ms_per_job",
                           "-18.0% (+14.8% against the machine, -3.5% against its least-moved part)", False)
        self.assert_judged(result.stdout, "y.cpu_ms_per_job",
                           "(+37.2% against the machine, +15.3% against its least-moved part)", True)
        self.assertEqual(result.returncode, 1)
        self.assertIn("1 CPU figure(s) regressed by more than 10%: y.cpu_ms_per_job", result.stdout)

    def test_an_even_change_keeps_one_judgement(self):
        with open(self.old, encoding="utf-8") as file:
            even = {name: (record["value"] * 0.8, record["unit"]) for name, record in json.load(file).items()
                    if name.startswith("machine.")}
        even["x.cpu_ms_per_job"] = (0.9, "cpu_ms/job")
        even["y.cpu_ms_per_job"] = (0.7, "cpu_ms/job")
        result = run("compare.py", self.old, figures_file(self.work.name, "even.json", even))
        self.assertNotIn("unevenly", result.stdout)
        self.assert_judged(result.stdout, "x.cpu_ms_per_job", "-10.0% (+12.5% against the machine)  cpu_ms/job", True)
        self.assert_judged(result.stdout, "y.cpu_ms_per_job", "-30.0% (-12.5% against the machine)", False)


class NearbyReadingsTest(FiguresTest):
    """A host as fast as before at first, 40% slower later in the run: each CPU figure is judged
    against the readings just before and after its bench, not against the run's mean (+20%)."""

    def setUp(self):
        super().setUp()
        def run_file(name, speeds, a, c):
            labels = ("at_start", "after.a", "after.b", "after.c")
            figures = {f"machine.reference_cpu_ms.{label}": {"value": speed, "unit": "cpu_ms", "goal": None}
                       for label, speed in zip(labels, speeds)}
            figures["a.cpu_ms_per_job"] = {"value": a, "unit": "cpu_ms/job", "goal": None,
                                           "readings": ["at_start", "after.a"]}
            figures["c.cpu_ms_per_job"] = {"value": c, "unit": "cpu_ms/job", "goal": None,
                                           "readings": ["after.b", "after.c"]}
            path = os.path.join(self.work.name, name)
            with open(path, "w", encoding="utf-8") as out:
                json.dump(figures, out)
            return path
        self.old = run_file("old.json", (400, 400, 400, 400), 1.0, 1.0)
        self.new = run_file("new.json", (400, 400, 560, 560), 1.15, 1.45)

    def test_a_figure_is_judged_against_the_readings_around_its_bench(self):
        result = run("compare.py", self.old, self.new)
        self.assertIn("400 -> 480 cpu_ms (+20.0%)", result.stdout)
        self.assertIn("the machine nearby", result.stdout)
        self.assert_judged(result.stdout, "a.cpu_ms_per_job", "+15.0% (+15.0% against the machine nearby)", True)
        self.assert_judged(result.stdout, "c.cpu_ms_per_job", "+45.0% (+3.6% against the machine nearby)", False)
        self.assertIn("1 CPU figure(s) regressed by more than 10%: a.cpu_ms_per_job", result.stdout)

    def test_without_readings_on_both_sides_the_run_mean_judges(self):
        with open(self.old, encoding="utf-8") as file:
            figures = json.load(file)
        for record in figures.values():
            record.pop("readings", None)
        unnamed = os.path.join(self.work.name, "unnamed.json")
        with open(unnamed, "w", encoding="utf-8") as out:
            json.dump(figures, out)
        result = run("compare.py", unnamed, self.new)
        self.assertNotIn("nearby", result.stdout)
        self.assert_judged(result.stdout, "a.cpu_ms_per_job", "+15.0% (-4.2% against the machine)", False)
        self.assert_judged(result.stdout, "c.cpu_ms_per_job", "+45.0% (+20.8% against the machine)", True)


class CollectTest(unittest.TestCase):
    def test_json_lines_become_one_object_by_name(self):
        with tempfile.TemporaryDirectory() as work:
            lines = os.path.join(work, "results.jsonl")
            with open(lines, "w", encoding="utf-8") as out:
                out.write('{"name": "a.cpu_ms_per_job", "value": 1.5, "unit": "cpu_ms/job", "goal": null}\n')
                out.write('{"name": "b_s", "value": 0.9, "unit": "s", "goal": "< 1"}\n')
                out.write('{"name": "b_s", "value": 0.8, "unit": "s", "goal": "< 1"}\n')
            target = os.path.join(work, "results.json")
            result = run("collect_results.py", lines, target)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("b_s twice", result.stderr)
            with open(target, encoding="utf-8") as file:
                self.assertEqual(json.load(file), {
                    "a.cpu_ms_per_job": {"value": 1.5, "unit": "cpu_ms/job", "goal": None},
                    "b_s": {"value": 0.8, "unit": "s", "goal": "< 1"},
                })


    def test_each_figure_names_the_machine_readings_around_it(self):
        with tempfile.TemporaryDirectory() as work:
            lines = os.path.join(work, "results.jsonl")
            with open(lines, "w", encoding="utf-8") as out:
                for name, unit in (("machine.reference.at_start.sort_cpu_ms", "cpu_ms"),
                                   ("machine.reference_cpu_ms.at_start", "cpu_ms"), ("a.cpu_ms", "cpu_ms"),
                                   ("machine.reference.after.a.sort_cpu_ms", "cpu_ms"),
                                   ("machine.reference_cpu_ms.after.a", "cpu_ms"), ("b.cpu_ms", "cpu_ms"),
                                   ("b_s", "s")):
                    out.write(json.dumps({"name": name, "value": 1, "unit": unit, "goal": None}) + "\n")
                out.write('{"name": "machine.reference_cpu_ms.after.b", "value": 1, "unit": "cpu_ms", "goal": null}\n')
                out.write('{"name": "late_s", "value": 1, "unit": "s", "goal": null}\n')
            target = os.path.join(work, "results.json")
            self.assertEqual(run("collect_results.py", lines, target).returncode, 0)
            with open(target, encoding="utf-8") as file:
                results = json.load(file)
        self.assertEqual(results["a.cpu_ms"]["readings"], ["at_start", "after.a"])
        self.assertEqual(results["b.cpu_ms"]["readings"], ["after.a", "after.b"])
        self.assertEqual(results["b_s"]["readings"], ["after.a", "after.b"])
        self.assertEqual(results["late_s"]["readings"], ["after.b"])
        self.assertNotIn("readings", results["machine.reference_cpu_ms.after.a"])
        self.assertNotIn("readings", results["machine.reference.after.a.sort_cpu_ms"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
