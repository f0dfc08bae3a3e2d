// Debian's nginx run unprivileged on 127.0.0.1 for the C++ tests, as tests/http/nginx_server.py
// does for the Python ones: a temporary config (pid, logs and temp paths in a temporary folder),
// a free port, `daemon off` in a child process killed when the object dies.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace zarrdirect::test {

class NginxServer {
 public:
  // The nginx executable, or nullopt when it is not installed (tests then skip, saying so).
  static std::optional<std::string> find();

  // Serves `root`; throws std::runtime_error when nginx does not start within 10 s.
  explicit NginxServer(const std::filesystem::path& root);
  ~NginxServer();
  NginxServer(const NginxServer&) = delete;
  NginxServer& operator=(const NginxServer&) = delete;

  // "http://127.0.0.1:PORT"
  const std::string& url() const { return url_; }
  // The request lines of the access log so far ("GET /a/zarr.json HTTP/1.1").
  std::vector<std::string> requests() const;

 private:
  std::filesystem::path tmp_;
  std::string url_;
  pid_t pid_ = -1;
};

}  // namespace zarrdirect::test
