"""The parameters of ``fuzz`` and ``deltadebugging``, declared once.

The command line builds its options from these declarations (keeping the
original tool's option names), the TUI builds its fuzz form from them, and
:func:`perun_core.fuzz.setup.settings_from` converts and checks the values
through them, so all three accept and refuse the same things.
"""

from __future__ import annotations

from ..params import Param

__all__ = ["DELTA_PARAMS", "FUZZ_PARAMS"]

FUZZ_PARAMS: tuple[Param, ...] = (
    Param("cmd", "str", None, "The program to fuzz (with its fixed arguments).", flags=("-b", "--cmd"), metavar="CMD"),
    Param("args", "str", None, "Arguments put between the program and the input.", flags=("-a", "--args"),
          metavar="ARGS"),
    Param("seeds", "list", None, "Seed inputs: files, or directories of files.", flags=("-w", "--input-sample"),
          metavar="PATH"),
    Param("output_dir", "str", None, "Where the kept inputs and the results go (new or empty).",
          flags=("-o", "--output-dir"), metavar="DIR"),
    Param("timeout", "float", 1800.0, "Time budget of the whole fuzzing, in seconds.", flags=("-t", "--timeout"),
          minimum=0.1, metavar="SECONDS", unit="s"),
    Param("hang_timeout", "float", 10.0, "A run longer than this is killed and kept as a hang.",
          flags=("-ht", "--hang-timeout"), minimum=0.001, metavar="SECONDS", unit="s"),
    Param("max_size", "int", None, "Largest input, in bytes (default: 32 x the largest seed, at least 64 KiB).",
          flags=("-N", "--max"), minimum=1, maximum=1 << 30, metavar="BYTES", unit="B"),
    Param("max_increase", "int", None, "Largest growth over the seed, in bytes.", flags=("-mi", "--max-size-increase"),
          minimum=0, maximum=1 << 30, metavar="BYTES", unit="B"),
    Param("max_ratio", "float", None, "Largest input as a multiple of the seed's size.",
          flags=("-mp", "--max-size-ratio"), minimum=1.0, maximum=1e6, metavar="RATIO", unit="x"),
    Param("workloads_filter", "str", None, "Take from seed directories only files whose name matches this regex.",
          flags=("-wf", "--workloads-filter"), metavar="REGEX"),
    Param("rules", "list", None, "Mutation rules to use (name or name:key=value); default all for the input kind.",
          flags=("-r", "--rules"), metavar="RULE"),
    Param("dictionary", "str", None, "A file of tokens (one a line) the mutations insert, besides those taken "
          "from the seeds (AFL style: a line may be a quoted string, name=\"value\", with \\xNN escapes).",
          flags=("--dict",), metavar="FILE"),
    Param("literal_source", "str", None, "Sources of the program (.py, C and C++) whose string literals and "
          "regular expressions join the dictionary.", flags=("--source",), metavar="DIR"),
    Param("guidance", "choice", "off", "Also keep inputs that raise the hit count of any line or branch "
          "(PerfFuzz): hits traces a Python program, or reads a gcov-built one's line counts (-s/-g), in a run "
          "of its own for each candidate not kept by time; off by default, as a traced run costs several "
          "plain ones.", flags=("--guidance",), choices=("off", "hits")),
    Param("seed", "int", None, "Seed of the random choices (repeatable fuzzing).", flags=("--seed",), minimum=0),
    Param("stdin", "bool", False, "Give the input on standard input instead of as a file argument.",
          flags=("--stdin",)),
    Param("metric", "choice", "auto", "The cost of a run: retired user instructions (perf), CPU time (user+sys) "
          "or wall time; auto: instructions where perf can count them, else CPU time.",
          flags=("--metric",), choices=("auto", "instructions", "cpu", "wall")),
    Param("jobs", "int", None, "Runs measured at once (default: the cores available).", flags=("-j", "--jobs"),
          minimum=1, maximum=256, unit="runs"),
    Param("exec_limit", "int", None, "Stop after this many runs of candidates (the seeds' calibration runs are "
          "not counted).", flags=("-e", "--exec-limit"),
          minimum=1, unit="runs"),
    Param("stop_at", "float", None, "Stop once an input is this many times slower than its seed.",
          flags=("--stop-at",), minimum=1.0, metavar="SLOWDOWN", unit="x"),
    Param("calibration", "int", 5, "Runs of each seed that set the baseline and the noise.",
          flags=("--calibration",), minimum=2, maximum=100, unit="runs"),
    Param("source_path", "str", None, "Sources of the program built with gcov (--coverage), for the pre-filter.",
          flags=("-s", "--source-path"), metavar="DIR"),
    Param("gcno_path", "str", None, "Where the program's .gcno/.gcda files are.", flags=("-g", "--gcno-path"),
          metavar="DIR"),
    Param("coverage_increase", "float", 1.05, "Coverage (executed lines) a candidate needs over its parent.",
          flags=("-cr", "--coverage-increase-rate"), minimum=1.0, metavar="RATIO", unit="x"),
    Param("skip_coverage", "bool", False, "Do not use the coverage pre-filter even when possible.",
          flags=("--skip-coverage-testing",)),
    Param("collector", "str", "time", "Collector of the profiles of the best inputs.", flags=("-c", "--collector")),
    Param("postprocessors", "list", None, "Postprocessors of those profiles.", flags=("-p", "--postprocessor"),
          metavar="NAME"),
    Param("minor", "str", None, "Commit the profiles are for (default HEAD).", flags=("-m", "--minor-version"),
          metavar="REV"),
    Param("profiles", "int", 3, "How many of the best inputs get a profile (0: none).", flags=("--profiles",),
          minimum=0, maximum=100, metavar="N", unit="inputs"),
    Param("register", "bool", False, "Register the best inputs' profiles at the commit.", flags=("--register",)),
    Param("add_to_matrix", "bool", False, "Add the best inputs to the job matrix's workloads.",
          flags=("--add-to-matrix",)),
)

DELTA_PARAMS: tuple[Param, ...] = (
    Param("output_dir", "str", None, "Where the shrunk input and the steps go (new or empty).",
          flags=("-o", "--output-dir"), metavar="DIR"),
    Param("timeout", "float", 300.0, "Time budget, in seconds; the smallest input found so far is kept.",
          flags=("-t", "--timeout"), minimum=0.1, metavar="SECONDS", unit="s"),
    Param("args", "str", None, "Arguments put between the program and the input.", flags=("-a", "--args"),
          metavar="ARGS"),
    Param("stdin", "bool", False, "Give the input on standard input instead of as a file argument.",
          flags=("--stdin",)),
    Param("metric", "choice", "auto", "The cost of a run: retired user instructions (perf), CPU time (user+sys) "
          "or wall time; auto: instructions where perf can count them, else CPU time.",
          flags=("--metric",), choices=("auto", "instructions", "cpu", "wall")),
    Param("keep", "choice", "time", "Keep a smaller input when its time (time), its time above start-up "
          "per byte (density), or its time grown back to the original's size by repeating its repeated part "
          "(growth: keeps the finding's ratio at equal size; the growth orders are reported) is at least the "
          "original's.", flags=("--keep",), choices=("time", "density", "growth")),
    Param("tolerance", "float", None, "Allowed loss against the original (default: three times the noise); "
          "refused when below what the noise lets the shrinking tell apart, or (growth) so large that an ordinary "
          "input of the same size would pass.",
          flags=("--tolerance",), minimum=0.0, maximum=0.9),
)
