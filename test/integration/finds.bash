# `producer | grep -q PATTERN` fails under `set -o pipefail` whenever grep exits at the first
# match while the producer is still writing ("Broken pipe"). `producer | finds PATTERN` reads
# all of its input and answers like `grep -q`.
finds() { grep "$@" >/dev/null; }
