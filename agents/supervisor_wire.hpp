// The request cairnd sends to `cairn-stepd --server` (agents/stepd_server.cpp) for each batch
// job, on a Unix stream socket: start a supervisor with this command line and environment, in
// that work dir, with these descriptors. The server forks it (the agent's child, CLONE_PARENT)
// instead of cairnd exec'ing cairn-stepd per job (docs/decisions.md, "CPU per job: a
// supervisor server"). Header-only: both programs use it, and cairn-stepd links little.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace cairn::supervisor_wire {

constexpr uint32_t kMagic = 0x43535631;  // "CSV1"
constexpr size_t kMaxBody = 64u << 20;
// The descriptors, in this order; stdin is sent only when the job has an input file.
enum Descriptor { work_dir, output, error, record, status, input, descriptor_count };

struct Header {
  uint32_t magic = kMagic;
  uint32_t body_length = 0;
  uint32_t argc = 0;
  uint32_t envc = 0;
  uint32_t fd_count = 0;
};

// argv then env, each string NUL-terminated.
inline std::string encode_body(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  std::string body;
  for (const auto* list : {&argv, &env})
    for (const std::string& text : *list) body.append(text.c_str(), text.size() + 1);
  return body;
}

// Sends header, body and descriptors; false on any error (errno set).
inline bool send_request(int socket_fd, const std::vector<std::string>& argv, const std::vector<std::string>& env,
                         const std::vector<int>& fds) {
  std::string body = encode_body(argv, env);
  Header header{kMagic, static_cast<uint32_t>(body.size()), static_cast<uint32_t>(argv.size()),
                static_cast<uint32_t>(env.size()), static_cast<uint32_t>(fds.size())};
  iovec parts[2] = {{&header, sizeof header}, {body.data(), body.size()}};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * descriptor_count)] = {};
  msghdr message{};
  message.msg_iov = parts;
  message.msg_iovlen = 2;
  message.msg_control = control;
  message.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
  cmsghdr* rights = CMSG_FIRSTHDR(&message);
  rights->cmsg_level = SOL_SOCKET;
  rights->cmsg_type = SCM_RIGHTS;
  rights->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
  std::memcpy(CMSG_DATA(rights), fds.data(), sizeof(int) * fds.size());
  size_t total = sizeof header + body.size(), sent = 0;
  while (sent < total) {
    ssize_t length = ::sendmsg(socket_fd, &message, MSG_NOSIGNAL);
    if (length < 0 && errno == EINTR) continue;
    if (length <= 0) return false;
    sent += static_cast<size_t>(length);
    message.msg_control = nullptr;  // the descriptors go with the first bytes only
    message.msg_controllen = 0;
    size_t skip = static_cast<size_t>(length);
    while (message.msg_iovlen > 0 && skip >= message.msg_iov[0].iov_len) {
      skip -= message.msg_iov[0].iov_len;
      ++message.msg_iov;
      --message.msg_iovlen;
    }
    if (message.msg_iovlen > 0) {
      message.msg_iov[0].iov_base = static_cast<char*>(message.msg_iov[0].iov_base) + skip;
      message.msg_iov[0].iov_len -= skip;
    }
  }
  return true;
}

struct Request {
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::vector<int> fds;  // owned by the receiver
};

inline bool read_all(int fd, char* into, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t length = ::read(fd, into + done, size - done);
    if (length < 0 && errno == EINTR) continue;
    if (length <= 0) return false;
    done += static_cast<size_t>(length);
  }
  return true;
}

// False at the end of the stream or on a malformed request (the received descriptors are closed).
inline bool receive_request(int socket_fd, Request& request) {
  request = {};
  Header header;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * descriptor_count)] = {};
  iovec part{&header, sizeof header};
  msghdr message{};
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  ssize_t length;
  do {
    length = ::recvmsg(socket_fd, &message, MSG_CMSG_CLOEXEC);
  } while (length < 0 && errno == EINTR);
  if (length <= 0) return false;
  for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    request.fds.resize(count);
    std::memcpy(request.fds.data(), CMSG_DATA(c), count * sizeof(int));
  }
  auto fail = [&] {
    for (int fd : request.fds) ::close(fd);
    request.fds.clear();
    return false;
  };
  if (length < static_cast<ssize_t>(sizeof header) &&
      !read_all(socket_fd, reinterpret_cast<char*>(&header) + length, sizeof header - static_cast<size_t>(length)))
    return fail();
  if (header.magic != kMagic || header.body_length > kMaxBody || header.fd_count != request.fds.size() ||
      header.fd_count < input || header.fd_count > descriptor_count || header.argc < 2)
    return fail();
  std::string body(header.body_length, '\0');
  if (!read_all(socket_fd, body.data(), body.size())) return fail();
  size_t at = 0;
  for (uint32_t i = 0; i < header.argc + header.envc; ++i) {
    size_t end = body.find('\0', at);
    if (end == std::string::npos) return fail();
    (i < header.argc ? request.argv : request.env).emplace_back(body, at, end - at);
    at = end + 1;
  }
  return true;
}

}  // namespace cairn::supervisor_wire
