#include "cli/scontrol_grammar.hpp"

#include <algorithm>
#include <cctype>

namespace cairn {
namespace {

bool iequal(char a, char b) {
  return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
}

// xstrncasecmp(tag, keyword, n) == 0: the first n characters agree, the end of a string counting as NUL.
bool compare_n(std::string_view tag, std::string_view keyword, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    char a = i < tag.size() ? tag[i] : '\0';
    char b = i < keyword.size() ? keyword[i] : '\0';
    if (!iequal(a, b)) return false;
    if (a == '\0') return true;
  }
  return true;
}

struct Keyword {
  std::string_view name;
  size_t min_length;
};

bool any_matches(std::string_view tag, std::initializer_list<Keyword> keywords) {
  return std::any_of(keywords.begin(), keywords.end(),
                     [&](const Keyword& k) { return slurm_keyword_matches(tag, k.name, k.min_length); });
}

ScontrolCommand refused(std::string error, bool usage = false) {
  ScontrolCommand command;
  command.error = std::move(error);
  command.print_usage = usage;
  return command;
}

ScontrolCommand unsupported(std::string_view what) {
  return refused("scontrol: error: Cairn does not support: " + std::string(what));
}

// _show_it(): the entity as the first word after "show" names it ("jobid", "job=12", "part").
ScontrolCommand parse_show(const std::vector<std::string>& words) {
  const std::string& keyword = words[0];
  if (words.size() < 2) return refused("too few arguments for keyword:" + keyword);
  if (words.size() > 3) return refused("too many arguments for keyword:" + keyword);
  std::string_view tag = words[1];
  ScontrolCommand command;
  command.kind = ScontrolCommand::Kind::show;
  if (auto equals = tag.find('='); equals != std::string_view::npos) {
    command.value = std::string(tag.substr(equals + 1));
    tag = tag.substr(0, equals);
  } else if (words.size() == 3) {
    command.value = words[2];
  }
  // Slurm's order of tests decides what an abbreviation means ("bb" is bbstat, "c" config).
  struct Entity {
    std::initializer_list<Keyword> names;
    std::optional<ScontrolEntity> entity;  // none: Slurm has it, Cairn does not
  };
  const Entity entities[] = {
      {{{"aliases", 1}}, std::nullopt},
      {{{"bbstat", 2}, {"dwstat", 2}}, std::nullopt},
      {{{"burstbuffer", 2}}, ScontrolEntity::burst_buffer},
      {{{"assoc_mgr", 2}, {"cache", 2}}, std::nullopt},
      {{{"config", 1}}, ScontrolEntity::config},
      {{{"daemons", 1}}, ScontrolEntity::daemons},
      {{{"Federations", 1}}, std::nullopt},
      {{{"FrontendName", 1}}, std::nullopt},
      {{{"hostnames", 5}}, ScontrolEntity::hostnames},
      {{{"hostlist", 5}}, ScontrolEntity::hostlist},
      {{{"hostlistsorted", 9}}, ScontrolEntity::hostlist_sorted},
      {{{"jobs", 1}, {"jobid", 1}}, ScontrolEntity::job},
      {{{"licenses", 2}}, ScontrolEntity::licenses},
      {{{"nodes", 1}}, ScontrolEntity::node},
      {{{"partitions", 2}, {"partitionname", 2}}, ScontrolEntity::partition},
      {{{"reservations", 1}, {"reservationname", 1}}, ScontrolEntity::reservation},
      {{{"shards", 2}}, ScontrolEntity::shards},
      {{{"slurmd", 2}}, std::nullopt},
      {{{"steps", 2}}, ScontrolEntity::step},
      {{{"topology", 1}}, std::nullopt},
  };
  for (const auto& entity : entities) {
    if (!any_matches(tag, entity.names)) continue;
    if (!entity.entity) return unsupported("show " + std::string(entity.names.begin()->name));
    command.entity = *entity.entity;
    // Slurm names the first word ("show") here.
    if ((command.entity == ScontrolEntity::daemons || command.entity == ScontrolEntity::shards) && command.value)
      return refused("too many arguments for keyword:" + keyword);
    return command;
  }
  // Slurm's text, its trailing blank included.
  return refused("invalid entity:" + std::string(tag) + " for keyword:" + keyword + " ");
}

ScontrolCommand parse_write(const std::vector<std::string>& words) {
  const std::string& keyword = words[0];
  if (words.size() < 2) return refused("too few arguments for keyword:" + keyword);
  if (slurm_keyword_matches(words[1], "batch_script", 5)) {
    if (words.size() > 4) return refused("too many arguments for keyword:" + keyword);
    // Slurm silently does nothing without a job id; Cairn says why it did nothing.
    if (words.size() < 3) return refused("too few arguments for keyword:" + keyword);
    ScontrolCommand command;
    command.kind = ScontrolCommand::Kind::write_batch_script;
    command.value = words[2];
    if (words.size() == 4) command.file = words[3];
    return command;
  }
  if (slurm_keyword_matches(words[1], "config", 6)) return unsupported("write config");
  return refused("invalid write argument:" + words[1]);
}

}  // namespace

bool slurm_keyword_matches(std::string_view tag, std::string_view keyword, size_t min_length) {
  return compare_n(tag, keyword, std::max(tag.size(), min_length));
}

bool slurm_show_job_id_valid(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '_' || c == '+'; });
}

ScontrolCommand parse_scontrol_command(const std::vector<std::string>& words) {
  if (words.empty()) return refused("", true);
  const std::string& tag = words[0];
  const std::vector<std::string> rest(words.begin() + 1, words.end());
  auto job_verb = [&](std::string canonical) {
    if (rest.empty()) return refused("too few arguments for keyword:" + tag);
    ScontrolCommand command;
    command.kind = ScontrolCommand::Kind::job_verb;
    command.keyword = std::move(canonical);
    command.arguments = rest;
    return command;
  };
  // _process_command()'s tests, in its order; the ones before "requeue" only to
  // keep what each abbreviation means.
  if (any_matches(tag, {{"abort", 5}, {"all", 2}, {"cancel_reboot", 3}, {"completing", 2}, {"cluster", 2}}))
    return unsupported(tag);
  if (slurm_keyword_matches(tag, "create", 2)) {
    if (rest.empty()) return refused("too few arguments for " + tag + " keyword");
    ScontrolCommand command;
    command.kind = ScontrolCommand::Kind::create;
    command.arguments = rest;
    return command;
  }
  if (slurm_keyword_matches(tag, "details", 1) || slurm_keyword_matches(tag, "oneliner", 1))
    return unsupported(tag + " (use the option -d or -o)");
  if (any_matches(tag, {{"errnumstr", 2}, {"errnostr", 2}, {"exit", 2}, {"gethost", 7}, {"hash_file", 15},
                        {"hash", 9}}))
    return unsupported(tag);
  if (slurm_keyword_matches(tag, "help", 2)) return refused("", true);
  if (any_matches(tag, {{"hide", 2}, {"pidinfo", 3}})) return unsupported(tag);
  if (slurm_keyword_matches(tag, "ping", 3)) {
    if (words.size() > 1) return refused("too many arguments for keyword:" + tag);
    ScontrolCommand command;
    command.kind = ScontrolCommand::Kind::ping;
    return command;
  }
  if (any_matches(tag, {{"quiet", 4}, {"quit", 4}, {"reboot_nodes", 3}})) return unsupported(tag);
  if (slurm_keyword_matches(tag, "reconfigure", 3)) {
    // Slurm says so and reconfigures all the same; Cairn does nothing on a malformed command.
    if (words.size() > 2) return refused("too many arguments for keyword:" + tag);
    ScontrolCommand command;
    command.kind = ScontrolCommand::Kind::reconfigure;
    return command;
  }
  if (slurm_keyword_matches(tag, "requeue", 3)) return job_verb("requeue");
  if (compare_n(tag, "requeuehold", 11)) return job_verb("requeuehold");
  // One branch in Slurm; scontrol_hold() then tells a user hold by the word.
  if (compare_n(tag, "holdu", 5) || compare_n(tag, "uhold", 5)) return job_verb("uhold");
  if (compare_n(tag, "hold", 4)) return job_verb("hold");
  if (slurm_keyword_matches(tag, "release", 3)) return job_verb("release");
  if (slurm_keyword_matches(tag, "suspend", 2)) return job_verb("suspend");
  if (slurm_keyword_matches(tag, "resume", 3)) return job_verb("resume");
  if (slurm_keyword_matches(tag, "top", 3)) {
    ScontrolCommand command;
    command.kind = ScontrolCommand::Kind::top;
    command.arguments = rest;
    return command;
  }
  if (any_matches(tag, {{"token", 3}, {"wait_job", 2}, {"setdebugflags", 9}, {"fsdampeningfactor", 3},
                        {"fairsharedampeningfactor", 3}}))
    return unsupported(tag);
  if (slurm_keyword_matches(tag, "setdebug", 2)) {
    if (words.size() > 2) return refused("too many arguments for keyword:" + tag);
    if (words.size() < 2) return refused("too few arguments for keyword:" + tag);
    ScontrolCommand command;
    command.kind = ScontrolCommand::Kind::setdebug;
    command.value = words[1];
    return command;
  }
  if (slurm_keyword_matches(tag, "schedloglevel", 3)) return unsupported(tag);
  if (slurm_keyword_matches(tag, "show", 3)) return parse_show(words);
  if (slurm_keyword_matches(tag, "write", 5)) return parse_write(words);
  if (any_matches(tag, {{"takeover", 8}, {"shutdown", 8}})) return unsupported(tag);
  if (slurm_keyword_matches(tag, "update", 1)) {
    ScontrolCommand command;
    command.kind = ScontrolCommand::Kind::update;
    command.arguments = rest;
    return command;
  }
  if (slurm_keyword_matches(tag, "delete", 1)) {
    ScontrolCommand command;
    command.kind = ScontrolCommand::Kind::remove;
    command.arguments = rest;
    return command;
  }
  if (slurm_keyword_matches(tag, "verbose", 4)) return unsupported(tag);
  if (slurm_keyword_matches(tag, "version", 4)) {
    if (words.size() > 1) return refused("too many arguments for " + tag + " keyword");
    ScontrolCommand command;
    command.kind = ScontrolCommand::Kind::version;
    return command;
  }
  if (slurm_keyword_matches(tag, "listpids", 1)) {
    if (words.size() > 3) return refused("too many arguments for keyword:" + tag);
    ScontrolCommand command;
    command.kind = ScontrolCommand::Kind::listpids;
    if (words.size() > 1) command.value = words[1];
    if (words.size() > 2) command.node = words[2];
    return command;
  }
  if (any_matches(tag, {{"getent", 6}, {"notify", 1}, {"callerid", 3}})) return unsupported(tag);
  return refused("invalid keyword: " + tag);
}

}  // namespace cairn
