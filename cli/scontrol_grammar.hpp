// scontrol's command words as Slurm 22.05 reads them (src/scontrol/scontrol.c):
// keywords and entities abbreviated down to each one's minimum, in any case,
// "show job=12" as well as "show job 12", and Slurm's texts for what it refuses.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cairn {

// xstrncasecmp(tag, keyword, MAX(strlen(tag), min_length)) == 0: `tag` is `keyword`
// or, when at least min_length long, a prefix of it; any case.
bool slurm_keyword_matches(std::string_view tag, std::string_view keyword, size_t min_length);

enum class ScontrolEntity {
  job, step, node, partition, licenses, burst_buffer, hostnames, hostlist, hostlist_sorted, reservation, config, daemons,
  shards  // Cairn's: the event log's shards (cli/shards_command.hpp)
};

struct ScontrolCommand {
  enum class Kind {
    show, job_verb, update, top, ping, write_batch_script, listpids, version, refused, create, remove, reconfigure,
    setdebug
  };
  Kind kind = Kind::refused;
  std::string keyword;                // job verbs: "hold", "uhold", "release", "requeue", ... (canonical)
  ScontrolEntity entity = ScontrolEntity::job;
  std::optional<std::string> value;   // show: the record asked for; write batch_script: the job; setdebug: the level
  std::optional<std::string> file;    // write batch_script: where (default slurm-<id>.sh; "-": stdout)
  std::optional<std::string> node;    // listpids: the node (only this host's is answerable)
  std::vector<std::string> arguments; // job verbs: the job lists; update, create, delete: its words; top: the jobs
  std::string error;                  // refused: Slurm's text, without the newline
  bool print_usage = false;           // refused: Slurm prints its usage after the error
};

// The command words after scontrol's options ("show", "jobid=12"); empty is refused
// with the usage. Verbs Cairn has no answer for are refused as Slurm refuses unknown ones.
ScontrolCommand parse_scontrol_command(const std::vector<std::string>& words);

// scontrol_print_job's check of a job id ("12", "12_7", "12+0"): digits, '_' and '+' only.
bool slurm_show_job_id_valid(std::string_view text);

}  // namespace cairn
