// The lean front-end binary (`cairn-slurm`) has no Kafka client: linking librdkafka
// (and OpenSSL, SASL) cost each `sbatch` more than the rest of its work. When a command
// needs to read a Kafka event log (`squeue --at` on a Kafka site), opening it hands the
// whole command over to the full `cairn` binary beside it.
#pragma once

namespace cairn {

// Keeps the command line to hand over; the lean main calls it first.
void remember_command_line(int argc, char** argv);

}  // namespace cairn
