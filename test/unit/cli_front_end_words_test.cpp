// What scontrol, sacct and squeue make of their command lines before they ask the
// controller: Slurm 22.05's keyword abbreviations, and its texts for what it refuses
// (golden: test/golden/front_end_refusals.txt; CAIRN_UPDATE_GOLDEN=1 rewrites it).
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/front_ends.hpp"
#include "cli/scontrol_grammar.hpp"
#include "test/unit/golden.hpp"

using namespace cairn;

namespace {

std::string describe(const ScontrolCommand& command) {
  static const char* const kEntities[] = {"job",         "step",      "node",     "partition",     "licenses",
                                          "burstbuffer", "hostnames", "hostlist", "hostlistsorted",
                                          "reservation", "config",      "daemons",  "shards"};
  switch (command.kind) {
    case ScontrolCommand::Kind::show:
      return std::string("show ") + kEntities[static_cast<int>(command.entity)] +
             (command.value ? " value=" + *command.value : std::string());
    case ScontrolCommand::Kind::job_verb: {
      std::string text = "verb " + command.keyword;
      for (const auto& argument : command.arguments) text += " " + argument;
      return text;
    }
    case ScontrolCommand::Kind::update:
    case ScontrolCommand::Kind::create:
    case ScontrolCommand::Kind::remove:
    case ScontrolCommand::Kind::top: {
      std::string text = command.kind == ScontrolCommand::Kind::update   ? "update"
                         : command.kind == ScontrolCommand::Kind::create ? "create"
                         : command.kind == ScontrolCommand::Kind::remove ? "delete"
                                                                         : "top";
      for (const auto& argument : command.arguments) text += " " + argument;
      return text;
    }
    case ScontrolCommand::Kind::ping: return "ping";
    case ScontrolCommand::Kind::write_batch_script:
      return "write batch_script job=" + command.value.value_or("") + " file=" + command.file.value_or("(default)");
    case ScontrolCommand::Kind::listpids:
      return "listpids job=" + command.value.value_or("(all)") + " node=" + command.node.value_or("(here)");
    case ScontrolCommand::Kind::version: return "version";
    case ScontrolCommand::Kind::reconfigure: return "reconfigure";
    case ScontrolCommand::Kind::setdebug: return "setdebug " + command.value.value_or("");
    case ScontrolCommand::Kind::refused: return "refused: " + command.error + (command.print_usage ? " +usage" : "");
  }
  return "?";
}

std::vector<std::string> words_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// A front-end's answer to a command line that fails (or succeeds) without a controller.
std::string run(FrontEndMain front_end, const std::string& name, const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int status = front_end(args, out, err);
  std::string line = "$ " + name;
  for (const auto& arg : args) line += " " + arg;
  return line + "\n[exit " + std::to_string(status) + "]\n" + "stdout: " + out.str() + "stderr: " + err.str() +
         "\n";
}

}  // namespace

TEST_CASE("slurm_keyword_matches: xstrncasecmp(tag, keyword, MAX(strlen(tag), min))") {
  CHECK(slurm_keyword_matches("show", "show", 3));
  CHECK(slurm_keyword_matches("SHO", "show", 3));
  CHECK_FALSE(slurm_keyword_matches("sh", "show", 3));     // shorter than the minimum
  CHECK_FALSE(slurm_keyword_matches("showx", "show", 3));  // longer than the keyword
  CHECK(slurm_keyword_matches("j", "jobs", 1));
  CHECK(slurm_keyword_matches("job", "jobs", 1));
  CHECK_FALSE(slurm_keyword_matches("jobid", "jobs", 1));
  CHECK(slurm_keyword_matches("jobid", "jobid", 1));
  CHECK(slurm_keyword_matches("ab", "ab", 5));  // the keyword itself, however short
}

TEST_CASE("parse_scontrol_command: Slurm's entities, synonyms and abbreviations (golden)") {
  const char* const lines[] = {
      "show jobid 12",
      "show jobid=12",
      "show job 12",
      "show JOBS",
      "show j 12",
      "sho job 12",
      "show step 12.0",
      "show steps",
      "show st 12",
      "show s",
      "show node n1",
      "show n n1,n2",
      "show partition debug",
      "show part",
      "show p",
      "show partitionname=debug",
      "show burstbuffer",
      "show bu",
      "show bb",
      "show hostnames n[1-3]",
      "show hostn",
      "show hostl n[1-2]",
      "show hostlists n2,n1",
      "show config",
      "show c",
      "show daemons",
      "show d",
      "show daemons x",
      "reconfigure",
      "reconfig",
      "rec x y",
      "setdebug debug2",
      "se 5",
      "setdebug",
      "setdebug a b",
      "setdebugflags +Steps",
      "show res",
      "show reservation maint",
      "create reservation StartTime=now Duration=10 Nodes=n1 Users=root",
      "cr res",
      "delete ReservationName=maint",
      "del reservation maint",
      "show",
      "show job 1 2",
      "show foo",
      "show jobx 12",
      "hold 12 13",
      "holdu 12",
      "uhold 12",
      "rel 12",
      "requeue 12",
      "requeuehold 12",
      "su 12",
      "resume 12",
      "hold",
      "write batch_script 12",
      "write batch 12 out.sh",
      "write batch_script 12 - extra",
      "write batch_script",
      "write config",
      "write foo",
      "write",
      "listpids",
      "l 12.0 n1",
      "listpids 12 n1 extra",
      "version",
      "vers x",
      "ping",
      "ping x",
      "update JobId=12 TimeLimit=10",
      "u NodeName=n1 State=DRAIN Reason=maint",
      "top 12,13",
      "show lic",
      "show licenses matlab",
      "sh job 12",
      "frobnicate",
      "help",
  };
  std::string golden;
  for (const char* line : lines) golden += std::string(line) + " => " + describe(parse_scontrol_command(words_of(line))) + "\n";
  cairn::test::check_golden("scontrol_words.txt", golden);
}

TEST_CASE("scontrol, sacct and squeue refuse with Slurm's texts before asking the controller (golden)") {
  // scontrol show hostlist /FILE: names by commas or lines.
  std::string path = (std::filesystem::temp_directory_path() / ("cairn-hosts-" + std::to_string(::getpid()))).string();
  std::ofstream(path) << "n3\nn1\nn2,n10\n\nm1\n";
  std::string golden;
  auto scontrol = [&](std::vector<std::string> args) { golden += run(run_scontrol, "scontrol", args); };
  scontrol({"show", "jobid", "-dd", "x12"});
  scontrol({"show", "job", "-dd", "12_[1-3]"});
  scontrol({"-o", "show", "jobid", "12abc"});
  scontrol({"show"});
  scontrol({"show", "job", "1", "2"});
  scontrol({"show", "foo"});
  scontrol({"-Q", "show", "job", "x"});
  scontrol({"show", "hostnames", "n[1-3],m[01-02]"});
  scontrol({"show", "hostlist", "n3,n1,n2,m02,m01"});
  scontrol({"show", "hostlistsorted", "n3,n1,n2,m02,m01,n10"});
  scontrol({"show", "hostlist", path});
  scontrol({"show", "hostlist", "/nonexistent/hosts"});
  scontrol({"show", "hostnames", "n[1-"});
  scontrol({"frobnicate"});
  scontrol({"hold"});
  scontrol({"write", "bogus"});
  scontrol({"show", "job", "-x"});
  auto sacct = [&](std::vector<std::string> args) { golden += run(run_sacct, "sacct", args); };
  sacct({"-o", "JobID,Bogus%10"});
  sacct({"-o", "AllocGRES"});
  sacct({"-s", "XX"});
  sacct({"-s", "CG"});
  sacct({"-l", "-o", "JobID"});
  sacct({"-S", "2026-11-22T10:00:00", "-E", "2026-11-22T09:00:00"});
  sacct({"-o", "ReqGRES"});
  std::filesystem::remove(path);
  for (size_t at; (at = golden.find(path)) != std::string::npos;) golden.replace(at, path.size(), "HOSTS_FILE");
  cairn::test::check_golden("front_end_refusals.txt", golden);
}
