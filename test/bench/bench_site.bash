# The site that make_bench_log's synthetic logs are made for (100 nodes of 64 CPUs, one
# partition), as a cairn.conf for a controller of its own (no TCP, no snapshots). Sourced by the
# benches and by the tests that replay such a log.
write_bench_site_conf() {  # file state_dir [extra config lines...]
  local file=$1 state=$2
  shift 2
  {
    printf '%s\n' ClusterName=bench "StateSaveLocation=$state" ControllerPort=0 SnapshotInterval=0 "$@"
    printf '%s\n' 'NodeName=n[0-99] CPUs=64 RealMemory=256000' 'PartitionName=batch Nodes=ALL Default=YES'
  } > "$file"
}
